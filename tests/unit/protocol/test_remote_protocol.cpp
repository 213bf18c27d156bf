#include "protocol/remote_protocol.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace nvfresh;

namespace {

ActionSpec action()
{
  ActionSpec spec;
  spec.salt = "nvfresh-cache-1/result";
  spec.arguments = {"/usr/local/cuda/bin/nvcc", "-c", "\x02SOURCE\x03/k.cu"};
  spec.environment = {{"NVFRESH_RESULT_KEY", "00ff"}, {"NVCC_APPEND_FLAGS", "-lineinfo"}};
  spec.working_directory = "build";
  spec.output_paths = {"k.o", "nvfresh.entry"};
  spec.input_files = {{"src/k.cu", "/ck/k.cu"},
                      {"abs/usr/include/stdio.h", "/usr/include/stdio.h"}};
  spec.input_blobs = {{".nvfresh/note", "seen"}};
  return spec;
}

HelperRequest base(HelperVerb verb)
{
  HelperRequest request;
  request.remote = "grpcs://cache.example:443";
  request.instance = "main";
  request.call_deadline_ms = 750;
  request.connect_deadline_ms = 250;
  request.digest_cache = "/home/u/.cache/nvfresh/sha256";
  request.verb = verb;
  return request;
}

// Through the text the request file holds, as the helper reads it.
HelperRequest through_file(const HelperRequest& request)
{
  return parse_helper_request(to_json(request).dump());
}

std::string error_of(const nlohmann::json& json)
{
  try {
    helper_request_from_json(json);
  } catch (const ProtocolError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("remote protocol: an Action survives its JSON, every member")
{
  const ActionSpec spec = action();
  CHECK(action_spec_from_json(nlohmann::json::parse(to_json(spec).dump())) == spec);
  ActionSpec bare;  // the members that may be left out come back empty
  bare.salt = "s";
  bare.arguments = {"ptxas"};
  bare.output_paths = {"nvfresh.step"};
  CHECK(action_spec_from_json(
          {{"salt", "s"}, {"arguments", {"ptxas"}}, {"output_paths", {"nvfresh.step"}}}) == bare);
}

TEST_CASE("remote protocol: a get request survives the request file, with its version")
{
  HelperRequest request = base(HelperVerb::get);
  request.get = action();
  request.out_dir = "/tmp/nvfresh-remote-x";
  request.trusted_keys = {"/keys/ci.pub", "/keys/ci-next.pub"};
  CHECK(to_json(request).at("protocol_version") == k_helper_protocol_version);
  CHECK(through_file(request) == request);
}

TEST_CASE("remote protocol: a put request survives the request file, its uploads in order")
{
  HelperRequest request = base(HelperVerb::put);
  ActionSpec manifest = action();
  manifest.salt = "nvfresh-cache-1/manifest";
  request.put = {
    {action(), {{"k.o", "/t/object"}, {"nvfresh.entry", "/t/entry"}}, "/t/out", "/t/err"},
    {manifest, {{"nvfresh.manifest", "/t/manifest"}}, "/t/empty", "/t/empty"}};
  const HelperRequest back = through_file(request);
  CHECK(back == request);
  REQUIRE(back.put.size() == 2);
  CHECK(back.put[1].action.salt == "nvfresh-cache-1/manifest");
}

TEST_CASE("remote protocol: a request of another version is refused before anything else")
{
  HelperRequest request = base(HelperVerb::get);
  request.get = action();
  request.out_dir = "/tmp/o";
  nlohmann::json newer = to_json(request);
  newer["protocol_version"] = k_helper_protocol_version + 1;
  newer.erase("remote");  // another version may have other members: the version is said first
  CHECK_THROWS_AS(helper_request_from_json(newer), ProtocolVersionError);
  CHECK_THROWS_WITH(
    helper_request_from_json(newer),
    Catch::Contains(fmt::format("protocol version {}", k_helper_protocol_version + 1)) &&
      Catch::Contains(fmt::format("speaks version {}", k_helper_protocol_version)));
  nlohmann::json unversioned = to_json(request);  // an nvfresh from before the version
  unversioned.erase("protocol_version");
  CHECK_THROWS_AS(helper_request_from_json(unversioned), ProtocolVersionError);
  CHECK_THROWS_WITH(helper_request_from_json(unversioned), Catch::Contains("protocol version 0"));
  CHECK_NOTHROW(helper_request_from_json(to_json(request)));
}

TEST_CASE("remote protocol: a missing or mistyped member is named in the error")
{
  HelperRequest get = base(HelperVerb::get);
  get.get = action();
  get.out_dir = "/tmp/o";
  nlohmann::json json = to_json(get);
  json.erase("remote");
  CHECK(error_of(json) == "request.remote is missing");
  json = to_json(get);
  json["get"].erase("salt");
  CHECK(error_of(json) == "request.get.salt is missing");
  json = to_json(get);
  json["get"]["arguments"] = "nvcc -c";
  CHECK(error_of(json) == "request.get.arguments is not an array of strings");
  json = to_json(get);
  json["call_deadline_ms"] = "soon";
  CHECK(error_of(json) == "request.call_deadline_ms is not an integer");
  json = to_json(get);
  json["trusted_keys"] = "/keys/ci.pub";
  CHECK(error_of(json) == "request.trusted_keys is not an array of strings");
  json = to_json(get);
  json.erase("trusted_keys");  // none: every result, as before signatures
  CHECK(helper_request_from_json(json).trusted_keys.empty());

  HelperRequest put = base(HelperVerb::put);
  put.put = {{action(), {}, "/t/out", "/t/err"}, {action(), {}, "/t/out", "/t/err"}};
  json = to_json(put);
  json["put"][1].erase("stdout");
  CHECK(error_of(json) == "request.put[1].stdout is missing");
  json = to_json(put);
  json["get"] = to_json(action());
  CHECK_THROWS_WITH(helper_request_from_json(json), Catch::Contains("not exactly one of"));
  CHECK_THROWS_AS(parse_helper_request("{\"protocol_version\": 1,"), ProtocolError);
  CHECK_THROWS_WITH(parse_helper_request("[]"), "the request is not a JSON object");
}

TEST_CASE("remote protocol: the helper's answers survive their JSON")
{
  HelperAnswer fetched{
    {{"k.o", "/o/output-0"}, {"nvfresh.entry", "/o/output-1"}}, "/o/stdout", "/o/stderr", 4242};
  CHECK(parse_helper_answer(to_json(fetched, HelperVerb::get).dump(), HelperVerb::get) == fetched);
  HelperAnswer sent;
  sent.bytes = 77;
  CHECK(to_json(sent, HelperVerb::put) == nlohmann::json{{"bytes", 77}});
  CHECK(parse_helper_answer(to_json(sent, HelperVerb::put).dump(), HelperVerb::put) == sent);
  CHECK_THROWS_WITH(parse_helper_answer("{\"bytes\": 1}", HelperVerb::get),
                    "answer.outputs is missing");
}

TEST_CASE("remote protocol: the verbs by name")
{
  CHECK(parse_verb("get") == HelperVerb::get);
  CHECK(parse_verb("put") == HelperVerb::put);
  CHECK(!parse_verb("GET"));
  CHECK(verb_name(HelperVerb::put) == "put");
}

TEST_CASE("remote protocol: an execute request survives the request file, platform and all")
{
  HelperRequest request = base(HelperVerb::execute);
  request.get = action();
  request.get.platform = {{"OSFamily", "linux"}, {"container-image", "cuda-13.0"}};
  request.get.do_not_cache = true;
  request.out_dir = "/tmp/nvfresh-exec-x";
  request.execute_deadline_ms = 30000;
  request.toolkit = {"/usr/local/cuda-13.0/nvvm/bin/cicc", "/usr/local/cuda-13.0/bin/ptxas"};
  request.toolkit_sums = "nvfresh-step/toolkit.sha256";
  CHECK(through_file(request) == request);
  CHECK(to_json(request).contains("execute"));
  // The cache's Actions have neither member, and their JSON does not spell them.
  CHECK_FALSE(to_json(action()).contains("platform"));
  CHECK_FALSE(to_json(action()).contains("do_not_cache"));
  nlohmann::json missing = to_json(request);
  missing.erase("toolkit");
  CHECK_THROWS_WITH(helper_request_from_json(missing), "request.toolkit is missing");
  nlohmann::json two = to_json(request);
  two["get"] = to_json(action());
  CHECK_THROWS_AS(helper_request_from_json(two), ProtocolError);
}

TEST_CASE("remote protocol: an execute answer carries the action's exit code and bytes sent")
{
  HelperAnswer ran{{{"tmp/k.cubin", "/o/output-0"}}, "/o/stdout", "/o/stderr", 900, 213, 5000};
  CHECK(parse_helper_answer(to_json(ran, HelperVerb::execute).dump(), HelperVerb::execute) == ran);
  CHECK_THROWS_WITH(parse_helper_answer(to_json(ran, HelperVerb::get).dump(), HelperVerb::execute),
                    "answer.exit_code is missing");
  CHECK(parse_verb("execute") == HelperVerb::execute);
  CHECK(verb_name(HelperVerb::execute) == "execute");
}

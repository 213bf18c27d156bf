// nvfresh-remote: the remote cache's REAPI client, a helper the launcher runs only when a remote is
// set (NVFRESH_REMOTE), so that the launcher links no gRPC (ARCHITECTURE.md, "Remote cache").
//
//   nvfresh-remote get <request.json>   looks one Action up; on a hit, fetches its outputs
//   nvfresh-remote put <request.json>   uploads Actions with their results
//
// request := {"remote": "grpc://host:port", "instance": "", "call_deadline_ms": 5000,
//             "connect_deadline_ms": 1000, "digest_cache": file,
//             "tls_ca": file, "tls_client_cert": file, "tls_client_key": file,   ("" none)
//             "get": spec, "out_dir": dir}                                         (get)
//          | {..., "put": [{"action": spec, "outputs": {path: file},
//                           "stdout": file, "stderr": file}]}                      (put)
// spec is reapi/action_builder.hpp's ActionSpec as JSON. A hit writes <out_dir>/result.json:
//   {"outputs": {path: file}, "stdout": file, "stderr": file, "bytes": n}
// Exit status: 0 a hit (get) or uploaded (put), 1 a miss (no result, or one of its blobs is gone),
// 2 an error, said in one line on stderr (gRPC's own log is kept quiet).
// The bearer token, a secret, is never in the request (a file): it comes in the environment, as
// NVFRESH_REMOTE_TOKEN (cache/remote_credentials.hpp), and is sent on every call.
#include "reapi/action_builder.hpp"
#include "reapi/remote_client.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace {

using namespace nvfresh::reapi;

constexpr int k_hit = 0;
constexpr int k_miss = 1;
constexpr int k_error = 2;

std::string read_whole(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(fmt::format("cannot read {}", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_whole(const std::string& path, const std::string& bytes)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) {
    throw std::runtime_error(fmt::format("cannot write {}", path));
  }
}

// The bytes of the request's file `key`, "" when it names none.
std::string pem_file(const nlohmann::json& request, const char* key)
{
  const std::string file = request.value(key, std::string());
  return file.empty() ? std::string() : read_whole(file);
}

RemoteClient connect(const nlohmann::json& request)
{
  ClientOptions options;
  options.instance = request.value("instance", std::string());
  options.call_deadline = std::chrono::milliseconds(request.value("call_deadline_ms", 5000));
  options.connect_deadline = std::chrono::milliseconds(request.value("connect_deadline_ms", 1000));
  const char* token = std::getenv("NVFRESH_REMOTE_TOKEN");
  options.bearer_token = token == nullptr ? "" : token;
  options.tls_root_certs = pem_file(request, "tls_ca");
  options.tls_client_cert = pem_file(request, "tls_client_cert");
  options.tls_client_key = pem_file(request, "tls_client_key");
  return RemoteClient(parse_endpoint(request.at("remote").get<std::string>()), options);
}

std::optional<DigestCache> digest_cache(const nlohmann::json& request)
{
  const std::string file = request.value("digest_cache", std::string());
  return file.empty() ? std::nullopt : std::optional<DigestCache>(std::in_place, file);
}

int get(const nlohmann::json& request)
{
  auto digests = digest_cache(request);
  const BuiltAction action =
    build_action(parse_action_spec(request.at("get")), digests ? &*digests : nullptr);
  if (digests) {
    digests->save();
  }
  const std::string out_dir = request.at("out_dir").get<std::string>();
  RemoteClient client = connect(request);
  auto result = client.get_action_result(action.action_digest);
  if (!result) {
    return k_miss;
  }
  if (result->exit_code != 0) {
    return k_miss;  // nvfresh never stores a failed compile; another client's is not served
  }
  std::vector<BlobDigest> wanted{result->stdout_digest, result->stderr_digest};
  for (const auto& output : result->outputs) {
    wanted.push_back(output.digest);
  }
  auto blobs = client.read_blobs(wanted);
  if (!blobs) {
    return k_miss;
  }
  nlohmann::json answer;
  std::int64_t bytes = 0;
  auto place = [&](const BlobDigest& digest, const std::string& name) {
    std::string file = out_dir + "/" + name;
    write_whole(file, blobs->at(digest));
    bytes += digest.size;
    return file;
  };
  answer["stdout"] = place(result->stdout_digest, "stdout");
  answer["stderr"] = place(result->stderr_digest, "stderr");
  answer["outputs"] = nlohmann::json::object();
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    answer["outputs"][result->outputs[i].path] =
      place(result->outputs[i].digest, fmt::format("output-{}", i));
  }
  answer["bytes"] = bytes;
  write_whole(out_dir + "/result.json", answer.dump());
  return k_hit;
}

int put(const nlohmann::json& request)
{
  struct Upload {
    BuiltAction action;
    ActionResultBlobs result;
  };
  std::vector<Upload> uploads;
  std::map<BlobDigest, std::string> blobs;
  auto digests = digest_cache(request);
  for (const auto& item : request.at("put")) {
    Upload upload{build_action(parse_action_spec(item.at("action")), digests ? &*digests : nullptr),
                  {}};
    blobs.insert(upload.action.blobs.begin(), upload.action.blobs.end());
    auto add_file = [&](const std::string& file) {
      std::string bytes = read_whole(file);
      BlobDigest digest = digest_of(bytes);
      blobs.emplace(digest, std::move(bytes));
      return digest;
    };
    for (const auto& [path, file] : item.at("outputs").items()) {
      upload.result.outputs.push_back({path, add_file(file.get<std::string>())});
    }
    upload.result.stdout_digest = add_file(item.at("stdout").get<std::string>());
    upload.result.stderr_digest = add_file(item.at("stderr").get<std::string>());
    uploads.push_back(std::move(upload));
  }
  if (digests) {
    digests->save();
  }
  RemoteClient client = connect(request);
  const std::int64_t sent = client.write_blobs(blobs);
  for (const auto& upload : uploads) {  // in order: a result before the manifest that names it
    client.update_action_result(upload.action.action_digest, upload.result);
  }
  std::cout << nlohmann::json{{"bytes", sent}}.dump() << '\n';
  return k_hit;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 3 || (std::string(argv[1]) != "get" && std::string(argv[1]) != "put")) {
    std::cerr << "usage: nvfresh-remote get|put <request.json> (run by nvfresh when NVFRESH_REMOTE "
                 "is set)\n";
    return k_error;
  }
  quiet_grpc_log();
  try {
    const nlohmann::json request = nlohmann::json::parse(read_whole(argv[2]));
    return std::string(argv[1]) == "get" ? get(request) : put(request);
  } catch (const std::exception& error) {
    std::cerr << "nvfresh-remote: " << error.what() << '\n';
    return k_error;
  }
}

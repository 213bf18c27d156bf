#include "protocol/remote_protocol.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

std::string member(std::string_view where, std::string_view name)
{
  return fmt::format("{}.{}", where, name);
}

const nlohmann::json& required(const nlohmann::json& json, std::string_view where,
                               std::string_view name)
{
  if (!json.is_object()) {
    throw ProtocolError(fmt::format("{} is not a JSON object", where));
  }
  auto found = json.find(name);
  if (found == json.end()) {
    throw ProtocolError(fmt::format("{} is missing", member(where, name)));
  }
  return *found;
}

template <typename T>
T as(const nlohmann::json& value, const std::string& what, std::string_view type)
{
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ProtocolError(fmt::format("{} is not {}", what, type));
  }
}

template <typename T>
T required_as(const nlohmann::json& json, std::string_view where, std::string_view name,
              std::string_view type)
{
  return as<T>(required(json, where, name), member(where, name), type);
}

// A member that may be left out (then `fallback`), but not be of another type.
template <typename T>
T optional_as(const nlohmann::json& json, std::string_view where, std::string_view name,
              std::string_view type, T fallback)
{
  auto found = json.find(name);
  return found == json.end() ? fallback : as<T>(*found, member(where, name), type);
}

using StringMap = std::map<std::string, std::string>;
using StringList = std::vector<std::string>;

constexpr std::string_view k_text = "a string";
constexpr std::string_view k_number = "an integer";
constexpr std::string_view k_map = "an object of strings";
constexpr std::string_view k_list = "an array of strings";

HelperUpload upload_from_json(const nlohmann::json& json, std::string_view where)
{
  return {action_spec_from_json(required(json, where, "action"), member(where, "action")),
          required_as<StringMap>(json, where, "outputs", k_map),
          required_as<std::string>(json, where, "stdout", k_text),
          required_as<std::string>(json, where, "stderr", k_text)};
}

nlohmann::json to_json(const HelperUpload& upload)
{
  return {{"action", to_json(upload.action)},
          {"outputs", upload.outputs},
          {"stdout", upload.stdout_file},
          {"stderr", upload.stderr_file}};
}

void check_version(const nlohmann::json& json)
{
  if (!json.is_object()) {
    throw ProtocolError("the request is not a JSON object");
  }
  const int version = optional_as<int>(json, "request", "protocol_version", k_number, 0);
  if (version != k_helper_protocol_version) {
    throw ProtocolVersionError(fmt::format(
      "a request of protocol version {}, this nvfresh-remote speaks version {}: install nvfresh "
      "and nvfresh-remote from the same build",
      version, k_helper_protocol_version));
  }
}

void read_verb_members(const nlohmann::json& json, HelperRequest& request)
{
  const bool has_get = json.contains("get");
  const bool has_put = json.contains("put");
  const bool has_execute = json.contains("execute");
  if (int{has_get} + int{has_put} + int{has_execute} != 1) {
    throw ProtocolError(
      "request has not exactly one of request.get, request.put and request.execute");
  }
  if (has_execute) {
    request.verb = HelperVerb::execute;
    request.get = action_spec_from_json(json.at("execute"), "request.execute");
    request.out_dir = required_as<std::string>(json, "request", "out_dir", k_text);
    request.execute_deadline_ms =
      required_as<int>(json, "request", "execute_deadline_ms", k_number);
    request.toolkit = required_as<StringList>(json, "request", "toolkit", k_list);
    request.toolkit_sums = required_as<std::string>(json, "request", "toolkit_sums", k_text);
    return;
  }
  if (has_get) {
    request.verb = HelperVerb::get;
    request.get = action_spec_from_json(json.at("get"), "request.get");
    request.out_dir = required_as<std::string>(json, "request", "out_dir", k_text);
    return;
  }
  request.verb = HelperVerb::put;
  const nlohmann::json& uploads = json.at("put");
  if (!uploads.is_array()) {
    throw ProtocolError("request.put is not an array");
  }
  for (size_t i = 0; i < uploads.size(); ++i) {
    request.put.push_back(upload_from_json(uploads[i], fmt::format("request.put[{}]", i)));
  }
}

nlohmann::json parse_json(std::string_view text, std::string_view what)
{
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw ProtocolError(fmt::format("the {} is not JSON: {}", what, error.what()));
  }
}

}  // namespace

nlohmann::json to_json(const ActionSpec& spec)
{
  nlohmann::json json = {{"salt", spec.salt},
                         {"arguments", spec.arguments},
                         {"environment", spec.environment},
                         {"working_directory", spec.working_directory},
                         {"output_paths", spec.output_paths},
                         {"input_files", spec.input_files},
                         {"input_blobs", spec.input_blobs}};
  if (!spec.platform.empty()) {
    json["platform"] = spec.platform;
  }
  if (spec.do_not_cache) {
    json["do_not_cache"] = true;
  }
  return json;
}

ActionSpec action_spec_from_json(const nlohmann::json& json, std::string_view where)
{
  ActionSpec spec;
  spec.salt = required_as<std::string>(json, where, "salt", k_text);
  spec.arguments = required_as<StringList>(json, where, "arguments", k_list);
  spec.environment = optional_as<StringMap>(json, where, "environment", k_map, {});
  spec.working_directory =
    optional_as<std::string>(json, where, "working_directory", k_text, std::string());
  spec.output_paths = required_as<StringList>(json, where, "output_paths", k_list);
  spec.input_files = optional_as<StringMap>(json, where, "input_files", k_map, {});
  spec.input_blobs = optional_as<StringMap>(json, where, "input_blobs", k_map, {});
  spec.platform = optional_as<StringMap>(json, where, "platform", k_map, {});
  spec.do_not_cache = optional_as<bool>(json, where, "do_not_cache", "a boolean", false);
  return spec;
}

std::string_view verb_name(HelperVerb verb)
{
  switch (verb) {
  case HelperVerb::get: return "get";
  case HelperVerb::put: return "put";
  case HelperVerb::execute: return "execute";
  }
  return "get";
}

std::optional<HelperVerb> parse_verb(std::string_view name)
{
  if (name == "get") {
    return HelperVerb::get;
  }
  if (name == "put") {
    return HelperVerb::put;
  }
  if (name == "execute") {
    return HelperVerb::execute;
  }
  return std::nullopt;
}

nlohmann::json to_json(const HelperRequest& request)
{
  nlohmann::json json = {{"protocol_version", request.protocol_version},
                         {"remote", request.remote},
                         {"instance", request.instance},
                         {"call_deadline_ms", request.call_deadline_ms},
                         {"connect_deadline_ms", request.connect_deadline_ms},
                         {"digest_cache", request.digest_cache},
                         {"tls_ca", request.tls_ca},
                         {"tls_client_cert", request.tls_client_cert},
                         {"tls_client_key", request.tls_client_key},
                         {"trusted_keys", request.trusted_keys},
                         {"budget_deadline_ns", request.budget_deadline_ns}};
  if (request.verb == HelperVerb::get) {
    json["get"] = to_json(request.get);
    json["out_dir"] = request.out_dir;
  } else if (request.verb == HelperVerb::execute) {
    json["execute"] = to_json(request.get);
    json["out_dir"] = request.out_dir;
    json["execute_deadline_ms"] = request.execute_deadline_ms;
    json["toolkit"] = request.toolkit;
    json["toolkit_sums"] = request.toolkit_sums;
  } else {
    json["put"] = nlohmann::json::array();
    for (const HelperUpload& upload : request.put) {
      json["put"].push_back(to_json(upload));
    }
  }
  return json;
}

HelperRequest helper_request_from_json(const nlohmann::json& json)
{
  check_version(json);
  HelperRequest request;
  request.remote = required_as<std::string>(json, "request", "remote", k_text);
  request.instance = optional_as<std::string>(json, "request", "instance", k_text, {});
  request.call_deadline_ms =
    optional_as<int>(json, "request", "call_deadline_ms", k_number, request.call_deadline_ms);
  request.connect_deadline_ms =
    optional_as<int>(json, "request", "connect_deadline_ms", k_number, request.connect_deadline_ms);
  request.digest_cache = optional_as<std::string>(json, "request", "digest_cache", k_text, {});
  request.tls_ca = optional_as<std::string>(json, "request", "tls_ca", k_text, {});
  request.tls_client_cert =
    optional_as<std::string>(json, "request", "tls_client_cert", k_text, {});
  request.tls_client_key = optional_as<std::string>(json, "request", "tls_client_key", k_text, {});
  request.trusted_keys = optional_as<StringList>(json, "request", "trusted_keys", k_list, {});
  request.budget_deadline_ns =
    optional_as<std::int64_t>(json, "request", "budget_deadline_ns", k_number, 0);
  read_verb_members(json, request);
  return request;
}

HelperRequest parse_helper_request(std::string_view text)
{
  return helper_request_from_json(parse_json(text, "request"));
}

nlohmann::json to_json(const HelperAnswer& answer, HelperVerb verb)
{
  nlohmann::json json = {{"bytes", answer.bytes}};
  if (verb != HelperVerb::put) {
    json["outputs"] = answer.outputs;
    json["stdout"] = answer.stdout_file;
    json["stderr"] = answer.stderr_file;
  }
  if (verb == HelperVerb::execute) {
    json["exit_code"] = answer.exit_code;
    json["bytes_sent"] = answer.bytes_sent;
  }
  return json;
}

HelperAnswer helper_answer_from_json(const nlohmann::json& json, HelperVerb verb)
{
  HelperAnswer answer;
  answer.bytes = required_as<std::int64_t>(json, "answer", "bytes", k_number);
  if (verb != HelperVerb::put) {
    answer.outputs = required_as<StringMap>(json, "answer", "outputs", k_map);
    answer.stdout_file = required_as<std::string>(json, "answer", "stdout", k_text);
    answer.stderr_file = required_as<std::string>(json, "answer", "stderr", k_text);
  }
  if (verb == HelperVerb::execute) {
    answer.exit_code = required_as<int>(json, "answer", "exit_code", k_number);
    answer.bytes_sent = required_as<std::int64_t>(json, "answer", "bytes_sent", k_number);
  }
  return answer;
}

HelperAnswer parse_helper_answer(std::string_view text, HelperVerb verb)
{
  return helper_answer_from_json(parse_json(text, "answer"), verb);
}

}  // namespace nvfresh

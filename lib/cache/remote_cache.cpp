#include "cache/remote_cache.hpp"

#include "cache/object_cache.hpp"
#include "record/signature.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

// tree_roots.cpp's placeholders of the roots in key paths.
constexpr std::string_view k_build_prefix = "\x02"
                                            "BUILD\x03";
constexpr std::string_view k_source_prefix = "\x02"
                                             "SOURCE\x03";
constexpr int k_helper_miss = 1;
constexpr double k_helper_limit_seconds = 120;  // beyond every call's own deadline
constexpr std::string_view k_manifest_output = "nvfresh.manifest";
constexpr std::string_view k_entry_output = "nvfresh.entry";
constexpr std::string_view k_step_output = "nvfresh.step";

std::string under(std::string_view root, std::string_view rest)
{
  std::string name(root);
  if (!rest.empty()) {
    name += '/';
    name += rest;
  }
  return name;
}

std::string helper_path()
{
  std::error_code error;
  const fs::path exe_dir = fs::canonical("/proc/self/exe", error).parent_path();
  return error ? std::string() : (exe_dir / "nvfresh-remote").string();
}

nlohmann::json common_environment(const CompileIdentity& identity, const PathMap& map)
{
  nlohmann::json environment = nlohmann::json::object();
  for (const auto& [name, value] : identity.signature_env) {
    if (name != k_path_variable) {  // judged by what it resolves, as locally
      environment[name] = map.text_to_key(value);
    }
  }
  return environment;
}

nlohmann::json common_arguments(const CompileIdentity& identity, const PathMap& map)
{
  nlohmann::json arguments = nlohmann::json::array({identity.compiler});
  for (const auto& arg : identity.signature_args) {
    arguments.push_back(map.text_to_key(arg));
  }
  return arguments;
}

std::string read_output(const nlohmann::json& result, std::string_view path)
{
  const auto& outputs = result.at("outputs");
  auto found = outputs.find(std::string(path));
  if (found == outputs.end()) {
    throw RemoteFailure(fmt::format("the remote result has no output {}", path));
  }
  auto bytes = try_read_file(found->get<std::string>(), 1ULL << 33);
  if (!bytes) {
    throw RemoteFailure(fmt::format("cannot read the fetched {}", path));
  }
  return *bytes;
}

}  // namespace

std::optional<RemoteSettings> remote_settings(const Config& config)
{
  if (config.remote.empty()) {
    return std::nullopt;
  }
  RemoteSettings settings;
  settings.url = url_without_userinfo(config.remote);
  settings.credentials = remote_credentials(config, &settings.refusal);
  settings.instance = config.remote_instance;
  settings.read_only = is_true(config.remote_read_only);
  settings.helper = helper_path();
  return settings;
}

std::string input_root_name(const std::string& key_path)
{
  for (const auto& [prefix, root] :
       {std::pair{k_source_prefix, "src"}, std::pair{k_build_prefix, "build"}}) {
    if (key_path == prefix) {
      return root;
    }
    if (key_path.size() > prefix.size() && key_path.compare(0, prefix.size(), prefix) == 0 &&
        key_path[prefix.size()] == '/') {
      const std::string rest =
        fs::path(key_path.substr(prefix.size() + 1)).lexically_normal().string();
      return under(root, rest == "." ? "" : rest);
    }
  }
  std::string normal = fs::path(key_path).lexically_normal().string();
  if (!normal.empty() && normal.front() == '/') {
    return under("abs", normal.substr(normal.find_first_not_of('/') == std::string::npos
                                        ? normal.size()
                                        : normal.find_first_not_of('/')));
  }
  return under("rel", normal);
}

CacheEntry entry_for_readers(CacheEntry entry)
{
  entry.origin_tree.clear();
  entry.origin_cwd.clear();
  entry.origin_object.clear();
  entry.origin_command.clear();
  entry.origin_env.clear();
  return entry;
}

std::string object_output_path(const CompileIdentity& identity, const std::string& object,
                               const PathMap& map)
{
  const fs::path cwd = input_root_name(map.to_key(identity.working_dir));
  const fs::path out = input_root_name(map.to_key(object));
  const std::string relative = out.lexically_relative(cwd).string();
  return relative.empty() || relative == "." ? std::string("nvfresh.object") : relative;
}

nlohmann::json manifest_action(const Digest& manifest_key, const CompileIdentity& identity,
                               const PathMap& map, std::string_view key_version)
{
  nlohmann::json environment = common_environment(identity, map);
  environment["NVFRESH_MANIFEST_KEY"] = manifest_key.to_hex();
  return {{"salt", fmt::format("{}/manifest", key_version)},
          {"arguments", common_arguments(identity, map)},
          {"environment", environment},
          {"working_directory", input_root_name(map.to_key(identity.working_dir))},
          {"output_paths", {std::string(k_manifest_output)}},
          {"input_files", {{input_root_name(map.to_key(identity.source)), identity.source}}},
          {"input_blobs", nlohmann::json::object()}};
}

nlohmann::json result_action(const Digest& manifest_key, const ManifestEntry& entry,
                             const CompileIdentity& identity, const std::string& object,
                             const PathMap& map, std::string_view key_version)
{
  nlohmann::json environment = common_environment(identity, map);
  environment["NVFRESH_MANIFEST_KEY"] = manifest_key.to_hex();
  environment["NVFRESH_RESULT_KEY"] = entry.result.to_hex();
  nlohmann::json inputs = nlohmann::json::object();
  for (const auto& input : entry.inputs) {
    inputs[input_root_name(input.path)] = map.to_tree(input.path);
  }
  return {
    {"salt", fmt::format("{}/result", key_version)},
    {"arguments", common_arguments(identity, map)},
    {"environment", environment},
    {"working_directory", input_root_name(map.to_key(identity.working_dir))},
    {"output_paths", {object_output_path(identity, object, map), std::string(k_entry_output)}},
    {"input_files", inputs},
    {"input_blobs", nlohmann::json::object()}};
}

nlohmann::json step_action(const Digest& step_key, const std::vector<std::string>& arguments,
                           std::string_view key_version)
{
  return {{"salt", fmt::format("{}/step", key_version)},
          {"arguments", arguments},
          {"environment", {{"NVFRESH_STEP_KEY", step_key.to_hex()}}},
          {"working_directory", ""},
          {"output_paths", {std::string(k_step_output)}},
          {"input_files", nlohmann::json::object()},
          {"input_blobs", nlohmann::json::object()}};
}

RemoteCache::RemoteCache(RemoteSettings settings) : m_settings(std::move(settings)) {}

nlohmann::json RemoteCache::request_base() const
{
  return {{"remote", m_settings.url},
          {"instance", m_settings.instance},
          {"call_deadline_ms", m_settings.call_deadline_ms},
          {"connect_deadline_ms", m_settings.connect_deadline_ms},
          {"digest_cache", m_settings.digest_cache},
          {"tls_ca", m_settings.credentials.tls_ca},
          {"tls_client_cert", m_settings.credentials.tls_client_cert},
          {"tls_client_key", m_settings.credentials.tls_client_key}};
}

int RemoteCache::run_helper(const std::string& verb, const nlohmann::json& request,
                            const std::string& dir, std::string* out)
{
  if (m_settings.helper.empty() || !is_executable_file(m_settings.helper)) {
    throw RemoteFailure(
      fmt::format("the remote cache client {} is not installed (nvfresh was "
                  "built with -DNVFRESH_REMOTE_CACHE=OFF?)",
                  m_settings.helper.empty() ? "nvfresh-remote" : m_settings.helper));
  }
  if (!m_settings.refusal.empty()) {
    throw RemoteFailure(m_settings.refusal);
  }
  const std::string request_file = dir + "/request.json";
  write_file_atomically(request_file, request.dump());
  const std::string out_file = dir + "/helper.out";
  const std::string err_file = dir + "/helper.err";
  RedirectLimits limits;
  limits.own_process_group = true;
  limits.timeout_seconds = k_helper_limit_seconds;
  const ProcessResult result =
    run_redirected({m_settings.helper, verb, request_file},
                   helper_environment(current_environment(), m_settings.credentials), out_file,
                   err_file, {}, limits);
  if (result.succeeded() ||
      (result.term_signal == 0 && !result.timed_out && result.exit_code == k_helper_miss)) {
    if (out != nullptr) {
      *out = try_read_file(out_file, 1 << 20).value_or("");
    }
    return result.exit_code;
  }
  std::string why = try_read_file(err_file, 1 << 16).value_or("");
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) {
    why.pop_back();
  }
  if (why.rfind("nvfresh-remote: ", 0) == 0) {
    why = why.substr(16);
  }
  if (result.timed_out) {
    why = fmt::format("no answer within {} s", k_helper_limit_seconds);
  }
  throw RemoteFailure(why.empty() ? fmt::format("nvfresh-remote exited with {}", result.exit_code)
                                  : why);
}

std::optional<nlohmann::json> RemoteCache::get_result(const nlohmann::json& action,
                                                      const std::string& dir,
                                                      std::int64_t& bytes_down)
{
  nlohmann::json request = request_base();
  request["get"] = action;
  request["out_dir"] = dir;
  if (run_helper("get", request, dir, nullptr) == k_helper_miss) {
    return std::nullopt;
  }
  auto result = nlohmann::json::parse(try_read_file(dir + "/result.json", 1 << 20).value_or("{}"));
  bytes_down += result.value("bytes", std::int64_t{0});
  return result;
}

std::optional<Manifest> RemoteCache::fetch_manifest(const nlohmann::json& action,
                                                    std::int64_t& bytes_down)
{
  ScratchDir dir("nvfresh-remote-");
  const auto result = get_result(action, dir.path(), bytes_down);
  if (!result) {
    return std::nullopt;
  }
  std::string error;
  auto manifest = parse_manifest(read_output(*result, k_manifest_output), &error);
  if (!manifest) {
    log::info("remote: the remote manifest does not parse ({}): a miss", error);
  }
  return manifest;
}

std::optional<CacheEntry> RemoteCache::fetch_entry(const nlohmann::json& action,
                                                   const std::string& object_output,
                                                   std::int64_t& bytes_down)
{
  ScratchDir dir("nvfresh-remote-");
  const auto result = get_result(action, dir.path(), bytes_down);
  if (!result) {
    return std::nullopt;
  }
  std::string error;
  auto entry = parse_cache_entry(read_output(*result, k_entry_output), &error);
  if (!entry) {
    log::info("remote: the remote entry does not parse ({}): a miss", error);
    return std::nullopt;
  }
  entry->object = read_output(*result, object_output);
  if (hash_bytes(entry->object) != entry->object_digest) {
    log::info("remote: the remote object is not the one its entry names: a miss");
    return std::nullopt;
  }
  entry->console_out = try_read_file(result->at("stdout").get<std::string>(), 1 << 30).value_or("");
  entry->console_err = try_read_file(result->at("stderr").get<std::string>(), 1 << 30).value_or("");
  return entry;
}

std::optional<std::string> RemoteCache::fetch_step(const nlohmann::json& action,
                                                   std::int64_t& bytes_down)
{
  ScratchDir dir("nvfresh-remote-");
  const auto result = get_result(action, dir.path(), bytes_down);
  if (!result) {
    return std::nullopt;
  }
  return read_output(*result, k_step_output);
}

std::int64_t RemoteCache::publish_step(const nlohmann::json& action, const std::string& entry_text)
{
  ScratchDir dir("nvfresh-remote-");
  const std::string entry_file = dir.path() + "/step";
  const std::string empty_file = dir.path() + "/empty";
  write_file_atomically(entry_file, entry_text);
  write_file_atomically(empty_file, "");
  return put(nlohmann::json::array({{{"action", action},
                                     {"outputs", {{std::string(k_step_output), entry_file}}},
                                     {"stdout", empty_file},
                                     {"stderr", empty_file}}}),
             dir.path());
}

std::int64_t RemoteCache::publish(const nlohmann::json& result, const std::string& object_output,
                                  const CacheEntry& entry, const nlohmann::json& manifest_action,
                                  const Manifest& manifest)
{
  ScratchDir dir("nvfresh-remote-");
  const std::string object_file = dir.path() + "/object";
  const std::string entry_file = dir.path() + "/entry";
  const std::string stdout_file = dir.path() + "/stdout";
  const std::string stderr_file = dir.path() + "/stderr";
  const std::string manifest_file = dir.path() + "/manifest";
  const std::string empty_file = dir.path() + "/empty";
  CacheEntry described = entry_for_readers(entry);
  described.object.clear();  // the object and the console travel as blobs of their own
  described.console_out.clear();
  described.console_err.clear();
  write_file_atomically(object_file, entry.object);
  write_file_atomically(entry_file, serialize_cache_entry(described));
  write_file_atomically(stdout_file, entry.console_out);
  write_file_atomically(stderr_file, entry.console_err);
  write_file_atomically(manifest_file, serialize_manifest(manifest));
  write_file_atomically(empty_file, "");
  return put(
    nlohmann::json::array(
      {{{"action", result},
        {"outputs", {{object_output, object_file}, {std::string(k_entry_output), entry_file}}},
        {"stdout", stdout_file},
        {"stderr", stderr_file}},
       {{"action", manifest_action},
        {"outputs", {{std::string(k_manifest_output), manifest_file}}},
        {"stdout", empty_file},
        {"stderr", empty_file}}}),
    dir.path());
}

std::int64_t RemoteCache::put(const nlohmann::json& puts, const std::string& dir)
{
  nlohmann::json request = request_base();
  request["put"] = puts;
  std::string out;
  run_helper("put", request, dir, &out);
  try {
    return nlohmann::json::parse(out).value("bytes", std::int64_t{0});
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
}

}  // namespace nvfresh

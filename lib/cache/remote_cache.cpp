#include "cache/remote_cache.hpp"

#include "cache/compile_identity.hpp"
#include "protocol/helper_socket.hpp"
#include "record/signature.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <tuple>
#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr double k_helper_limit_seconds = 120;  // beyond every call's own deadline
// Beyond the budget's end: the helper's start and exit, for a helper that keeps the budget itself
constexpr double k_helper_grace_seconds = 1;
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

std::map<std::string, std::string> common_environment(const CompileIdentity& identity,
                                                      const PathMap& map)
{
  std::map<std::string, std::string> environment;
  for (const auto& [name, value] : identity.signature_env) {
    if (name != k_path_variable) {  // judged by what it resolves, as locally
      environment[name] = map.text_to_key(value);
    }
  }
  return environment;
}

std::vector<std::string> common_arguments(const CompileIdentity& identity, const PathMap& map)
{
  std::vector<std::string> arguments{identity.compiler};
  for (const auto& arg : identity.signature_args) {
    arguments.push_back(map.text_to_key(arg));
  }
  return arguments;
}

// The Command and salt of both of a compile's Actions; the caller adds its key and its files.
ActionSpec compile_action(const CompileIdentity& identity, const PathMap& map,
                          std::string_view key_version, std::string_view step)
{
  ActionSpec action;
  action.salt = fmt::format("{}/{}", key_version, step);
  action.arguments = common_arguments(identity, map);
  action.environment = common_environment(identity, map);
  action.working_directory = input_root_name(map.to_key(identity.working_dir));
  return action;
}

// The files of a ':'-separated list, empty parts left out.
std::vector<std::string> key_files(const std::string& list)
{
  std::vector<std::string> files;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(':', begin), list.size());
    if (end > begin) {
      files.push_back(list.substr(begin, end - begin));
    }
    begin = end + 1;
  }
  return files;
}

std::string read_output(const HelperAnswer& result, std::string_view path)
{
  auto found = result.outputs.find(std::string(path));
  if (found == result.outputs.end()) {
    throw RemoteFailure(fmt::format("the remote result has no output {}", path));
  }
  auto bytes = try_read_file(found->second, k_max_output_bytes);
  if (!bytes) {
    throw RemoteFailure(fmt::format("cannot read the fetched {}", path));
  }
  return *bytes;
}

// The budgets of NVFRESH_REMOTE_COMPILE_BUDGET and _BUILD_BUDGET; one that does not parse is a
// refusal (said once per build, like any).
void read_budgets(const Config& config, RemoteSettings& settings)
{
  for (const auto& [text, name, budget, fallback] :
       {std::tuple{&config.remote_compile_budget, "NVFRESH_REMOTE_COMPILE_BUDGET",
                   &settings.compile_budget_ns, k_default_compile_budget_ns},
        std::tuple{&config.remote_build_budget, "NVFRESH_REMOTE_BUILD_BUDGET",
                   &settings.build_budget_ns, k_default_build_budget_ns}}) {
    if (auto parsed = parse_budget_ns(*text, fallback)) {
      *budget = *parsed;
    } else if (settings.refusal.empty()) {
      settings.refusal =
        fmt::format("{}='{}' is not a number of seconds (0 to 86400)", name, *text);
    }
  }
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
  settings.trusted_keys = key_files(config.remote_trusted_keys);
  read_budgets(config, settings);
  return settings;
}

std::optional<std::map<std::string, std::string>> parse_platform(const std::string& text)
{
  std::map<std::string, std::string> platform;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    end = end == std::string::npos ? text.size() : end;
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty()) {
      continue;
    }
    const size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      return std::nullopt;
    }
    platform[item.substr(0, equals)] = item.substr(equals + 1);
  }
  platform.try_emplace("OSFamily", "linux");
  return platform;
}

std::optional<RemoteSettings> remote_exec_settings(const Config& config)
{
  if (config.remote_exec.empty()) {
    return std::nullopt;
  }
  Config as_remote = config;
  as_remote.remote = config.remote_exec;
  RemoteSettings settings = *remote_settings(as_remote);
  auto platform = parse_platform(config.remote_exec_platform);
  if (platform) {
    settings.platform = std::move(*platform);
  } else if (settings.refusal.empty()) {
    settings.refusal = fmt::format("NVFRESH_REMOTE_EXEC_PLATFORM='{}' is not name=value,name=value",
                                   config.remote_exec_platform);
  }
  if (!config.remote_exec_timeout.empty()) {
    char* end = nullptr;
    const double seconds = std::strtod(config.remote_exec_timeout.c_str(), &end);
    if (end == nullptr || *end != '\0' || !(seconds > 0) || seconds > 86400) {
      if (settings.refusal.empty()) {
        settings.refusal =
          fmt::format("NVFRESH_REMOTE_EXEC_TIMEOUT='{}' is not a number of seconds",
                      config.remote_exec_timeout);
      }
    } else {
      settings.execute_deadline_ms = std::max(1, static_cast<int>(seconds * 1000));
    }
  }
  return settings;
}

std::string input_root_name(const std::string& key_path)
{
  for (const auto& [prefix, root] :
       {std::pair{k_source_token, "src"}, std::pair{k_build_token, "build"}}) {
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

ActionSpec manifest_action(const Digest& manifest_key, const CompileIdentity& identity,
                           const PathMap& map, std::string_view key_version)
{
  ActionSpec action = compile_action(identity, map, key_version, "manifest");
  action.environment["NVFRESH_MANIFEST_KEY"] = manifest_key.to_hex();
  action.output_paths = {std::string(k_manifest_output)};
  action.input_files = {{input_root_name(map.to_key(identity.source)), identity.source}};
  return action;
}

ActionSpec result_action(const Digest& manifest_key, const ManifestEntry& entry,
                         const CompileIdentity& identity, const std::string& object,
                         const PathMap& map, std::string_view key_version)
{
  ActionSpec action = compile_action(identity, map, key_version, "result");
  action.environment["NVFRESH_MANIFEST_KEY"] = manifest_key.to_hex();
  action.environment["NVFRESH_RESULT_KEY"] = entry.result.to_hex();
  action.output_paths = {object_output_path(identity, object, map), std::string(k_entry_output)};
  for (const auto& input : entry.inputs) {
    action.input_files[input_root_name(input.path)] = map.to_tree(input.path);
  }
  return action;
}

ActionSpec step_action(const Digest& step_key, const std::vector<std::string>& arguments,
                       std::string_view key_version)
{
  ActionSpec action;
  action.salt = fmt::format("{}/step", key_version);
  action.arguments = arguments;
  action.environment = {{"NVFRESH_STEP_KEY", step_key.to_hex()}};
  action.output_paths = {std::string(k_step_output)};
  return action;
}

RemoteCache::RemoteCache(RemoteSettings settings) : m_settings(std::move(settings)) {}

HelperRequest RemoteCache::request_base(HelperVerb verb) const
{
  HelperRequest request;
  request.remote = m_settings.url;
  request.instance = m_settings.instance;
  request.call_deadline_ms = m_settings.call_deadline_ms;
  request.connect_deadline_ms = m_settings.connect_deadline_ms;
  request.digest_cache = m_settings.digest_cache;
  request.tls_ca = m_settings.credentials.tls_ca;
  request.tls_client_cert = m_settings.credentials.tls_client_cert;
  request.tls_client_key = m_settings.credentials.tls_client_key;
  request.trusted_keys = m_settings.trusted_keys;
  request.verb = verb;
  return request;
}

namespace {

// What went wrong in a helper run that neither hit nor missed, in one line.
std::string helper_failure(const ProcessResult& result, const std::string& err_file)
{
  if (result.timed_out) {
    return "nvfresh-remote gave no answer in time";
  }
  std::string why = try_read_file(err_file, 1 << 16).value_or("");
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) {
    why.pop_back();
  }
  if (why.rfind("nvfresh-remote: ", 0) == 0) {
    why = why.substr(16);
  }
  if (result.term_signal == 0 && result.exit_code == k_helper_wrong_version) {
    return fmt::format("nvfresh-remote speaks another protocol version than this nvfresh ({}){}",
                       k_helper_protocol_version, why.empty() ? "" : ": " + why);
  }
  return why.empty() ? fmt::format("nvfresh-remote exited with {}", result.exit_code) : why;
}

}  // namespace

void RemoteCache::check_helper() const
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
}

int RemoteCache::run_helper(const HelperRequest& request, const std::string& dir, std::string* out,
                            double limit_seconds)
{
  write_file_atomically(dir + "/request.json", to_json(request).dump());
  return run_prepared(request.verb, dir, out, limit_seconds);
}

namespace {

// One helper call on `request_file`, its stdout and stderr into the two files: through the
// compile's co-process when it takes the call, else a helper process of its own (within `limits`).
ProcessResult run_helper_call(const RemoteSettings& settings, HelperVerb verb,
                              const std::string& request_file, const std::string& out_file,
                              const std::string& err_file, const RedirectLimits& limits)
{
  if (!settings.helper_socket.empty()) {
    const auto absolute = [](const std::string& file) { return fs::absolute(file).string(); };
    const HelperCallAnswer answer =
      ask_helper_coprocess(settings.helper_socket,
                           {verb, absolute(request_file), absolute(out_file), absolute(err_file)},
                           limits.timeout_seconds);
    if (answer.kind == HelperCallAnswer::Kind::answered) {
      ProcessResult result;
      result.exit_code = answer.status;
      return result;
    }
    if (answer.kind == HelperCallAnswer::Kind::timed_out) {
      ProcessResult result;
      result.timed_out = true;
      return result;
    }
    log::info("remote: the compile's helper co-process did not take the call: running the helper");
  }
  return run_redirected({settings.helper, std::string(verb_name(verb)), request_file},
                        helper_environment(current_environment(), settings.credentials), out_file,
                        err_file, {}, limits);
}

}  // namespace

int RemoteCache::run_prepared(HelperVerb verb, const std::string& dir, std::string* out,
                              double limit_seconds)
{
  check_helper();
  const std::string request_file = dir + "/request.json";
  const std::string out_file = dir + "/helper.out";
  const std::string err_file = dir + "/helper.err";
  RedirectLimits limits;
  limits.own_process_group = true;
  limits.timeout_seconds = limit_seconds > 0 ? limit_seconds : k_helper_limit_seconds;
  const ProcessResult result =
    run_helper_call(m_settings, verb, request_file, out_file, err_file, limits);
  if (result.succeeded() ||
      (result.term_signal == 0 && !result.timed_out && result.exit_code == k_helper_miss)) {
    if (out != nullptr) {
      *out = try_read_file(out_file, 1 << 20).value_or("");
    }
    return result.exit_code;
  }
  if (result.term_signal == 0 && !result.timed_out && result.exit_code == k_helper_untrusted) {
    throw RemoteUntrusted(helper_failure(result, err_file));
  }
  if (result.term_signal == 0 && !result.timed_out && result.exit_code == k_helper_over_budget) {
    throw RemoteOverBudget(helper_failure(result, err_file), false, 0);
  }
  throw RemoteFailure(helper_failure(result, err_file));
}

std::optional<HelperAnswer> RemoteCache::get_result(const ActionSpec& action,
                                                    const std::string& dir,
                                                    std::int64_t& bytes_down)
{
  HelperRequest request = request_base(HelperVerb::get);
  request.get = action;
  request.out_dir = dir;
  if (run_within_budget(request, dir) == k_helper_miss) {
    return std::nullopt;
  }
  try {
    HelperAnswer answer = parse_helper_answer(
      try_read_file(dir + "/result.json", 1 << 20).value_or(""), HelperVerb::get);
    bytes_down += answer.bytes;
    return answer;
  } catch (const ProtocolError& error) {
    throw RemoteFailure(fmt::format("nvfresh-remote's answer: {}", error.what()));
  }
}

int RemoteCache::run_within_budget(HelperRequest& request, const std::string& dir)
{
  const std::string& ledger = m_settings.budget_ledger;
  if (ledger.empty()) {
    return run_helper(request, dir, nullptr);
  }
  const std::int64_t budget = m_settings.compile_budget_ns;
  const std::int64_t left = budget_left_ns(budget, read_ledger(ledger));
  bool newly_over = false;
  if (left <= 0) {
    const LedgerState state = record_lookup(ledger, 0, true, &newly_over);
    throw RemoteOverBudget("the compile's budget for the remote is spent: not asked", newly_over,
                           state.spent_ns);
  }
  const std::int64_t start = monotonic_now_ns();
  request.budget_deadline_ns = start + left;
  int status = k_helper_error;
  bool ran_out = false;
  std::string why;
  try {
    // The helper keeps the budget itself; this limit only ends one that does not.
    status =
      run_helper(request, dir, nullptr, static_cast<double>(left) / 1e9 + k_helper_grace_seconds);
  } catch (const RemoteOverBudget&) {
    ran_out = true;
  } catch (const RemoteFailure& error) {
    ran_out = monotonic_now_ns() >= request.budget_deadline_ns;  // its time limit, at the budget
    why = error.what();
    if (!ran_out) {
      record_lookup(ledger, monotonic_now_ns() - start, false, &newly_over);
      throw;
    }
  } catch (...) {  // untrusted, or the scratch files: the time is spent all the same
    record_lookup(ledger, monotonic_now_ns() - start, false, &newly_over);
    throw;
  }
  const LedgerState state = record_lookup(ledger, monotonic_now_ns() - start, ran_out, &newly_over);
  if (ran_out) {
    throw RemoteOverBudget(
      fmt::format("the compile's budget for the remote ran out{}", why.empty() ? "" : ": " + why),
      newly_over, state.spent_ns);
  }
  return status;
}

std::optional<Manifest> RemoteCache::fetch_manifest(const ActionSpec& action,
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

std::optional<CacheEntry> RemoteCache::fetch_entry(const ActionSpec& action,
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
  entry->console_out = try_read_file(result->stdout_file, 1 << 30).value_or("");
  entry->console_err = try_read_file(result->stderr_file, 1 << 30).value_or("");
  return entry;
}

std::optional<std::string> RemoteCache::fetch_step(const ActionSpec& action,
                                                   std::int64_t& bytes_down)
{
  ScratchDir dir("nvfresh-remote-");
  const auto result = get_result(action, dir.path(), bytes_down);
  if (!result) {
    return std::nullopt;
  }
  return read_output(*result, k_step_output);
}

std::int64_t RemoteCache::publish_step(const ActionSpec& action, const std::string& entry_text,
                                       const std::string& job_dir)
{
  std::optional<ScratchDir> scratch;
  const std::string dir = job_dir.empty() ? scratch.emplace("nvfresh-remote-").path() : job_dir;
  const std::string entry_file = dir + "/step";
  const std::string empty_file = dir + "/empty";
  write_file_atomically(entry_file, entry_text);
  write_file_atomically(empty_file, "");
  return put({{action, {{std::string(k_step_output), entry_file}}, empty_file, empty_file}}, dir,
             !job_dir.empty());
}

std::int64_t RemoteCache::publish(const ActionSpec& result, const std::string& object_output,
                                  const CacheEntry& entry, const ActionSpec& manifest_action,
                                  const Manifest& manifest, const std::string& job_dir)
{
  std::optional<ScratchDir> scratch;
  const std::string dir = job_dir.empty() ? scratch.emplace("nvfresh-remote-").path() : job_dir;
  const std::string object_file = dir + "/object";
  const std::string entry_file = dir + "/entry";
  const std::string stdout_file = dir + "/stdout";
  const std::string stderr_file = dir + "/stderr";
  const std::string manifest_file = dir + "/manifest";
  const std::string empty_file = dir + "/empty";
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
    {{result,
      {{object_output, object_file}, {std::string(k_entry_output), entry_file}},
      stdout_file,
      stderr_file},
     {manifest_action, {{std::string(k_manifest_output), manifest_file}}, empty_file, empty_file}},
    dir, !job_dir.empty());
}

std::int64_t RemoteCache::put(std::vector<HelperUpload> uploads, const std::string& dir,
                              bool prepare_only)
{
  check_helper();  // said now, in the compile, rather than later in the background
  HelperRequest request = request_base(HelperVerb::put);
  request.put = std::move(uploads);
  write_file_atomically(dir + "/request.json", to_json(request).dump());
  return prepare_only ? 0 : send_prepared(dir);
}

std::int64_t RemoteCache::send_prepared(const std::string& dir)
{
  std::string out;
  run_prepared(HelperVerb::put, dir, &out);
  try {
    return parse_helper_answer(out, HelperVerb::put).bytes;
  } catch (const ProtocolError&) {
    return 0;  // uploaded all the same; only the count is lost
  }
}

HelperAnswer RemoteCache::execute(ActionSpec action, const std::vector<std::string>& toolkit,
                                  const std::string& toolkit_sums, const std::string& dir)
{
  HelperRequest request = request_base(HelperVerb::execute);
  action.platform = m_settings.platform;
  action.do_not_cache = true;  // a failed run is never served from the server's cache
  request.get = std::move(action);
  request.out_dir = dir;
  request.execute_deadline_ms = m_settings.execute_deadline_ms;
  request.toolkit = toolkit;
  request.toolkit_sums = toolkit_sums;
  run_helper(request, dir, nullptr,
             m_settings.execute_deadline_ms / 1000.0 + k_helper_limit_seconds);
  try {
    return parse_helper_answer(try_read_file(dir + "/result.json", 1 << 20).value_or(""),
                               HelperVerb::execute);
  } catch (const ProtocolError& error) {
    throw RemoteFailure(fmt::format("nvfresh-remote's answer: {}", error.what()));
  }
}

}  // namespace nvfresh

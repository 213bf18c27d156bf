#include "step/step_lookup.hpp"

#include "cache/remote_budget.hpp"
#include "config/config.hpp"
#include "protocol/helper_socket.hpp"
#include "step/step_report.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <filesystem>
#include <random>

namespace fs = std::filesystem;

namespace nvfresh {

namespace {

double random_draw()
{
  std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

void use_remote(CacheStorage& storage, const Config& config, const Environment& env)
{
  const std::string root = env_value(env, k_step_record_root_variable);
  if (root.empty()) {
    return;
  }
  if (auto remote = remote_settings(config)) {
    storage.use_remote(std::move(*remote), root + "/remote-failed");
    storage.set_budget_ledger(env_value(env, k_remote_ledger_variable));
    const std::string socket = env_value(env, k_helper_socket_variable);
    storage.set_helper_socket(socket);
    storage.upload_in_batch(socket);  // sent with the compile's batch when it ends
  }
}

// The remote executor (NVFRESH_REMOTE_EXEC), its SHA-256 cache in the store's dir.
void use_executor(StepWorld* world, const Config& config, const Environment& env)
{
  const std::string root = env_value(env, k_step_record_root_variable);
  auto settings = remote_exec_settings(config);
  if (root.empty() || !settings) {
    return;
  }
  if (settings->digest_cache.empty()) {
    settings->digest_cache = world->storage->local().root() + "/sha256-cache";
  }
  settings->helper_socket = env_value(env, k_helper_socket_variable);
  world->executor.emplace(RemoteExecutor{RemoteCache(std::move(*settings)),
                                         root + "/remote-exec-failed",
                                         root + "/remote-exec-step-failed"});
}

StepPlan plan_with_key(Step* step, const Environment& env, const Config& config,
                       const CacheSettings& settings, StepWorld* world)
{
  step->temp = find_temp_names(step->argv);
  step->cwd = current_directory();
  step->tool_exe = fs::canonical(absolute_path(step->tool, step->cwd)).string();
  CacheStorage& storage = world->storage.emplace(settings);
  if (auto plain = plan_if_store_refuses(storage.local().refusal())) {
    return *plain;
  }
  use_remote(storage, config, env);
  use_executor(world, config, env);
  const auto key = step_key(*step, *world->hasher, &world->inputs);
  if (auto plain = plan_if_no_key(key)) {
    return *plain;
  }
  const VerifyDraw verify{settings.verify_fraction,
                          settings.verify_fraction > 0 ? random_draw() : 1.0};
  // The local entry, and the remote's after a local one that does not hold (the remote's judged
  // like a local one).
  FileHasher& hasher = *world->hasher;
  StepLookup lookup = storage.find_step(*key, remote_arguments(*step), [&](const StepEntry& entry) {
    return inputs_hold(entry, hasher);
  });
  return plan_step(*key, std::move(lookup), world->inputs, verify);
}

}  // namespace

bool inputs_hold(const StepEntry& entry, FileHasher& hasher)
{
  for (const auto& read : entry.reads) {
    auto now = hasher.fingerprint(read.path);
    if (!now.fingerprint || now.fingerprint->hash != read.hash) {
      log::info("step {}: {} changed", entry.key.short_hex(), read.path);
      return false;
    }
  }
  return std::none_of(entry.missing.begin(), entry.missing.end(),
                      [](const std::string& path) { return lstat_file(path).exists; });
}

StepPlan gather_and_plan(Step* step, const Environment& env, StepWorld* world)
{
  std::optional<Config> config;
  try {
    config = load_config(env);
  } catch (const std::exception&) {
    return plan_plainly(PlainReason::config_unreadable);
  }
  log::set_file(config->log_file);
  const CacheSettings settings = cache_settings(*config, env);
  const StepGate gate{settings.enabled, !is_false(config->step_cache), step_refusal(step->argv),
                      is_cached_step_tool(step->tool)};
  if (auto plain = plan_before_key(gate)) {
    return *plain;
  }
  world->hasher.emplace(std::string{}, FileHasher::k_default_settle_ns,
                        shared_hash_cache_file(settings.dir));
  try {
    return plan_with_key(step, env, *config, settings, world);
  } catch (const std::exception& error) {
    return plan_plainly(PlainReason::setup_failed, error.what());
  }
}

}  // namespace nvfresh

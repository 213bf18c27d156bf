#include "step/step_lookup.hpp"

#include "cache/cache_store.hpp"
#include "cache/remote_cache.hpp"
#include "config/config.hpp"
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

void use_remote(ObjectCache& cache, const Config& config, const Environment& env)
{
  const std::string root = env_value(env, k_step_record_root_variable);
  if (root.empty()) {
    return;
  }
  if (auto remote = remote_settings(config)) {
    cache.use_remote(std::move(*remote), root + "/remote-failed");
  }
}

// The local entry, and the remote's after a local one that does not hold (the remote's judged
// like a local one).
StepLookup look_up(const Step& step, const Digest& key, ObjectCache& cache, FileHasher& hasher)
{
  StepLookup lookup;
  lookup.local = cache.store().read_step(key, &lookup.why_missed);
  lookup.local_holds = lookup.local && inputs_hold(*lookup.local, hasher);
  if (!lookup.local_holds) {
    lookup.remote = cache.fetch_remote_step(key, remote_arguments(step));
    lookup.remote_holds = lookup.remote && inputs_hold(*lookup.remote, hasher);
    if (lookup.remote && !lookup.remote_holds) {
      log::info("step {}: the remote's entry does not hold: an input changed", key.short_hex());
    }
  }
  return lookup;
}

StepPlan plan_with_key(Step* step, const Environment& env, const Config& config,
                       const CacheSettings& settings, StepWorld* world)
{
  step->temp = find_temp_names(step->argv);
  step->cwd = current_directory();
  step->tool_exe = fs::canonical(absolute_path(step->tool, step->cwd)).string();
  ObjectCache& cache = world->cache.emplace(settings);
  if (auto plain = plan_if_store_refuses(cache.store().refusal())) {
    return *plain;
  }
  use_remote(cache, config, env);
  const auto key = step_key(*step, *world->hasher, &world->inputs);
  if (auto plain = plan_if_no_key(key)) {
    return *plain;
  }
  const VerifyDraw verify{settings.verify_fraction,
                          settings.verify_fraction > 0 ? random_draw() : 1.0};
  return plan_step(*key, look_up(*step, *key, cache, *world->hasher), world->inputs, verify);
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

#include "compile/cache_phase.hpp"

#include "cache/background_upload.hpp"
#include "cache/entry_verifier.hpp"
#include "protocol/helper_socket.hpp"
#include "record/record_root.hpp"
#include "util/build_invocation.hpp"
#include "util/keep_until_exit.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <random>

namespace nvfresh {

namespace {

double random_draw()
{
  static std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace

CachePhase::CachePhase(const Config& config, const Environment& env) : m_env(env)
{
  CacheSettings settings = cache_settings(config, env);
  if (settings.enabled) {
    m_cache.emplace(settings);
    if (auto remote = remote_settings(config)) {
      m_cache->storage().use_remote(std::move(*remote), {});
    }
    m_refusal = m_cache->store().refusal();
    if (!m_refusal.empty()) {
      m_refused_dir = settings.dir;
      m_cache.reset();
    }
  }
}

CachePhase::~CachePhase()
{
  send_upload_batch();
  if (!m_budget_ledger.empty()) {
    std::remove(m_budget_ledger.c_str());
  }
}

void CachePhase::start_helper_coprocess(const std::string& name)
{
  CacheStorage& storage = m_cache->storage();
  const RemoteSettings* remote = storage.remote_settings();
  if (name.empty() || remote == nullptr || !storage.remote_usable() || remote->helper.empty() ||
      !remote->refusal.empty()) {
    return;  // without a remote in use; a refused one's first call says why, as without this
  }
  m_coprocess = RemoteCoprocess::start(
    remote->helper, name, helper_environment(current_environment(), remote->credentials));
  if (m_coprocess) {
    storage.set_helper_socket(name);
  }
}

void CachePhase::send_upload_batch() noexcept
{
  if (m_upload_batch.empty()) {
    return;
  }
  try {
    const std::vector<std::string> jobs =
      batched_upload_jobs(m_cache->storage().upload_jobs_dir(), m_upload_batch);
    if (jobs.empty()) {
      return;
    }
    Environment env = current_environment();
    if (m_coprocess) {
      env[k_helper_socket_variable] = m_coprocess->name();
    }
    start_upload_jobs(jobs, env, m_coprocess ? m_coprocess->lifeline() : -1);
    if (m_coprocess) {
      m_coprocess->detach();  // its last calls are the batch's
    }
    log::info("remote: {} uploads of the compile sent in the background", jobs.size());
  } catch (const std::exception& error) {
    log::info("remote: the compile's uploads not sent: {}", error.what());
  }
}

bool CachePhase::usable(const std::string& record_root) const
{
  if (m_refusal.empty() || !first_time_this_build(record_root + "/cache-refused-warned")) {
    return m_cache.has_value();
  }
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: not using the cache {}: {} (the build goes on uncached; use a "
                         "cache dir of your own, or set NVFRESH_CACHE_SHARED=1 for a team's; said "
                         "once per build)\n",
                         m_refused_dir, m_refusal)
               .c_str(),
             stderr);
  return false;
}

std::optional<ServedCompile> CachePhase::restore(const LoadedRecord& loaded,
                                                 const ServeRequest& serve, FileHasher& hasher)
{
  if (!usable(serve.plan.record_root) || !loaded.record || !loaded.record->cache_entry ||
      m_cache->settings().verify_fraction > 0) {
    return std::nullopt;
  }
  try {
    std::string elsewhere;
    auto entry = m_cache->entry_for_record(*loaded.record, build_tree_of(serve.plan), &elsewhere);
    if (!entry) {
      return std::nullopt;
    }
    return ServedCompile{
      serve_recorded(*loaded.record->cache_entry, *entry, loaded, serve, hasher, elsewhere),
      entry->compile_ns};
  } catch (const std::exception& error) {
    log::info("cache: the object the record names not restored, looking it up: {}", error.what());
    return std::nullopt;
  }
}

std::optional<ServedCompile> CachePhase::serve(const ServeRequest& serve, FileHasher& hasher)
{
  if (!usable(serve.plan.record_root)) {
    return std::nullopt;
  }
  m_cache->storage().set_failure_marker(serve.plan.record_root + "/remote-failed");
  m_budget_ledger = serve.plan.remote_ledger;
  m_cache->storage().set_budget_ledger(m_budget_ledger);
  start_helper_coprocess(serve.plan.remote_socket);
  // The steps leave their uploads under the socket's name (step/step_lookup.cpp); so does this
  // compile's store. All are sent when the compile ends (send_upload_batch).
  m_upload_batch = serve.plan.remote_socket;
  m_cache->storage().upload_in_batch(m_upload_batch);
  try {
    auto hit = m_cache->lookup(compile_identity(serve.request, serve.plan), hasher, m_env);
    if (!hit) {
      return std::nullopt;
    }
    const double fraction = m_cache->settings().verify_fraction;
    if (fraction > 0 && random_draw() < fraction) {
      log::info("cache: hit {} sampled for verification: compiling", hit->key.short_hex());
      seed_hasher(*hit, hasher);
      m_verifying = std::move(hit);
      return std::nullopt;
    }
    std::string why;
    auto served = serve_hit(*hit, serve, hasher, &why);
    if (!served) {
      log::info("cache: hit {} not served: {}", hit->key.short_hex(), why);
      seed_hasher(*hit, hasher);
      return std::nullopt;
    }
    const std::int64_t compile_ns = hit->entry.compile_ns;
    keep_until_exit(
      std::move(*hit));  // the process ends soon: its strings are not freed one by one
    return ServedCompile{std::move(*served), compile_ns};
  } catch (const std::exception& error) {
    log::info("cache: lookup failed, compiling: {}", error.what());
    return std::nullopt;
  }
}

Outcome CachePhase::after_compile(const ServeRequest& serve, const Record& record, Outcome outcome,
                                  const std::vector<std::string>& command)
{
  if (!m_cache || outcome.kind != OutcomeKind::compiled) {
    return outcome;
  }
  if (m_verifying) {
    return after_verifying(serve, record, command);
  }
  store(serve, record, command);
  return outcome;
}

Outcome CachePhase::after_verifying(const ServeRequest& serve, const Record& record,
                                    const std::vector<std::string>& command)
{
  const CacheHit& hit = *m_verifying;
  if (m_cache->note_verified(hit.key, hit.entry, record.components)) {
    return {
      OutcomeKind::compiled, Cause::cache_verified,
      fmt::format("the cache entry {} was compiled again and is the same", hit.key.short_hex())};
  }
  Outcome mismatch{
    OutcomeKind::compiled, Cause::cache_mismatch,
    fmt::format("codegen differs from the cached entry {}: {}", hit.key.short_hex(),
                differing_components(held_components(hit.entry), record.components))};
  // The entry holds what this compile does not give (other codegen, or an entry whose object is
  // not the one it describes): this compile replaces it, and it is never served again.
  if (store(serve, record, command) != hit.key) {
    try {
      m_cache->store().remove_entry(hit.key);
    } catch (const std::exception& error) {
      log::info("cache: entry {} not removed: {}", hit.key.short_hex(), error.what());
    }
  }
  return mismatch;
}

std::optional<Digest> CachePhase::store(const ServeRequest& serve, const Record& record,
                                        const std::vector<std::string>& command)
{
  m_cache->storage().set_failure_marker(serve.plan.record_root + "/remote-failed");
  StoreOutcome stored =
    m_cache->store_result(compile_identity(serve.request, serve.plan), record, command, m_env);
  log::info("cache: {}", stored.detail);
  if (stored.no_space) {
    warn_not_cached(serve.plan.record_root, stored.detail);
  }
  if (stored.key) {
    try {
      Record naming = record;
      naming.cache_entry = stored.key;
      save_record(serve.plan.record_file, naming);
    } catch (const std::exception& error) {
      log::info("cache: the record does not name entry {}: {}", stored.key->short_hex(),
                error.what());
    }
  }
  return stored.key;
}

void CachePhase::warn_not_cached(const std::string& record_root, const std::string& detail) const
{
  if (!first_time_this_build(record_root + "/cache-full-warned")) {
    return;
  }
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: {} (the build goes on; free space, or set "
                         "NVFRESH_CACHE_DIR to a disk with room; said once per build)\n",
                         detail)
               .c_str(),
             stderr);
}

}  // namespace nvfresh

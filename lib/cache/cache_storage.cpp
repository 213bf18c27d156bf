#include "cache/cache_storage.hpp"

#include "cache/background_upload.hpp"
#include "cache/remote_budget.hpp"
#include "util/build_invocation.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace nvfresh {

namespace {

constexpr std::uint64_t k_default_min_free = 1ULL << 30;

// Whether the failure marker was written longer than k_failure_marker_life_ns ago: the remote it
// turned off is asked again. One that does not exist has not expired (nothing is off).
bool marker_expired(const std::string& marker)
{
  const FileStat stat = stat_file(marker);
  return stat.exists && now_ns() - stat.mtime_ns > CacheStorage::k_failure_marker_life_ns;
}

// One line of nvfresh's on the build's terminal, after whatever the compile printed on stdout.
void say_to_terminal(const std::string& line)
{
  std::fflush(stdout);
  std::fputs(line.c_str(), stderr);
}

std::string default_cache_dir(const Environment& env)
{
  const std::string base = xdg_base_dir(env, "XDG_CACHE_HOME", ".cache");
  return base.empty() ? base : base + "/nvfresh";
}

}  // namespace

CacheSettings cache_settings(const Config& config, const Environment& env)
{
  CacheSettings settings;
  settings.enabled = !is_false(config.cache);
  settings.dir = config.cache_dir.empty() ? default_cache_dir(env) : config.cache_dir;
  settings.enabled = settings.enabled && !settings.dir.empty();
  settings.max_bytes = parse_size(config.cache_max_size).value_or(0);
  settings.min_free = parse_size(config.cache_min_free).value_or(k_default_min_free);
  const double verify =
    config.cache_verify.empty() ? 0 : std::strtod(config.cache_verify.c_str(), nullptr);
  settings.verify_fraction = verify > 0 && verify <= 1 ? verify : 0;
  settings.across_checkouts = is_true(config.cache_across_checkouts);
  settings.shared = is_true(config.cache_shared);
  return settings;
}

CacheStorage::CacheStorage(const CacheSettings& settings)
  : m_settings(settings),
    m_store(settings.dir, {settings.max_bytes, settings.min_free}, settings.shared)
{}

void CacheStorage::use_remote(RemoteSettings settings, std::string failure_marker)
{
  if (settings.digest_cache.empty() && m_store.refusal().empty()) {
    settings.digest_cache = m_store.root() + "/sha256-cache";
  }
  if (m_store.refusal().empty()) {
    m_upload_jobs = m_store.root() + "/uploads";
  }
  use_remote(std::make_unique<RemoteCache>(std::move(settings)), std::move(failure_marker));
}

void CacheStorage::use_remote(std::unique_ptr<RemoteBackend> backend, std::string failure_marker)
{
  m_remote = std::move(backend);
  m_failure_marker = std::move(failure_marker);
}

void CacheStorage::set_failure_marker(std::string failure_marker)
{
  m_failure_marker = std::move(failure_marker);
}

void CacheStorage::set_budget_ledger(std::string file)
{
  if (m_remote != nullptr) {
    m_remote->set_budget_ledger(std::move(file));
  }
}

void CacheStorage::set_helper_socket(std::string name)
{
  if (m_remote != nullptr) {
    m_remote->set_helper_socket(std::move(name));
  }
}

void CacheStorage::upload_in_background(std::string jobs_dir)
{
  m_upload_jobs = std::move(jobs_dir);
}

void CacheStorage::upload_in_batch(std::string batch)
{
  m_upload_batch = std::move(batch);
}

void CacheStorage::keep_failures_for(std::string build_id)
{
  m_build_id = std::move(build_id);
}

std::string CacheStorage::build_id() const
{
  return m_build_id.empty() ? build_invocation_id() : m_build_id;
}

const RemoteSettings* CacheStorage::remote_settings() const
{
  return m_remote != nullptr ? &m_remote->settings() : nullptr;
}

bool CacheStorage::remote_usable() const
{
  return m_remote != nullptr &&
         (m_failure_marker.empty() || !already_this_build(m_failure_marker, build_id()) ||
          marker_expired(m_failure_marker));
}

void CacheStorage::say_left_line() const
{
  if (m_failure_marker.empty() || !m_build_id.empty()) {
    return;
  }
  // Taken by a rename: of the compiles that find it at once, one says it.
  const std::string left = m_failure_marker + ".line";
  const std::string taken = fmt::format("{}.{}", left, ::getpid());
  if (std::rename(left.c_str(), taken.c_str()) != 0) {
    return;
  }
  const std::string line = try_read_file(taken, 1 << 16).value_or("");
  std::remove(taken.c_str());
  say_to_terminal(line);
}

void CacheStorage::upload(
  const Digest& key, CacheCounter counter,
  const std::function<std::int64_t(RemoteBackend&, const std::string&)>& publish)
{
  with_remote(key, true, [&](RemoteBackend& remote) {
    if (m_upload_jobs.empty()) {
      const std::int64_t sent = publish(remote, {});
      m_store.count(key, {{counter, 1}, {CacheCounter::remote_bytes_up, sent}});
      log::info("remote: uploaded {} ({} bytes sent)", key.short_hex(), sent);
      return;
    }
    const std::string job_dir = new_upload_job_dir(m_upload_jobs, m_upload_batch);
    const UploadJob job{key, counter, m_failure_marker, build_id()};
    try {
      publish(remote, job_dir);
      if (!m_upload_batch.empty()) {
        write_upload_job(job_dir, job);
        log::info("remote: upload of {} left for the compile's batch ({})", key.short_hex(),
                  job_dir);
        return;
      }
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove_all(job_dir, ignored);
      throw;
    }
    start_upload_job(job_dir, job);
    log::info("remote: uploading {} in the background ({})", key.short_hex(), job_dir);
  });
}

bool CacheStorage::remote_writable() const
{
  return remote_usable() && !m_remote->settings().read_only;
}

bool CacheStorage::with_remote(const Digest& key, bool upload,
                               const std::function<void(RemoteBackend&)>& call)
{
  if (m_remote != nullptr) {
    say_left_line();
  }
  if (upload ? !remote_writable() : !remote_usable()) {
    return false;
  }
  try {
    call(*m_remote);
    return true;
  } catch (const RemoteUntrusted& error) {
    remote_untrusted(key, error.what());
    return false;
  } catch (const RemoteOverBudget& error) {
    remote_over_budget(key, error);
    return false;
  } catch (const FileWriteError& error) {
    if (!error.disk_full()) {
      remote_failed(key, error.what());
      return false;
    }
    local_disk_full(error);
    return false;
  } catch (const std::filesystem::filesystem_error& error) {
    if (error.code() != std::errc::no_space_on_device) {
      remote_failed(key, error.what());
      return false;
    }
    local_disk_full(FileWriteError(error.path1().string(), ENOSPC));
    return false;
  } catch (const std::exception& error) {
    remote_failed(key, error.what());
    return false;
  }
}

void CacheStorage::local_disk_full(const FileWriteError& error)
{
  log::info("remote: not kept, the local disk is full: {}", error.what());
  const std::string warned = beside_marker("remote-disk-full-warned");
  if (!m_build_id.empty() || (!warned.empty() && !first_time_this_build(warned))) {
    return;  // a background upload has no terminal; its compile said what it had to
  }
  say_to_terminal(
    fmt::format("nvfresh: the local disk is full, not the remote cache: {} (what {} "
                "sent is not kept here; the build goes on, and the remote stays on; free "
                "space there, or set NVFRESH_CACHE_DIR to a disk with room; said once per "
                "build)\n",
                error.what(), m_remote->settings().url));
}

void CacheStorage::remote_failed(const Digest& key, const std::string& what)
{
  m_store.count(key, CacheCounter::remote_errors);
  log::info("remote: {} failed: {} (compiling locally)", m_remote->settings().url, what);
  if (!m_failure_marker.empty() && marker_expired(m_failure_marker)) {
    std::error_code ignored;  // a marker that stays is only said and kept once more
    std::filesystem::remove(m_failure_marker, ignored);
  }
  if (m_failure_marker.empty() || first_time_this_build(m_failure_marker, build_id())) {
    const std::string line =
      fmt::format("nvfresh: the remote cache {} failed: {} (the build goes on with the local "
                  "cache, and asks the remote again in {} minutes; said once per build)\n",
                  m_remote->settings().url, what, k_failure_marker_life_ns / k_minute_ns);
    if (!m_build_id.empty() && !m_failure_marker.empty()) {
      try {  // no terminal here: the build's next compile says it
        write_file_atomically(m_failure_marker + ".line", line);
      } catch (const std::exception& error) {
        log::info("remote: the failure's line is not kept: {}", error.what());
      }
      return;
    }
    say_to_terminal(line);
  }
}

std::string CacheStorage::beside_marker(const char* name) const
{
  return m_failure_marker.empty()
           ? std::string()
           : (std::filesystem::path(m_failure_marker).parent_path() / name).string();
}

void CacheStorage::remote_over_budget(const Digest& key, const RemoteOverBudget& error)
{
  const RemoteSettings& settings = m_remote->settings();
  log::info("remote: {}: {} (compiling locally)", settings.url, error.what());
  if (!error.newly_over()) {
    return;  // the compile was counted and said when it went over
  }
  m_store.count(key, CacheCounter::remote_over_budget);
  const std::string warned = beside_marker("remote-slow-warned");
  if (warned.empty() || first_time_this_build(warned, build_id())) {
    say_to_terminal(
      fmt::format("nvfresh: the remote cache {} is slow: a compile's lookups took their "
                  "whole budget of {} and it went on locally; the build goes on with the "
                  "remote (a far server may need more: NVFRESH_REMOTE_COMPILE_BUDGET; said "
                  "once per build)\n",
                  settings.url, budget_text(settings.compile_budget_ns)));
  }
  if (m_failure_marker.empty()) {
    return;  // no build to sum over
  }
  const BuildSum sum = add_to_build_sum_file(beside_marker("remote-over-budget"), build_id(),
                                             error.spent_ns(), settings.build_budget_ns);
  if (sum.total_ns < settings.build_budget_ns) {
    return;
  }
  if (marker_expired(m_failure_marker)) {
    std::error_code ignored;
    std::filesystem::remove(m_failure_marker, ignored);
  }
  first_time_this_build(m_failure_marker, build_id());  // off for the rest of the build
  log::info("remote: {} is off for the rest of this build: its slow compiles lost {}", settings.url,
            budget_text(sum.total_ns));
  if (sum.crossed) {
    say_to_terminal(
      fmt::format("nvfresh: the remote cache {} is slow: compiles of this build lost {} "
                  "to it, the build's budget of {} (NVFRESH_REMOTE_BUILD_BUDGET); the rest "
                  "of this build compiles without it (said once per build)\n",
                  settings.url, budget_text(sum.total_ns), budget_text(settings.build_budget_ns)));
  }
}

void CacheStorage::remote_untrusted(const Digest& key, const std::string& why)
{
  m_store.count(key, CacheCounter::remote_untrusted);
  log::info("remote: {}'s result for {} not served: {}", m_remote->settings().url, key.short_hex(),
            why);
  const std::string marker = beside_marker("remote-untrusted");
  if (marker.empty() || first_time_this_build(marker)) {
    say_to_terminal(
      fmt::format("nvfresh: the remote cache {} has results that no trusted key signed "
                  "(NVFRESH_REMOTE_TRUSTED_KEYS); the first: {}. They are misses, "
                  "counted as untrusted in `nvfresh cache stats` (said once per build)\n",
                  m_remote->settings().url, why));
  }
}

StepEntries CacheStorage::find_step(const Digest& key, const std::vector<std::string>& arguments,
                                    const std::function<bool(const StepEntry&)>& holds)
{
  StepEntries found;
  found.local = m_store.read_step(key, &found.why_missed);
  found.local_holds = found.local && holds(*found.local);
  if (!found.local_holds) {
    found.remote = fetch_step(key, arguments);
    found.remote_holds = found.remote && holds(*found.remote);
    if (found.remote && !found.remote_holds) {
      log::info("step {}: the remote's entry does not hold: an input changed", key.short_hex());
    }
  }
  return found;
}

std::optional<StepEntry> CacheStorage::fetch_step(const Digest& key,
                                                  const std::vector<std::string>& arguments)
{
  std::optional<StepEntry> entry;
  with_remote(key, false, [&](RemoteBackend& remote) {
    std::int64_t bytes = 0;
    auto text = remote.fetch_step(step_action(key, arguments, k_step_key_version), bytes);
    m_store.count(key, CacheCounter::remote_bytes_down, bytes);
    std::string why = "not on the remote";
    entry = text ? parse_step_entry(*text, &why) : std::nullopt;
    if (entry && entry->key != key) {
      entry.reset();
      why = "stored under another key";
    }
    if (!entry) {
      m_store.count(key, CacheCounter::remote_step_misses);
      log::info("remote: step {}: {}", key.short_hex(), why);
      return;
    }
    m_store.count(key, CacheCounter::remote_step_hits);
    log::info("remote: step {} fetched ({} bytes)", key.short_hex(), bytes);
    try {
      m_store.write_step(key, *entry);
    } catch (const std::exception& error) {  // served all the same; the next build asks again
      log::info("remote: step {} not stored locally: {}", key.short_hex(), error.what());
    }
  });
  return entry;
}

void CacheStorage::store_step(const Digest& key, const std::vector<std::string>& arguments,
                              const StepEntry& entry)
{
  m_store.write_step(key, entry);
  upload(key, CacheCounter::remote_step_uploads,
         [&](RemoteBackend& remote, const std::string& job_dir) {
           StepEntry bound = entry;
           bound.key = key;
           return remote.publish_step(step_action(key, arguments, k_step_key_version),
                                      serialize_step_entry(bound), job_dir);
         });
}

}  // namespace nvfresh

// The cache's storage front, as ccache has storage::Storage: the local store (cache_store.hpp) and
// an optional remote behind a small backend (remote_cache.hpp, RemoteBackend), with the remote's
// failure policy and its counters. The object cache (object_cache.hpp: lookup and binding) and the
// step cache (step/: a cicc or ptxas step) both reach the store and the remote through it.
//
// The failure policy: a remote call that fails (server down, slow, refusing; not a miss) is counted
// (remote_errors), logged, said once per build on stderr and written to the failure marker, a file
// under the build tree's record root (util/build_invocation.hpp): while the marker names this
// build, no compile and no step of it asks the remote again, for k_failure_marker_life_ns at most.
// The marker expires so that a "build" that is a whole login session (compiles run outside make
// and ninja share the session's id) does not lose the remote for good after one failure: the next
// call asks again, and a failure then is said and marked again. A local disk found full while
// keeping what the remote sent is not the remote's failure: one line of its own naming the file
// (once per build), no marker, no error counted. A slow remote is held to budgets
// (cache/remote_budget.hpp): a compile over its budget goes on locally, said once per build, and a
// build whose compiles lost its budget in all writes the failure marker for the rest of the build.
// The build never fails for it: the
// call is a miss, the store only local. A read-only remote is asked, never uploaded to.
#pragma once

#include "cache/cache_store.hpp"
#include "cache/remote_cache.hpp"
#include "cache/step_entry.hpp"
#include "config/config.hpp"
#include "util/environment.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct CacheSettings {
  bool enabled = true;
  std::string dir;
  std::uint64_t max_bytes = 0;  // 0: 5% of the file system, at most 20 GiB
  std::uint64_t min_free = 0;
  double verify_fraction = 0;
  bool across_checkouts = false;  // serve entries whose objects name another tree's paths
  bool shared = false;            // a team's cache dir (NVFRESH_CACHE_SHARED): cache_dir_refusal
};

// The cache settings of a configuration (config.hpp): NVFRESH_CACHE, NVFRESH_CACHE_DIR, ...
CacheSettings cache_settings(const Config& config, const Environment& env);

// A step's entries as the storage finds them (step/step_plan.hpp decides on them): the local one
// and, where there is none or it does not hold, the remote's.
struct StepEntries {
  std::optional<StepEntry> local;
  bool local_holds = false;  // every file it read unchanged, every failed lookup still failing
  std::string why_missed;    // why there is no local entry (read_step's words)
  std::optional<StepEntry> remote;
  bool remote_holds = false;
};

inline constexpr std::int64_t k_minute_ns = 60LL * 1'000'000'000;

class CacheStorage {
public:
  // How long a failure keeps the remote off: a build's worth of compiles saved from the deadline
  // of a remote that is down (1 s to connect, each), short enough that a server back up is used.
  static constexpr std::int64_t k_failure_marker_life_ns = 10 * k_minute_ns;

  explicit CacheStorage(const CacheSettings& settings);

  const CacheSettings& settings() const { return m_settings; }
  CacheStore& local() { return m_store; }
  const CacheStore& local() const { return m_store; }

  // Shares the cache through the remote of `settings` (the nvfresh-remote helper; its SHA-256
  // cache in the store's dir unless one is set). `failure_marker`: see above; "" keeps none (every
  // failure is then said, and the remote is asked again).
  void use_remote(RemoteSettings settings, std::string failure_marker);
  // The same with any backend (a unit test's fake).
  void use_remote(std::unique_ptr<RemoteBackend> backend, std::string failure_marker);
  void set_failure_marker(std::string failure_marker);
  // The compile's ledger of remote time (cache/remote_budget.hpp); "" none.
  void set_budget_ledger(std::string file);
  // The compile's helper co-process (cache/remote_coprocess.hpp), its socket's name; "" none.
  void set_helper_socket(std::string name);

  // The remote's settings as in use (its SHA-256 cache filled in); nullptr without a remote.
  const RemoteSettings* remote_settings() const;
  // Whether there is a remote and it has not failed in this build.
  bool remote_usable() const;
  // remote_usable, and not read-only.
  bool remote_writable() const;

  // A store's upload: `publish` calls the backend's publish or publish_step, with a job dir or ""
  // to send it now, and returns the bytes sent. Sent now, counted under `counter` (and
  // remote_bytes_up), unless uploads go to the background (upload_in_background): then the upload
  // is written into a job dir and sent by a detached process (background_upload.hpp), which
  // counts it. Never throws for the remote.
  void upload(const Digest& key, CacheCounter counter,
              const std::function<std::int64_t(RemoteBackend&, const std::string&)>& publish);
  // Uploads from now on go to the background, their jobs under `jobs_dir` ("" sends them now).
  void upload_in_background(std::string jobs_dir);
  // Background uploads from now on are jobs of the batch `batch` (background_upload.hpp), left
  // for the compile's end to send ("" starts each job's sender at once).
  void upload_in_batch(std::string batch);
  // Where background upload jobs go ("" sent in the compile).
  const std::string& upload_jobs_dir() const { return m_upload_jobs; }
  // For a process that runs on after its build (a background upload): the failure marker is kept
  // for the build `build_id`, and a failure's line, which this process has no terminal to say, is
  // left beside the marker for the build's next compile to say.
  void keep_failures_for(std::string build_id);

  // Runs `call` on the remote when it is usable (writable, with `upload`). A throw is a failure of
  // the remote, on the entry `key`: counted, said, marked (above). Whether `call` ran and returned.
  bool with_remote(const Digest& key, bool upload, const std::function<void(RemoteBackend&)>& call);

  // The step `key`'s entries: the local one, judged by `holds`; where there is none or it does not
  // hold, the remote's for the step Action of `arguments` (step_action, salted with
  // k_step_key_version), judged too and stored locally. Never throws for the remote.
  StepEntries find_step(const Digest& key, const std::vector<std::string>& arguments,
                        const std::function<bool(const StepEntry&)>& holds);
  // The remote's step entry for `key`, stored locally too; nullopt when there is none, it is
  // damaged or stored under another key (a remote step miss, counted), or the remote is unusable
  // or fails. Never throws.
  std::optional<StepEntry> fetch_step(const Digest& key, const std::vector<std::string>& arguments);
  // Stores a step entry locally, then uploads it (unless the remote is unusable or read-only).
  // Throws when the local store fails (then nothing is uploaded); never for the remote.
  void store_step(const Digest& key, const std::vector<std::string>& arguments,
                  const StepEntry& entry);

private:
  void remote_failed(const Digest& key, const std::string& what);
  // A lookup over the compile's budget (a miss). The first of a compile is counted, said once per
  // build, and adds the compile's remote time to the build's sum; the one that takes the sum to
  // the build budget turns the remote off for the rest of the build (the failure marker) and says
  // so, once.
  void remote_over_budget(const Digest& key, const RemoteOverBudget& error);
  // `name` beside the failure marker ("" without one).
  std::string beside_marker(const char* name) const;
  // A result that no trusted key signed, on the entry `key`: counted, logged, said once per build
  // (the "remote-untrusted" marker beside the failure marker). The remote stays in use.
  void remote_untrusted(const Digest& key, const std::string& why);
  // A local write that found its disk full while keeping what the remote sent: not the remote's
  // fault (no marker, no error counted), one line naming the local file, once per build.
  void local_disk_full(const FileWriteError& error);
  std::string build_id() const;
  // Says the line a background upload left beside the marker, once: the next compile that asks
  // the remote, in that build or a later one, takes it.
  void say_left_line() const;

  CacheSettings m_settings;
  CacheStore m_store;
  std::unique_ptr<RemoteBackend> m_remote;
  std::string m_failure_marker;
  std::string m_upload_jobs;   // "": uploads are sent in the compile
  std::string m_upload_batch;  // "": each background upload's sender started at once
  std::string m_build_id;      // "": this process's build (build_invocation_id)
};

}  // namespace nvfresh

// The object cache's two moments in a compile that nvfresh could not skip: before nvcc runs, a
// lookup that may serve the object (compile/serve.hpp); after nvcc ran and the compile was
// recorded, a store, or, for a hit sampled for verification (NVFRESH_CACHE_VERIFY), a comparison
// of the fresh codegen with the entry. Nothing here fails a build or changes what nvcc prints: an
// error is a miss or "not cached", logged; the lines a user sees, once per build, are that the
// cache stores nothing because its disk is full, or that its dir is not used because another user
// owns it or others may write it (cache_dir_refusal).
#pragma once

#include "cache/object_cache.hpp"
#include "cache/remote_coprocess.hpp"
#include "compile/serve.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "outcome/outcome.hpp"
#include "record/record.hpp"
#include "util/environment.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct ServedCompile {
  Outcome outcome;            // served (or raced: an input changed while it was served)
  std::int64_t saved_ns = 0;  // how long nvcc took for the entry: what the hit saved
};

class CachePhase {
public:
  CachePhase(const Config& config, const Environment& env);
  // Sends the compile's batch of uploads (send_upload_batch); removes the compile's ledger of
  // remote time (cache/remote_budget.hpp), if it made one.
  ~CachePhase();
  CachePhase(const CachePhase&) = delete;
  CachePhase& operator=(const CachePhase&) = delete;

  // Whether a cache is set: also when its dir is refused (then serve() says why, once per build).
  bool enabled() const { return m_cache.has_value() || !m_refusal.empty(); }

  // Before the lookup, when nothing but the object changed since its record (decide_skip's
  // object_only): the object restored from the entry the record names (serve_recorded), or
  // nullopt (then serve() looks the compile up). Not while hits are sampled for verification.
  std::optional<ServedCompile> restore(const LoadedRecord& loaded, const ServeRequest& serve,
                                       FileHasher& hasher);

  // Before nvcc runs: the served outcome, or nullopt (compile). A hit sampled for verification is
  // kept for after_compile and not served.
  std::optional<ServedCompile> serve(const ServeRequest& serve, FileHasher& hasher);

  // Whether a hit was sampled for verification: that compile must run every step (no step cache).
  bool verifying() const { return m_verifying.has_value(); }

  // After the compile was recorded (outcome: what recording said). Stores a trusted, traced
  // compile (and names the entry in its record), or compares a sampled hit with the object its
  // entry holds; returns the outcome, its cause cache_verified or cache_mismatch for a sampled hit
  // (whose entry this compile then replaces).
  Outcome after_compile(const ServeRequest& serve, const Record& record, Outcome outcome,
                        const std::vector<std::string>& command);

private:
  Outcome after_verifying(const ServeRequest& serve, const Record& record,
                          const std::vector<std::string>& command);
  // Stores the compile (store_result) and names its entry in the record: the entry's key, or
  // nullopt when not stored.
  std::optional<Digest> store(const ServeRequest& serve, const Record& record,
                              const std::vector<std::string>& command);
  // Starts the remote helper co-process on the socket `name` when the remote is in use.
  void start_helper_coprocess(const std::string& name);
  // Starts one detached sender for the uploads the compile and its steps left in its batch,
  // through the compile's helper co-process, which then lives until they are sent.
  void send_upload_batch() noexcept;
  void warn_not_cached(const std::string& record_root, const std::string& detail) const;
  // Whether the cache is used; says once per build why not when its dir was refused.
  bool usable(const std::string& record_root) const;

  std::optional<ObjectCache> m_cache;
  std::string m_refusal;  // why the cache dir is not used, or ""
  std::string m_refused_dir;
  Environment m_env;
  std::optional<CacheHit> m_verifying;
  std::string m_budget_ledger;  // the compile's, once a lookup may have made it
  // The compile's remote helper, for its lookups and its steps' (ended with the compile).
  std::unique_ptr<RemoteCoprocess> m_coprocess;
  std::string m_upload_batch;  // the compile's batch of uploads, "" none
};

}  // namespace nvfresh

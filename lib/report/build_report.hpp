// What `nvfresh report` shows, gathered from what nvfresh already keeps for a build tree: the
// records judged (proof/linked_artifacts.hpp: fresh or stale, with reasons), the artifacts with the
// objects they link, and the events log (record/events.hpp). Nothing is compiled, no input is
// hashed beyond what the proof does: the report is a view of the records.
//
// - summary: objects fresh and stale (stale ones by cause); the last build and the whole history
//   counted by outcome, with the nvcc time spent (compiled, raced, failed) and saved (skipped,
//   served). The last build is the newest run of events with no gap over k_build_gap_ns between
//   one event and the start of the next (a compile's start is its end less its duration), and no
//   object twice (a build compiles an object once: an earlier event for it is an earlier build).
// - per TU: the last compile's wall time (the record's start to end), and where it went: the
//   per-pass split of record/pass_times.hpp (host, each arch's cicc and ptxas, link), when the
//   record has the times of its programs.
// - header edit cost: for every input that is neither a tool nor part of the toolchain (the CUDA
//   toolkit nvcc lives in, /usr/include, /usr/lib, /usr/bin, ...), the TUs that read it and the sum of their
//   last compile times: what an edit of it costs in nvcc time. Most expensive first.
// - artifacts: each linked artifact with its recorded objects and their state.
// - cache: per object and in all, served (hits) against compiled (misses, by cause); skips are
//   neither (nvcc had nothing to do).
#pragma once

#include "proof/linked_artifacts.hpp"
#include "record/events.hpp"
#include "record/pass_times.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nvfresh {

inline constexpr std::int64_t k_build_gap_ns = 60'000'000'000;

struct OutcomeTally {
  size_t count = 0;
  std::int64_t duration_ns = 0;
};

struct BuildSummary {
  std::int64_t start_ns = 0;  // the first event's time (0: no events)
  std::int64_t end_ns = 0;
  size_t compiles = 0;
  std::map<std::string, OutcomeTally> outcomes;  // by outcome_name
  std::int64_t nvcc_spent_ns = 0;                // compiled, raced, failed
  std::int64_t nvcc_saved_ns = 0;                // skipped, served
};

struct TranslationUnit {
  std::string object;
  std::string source;
  bool fresh = false;
  std::vector<std::string> stale_reasons;  // StaleReason::describe()
  std::int64_t compile_ns = 0;             // the last compile's wall time (0: not known)
  std::string last_outcome;                // of the newest event for the object ("" none)
  PassSplit passes;                        // empty rows: the record has no program times
};

struct HeaderCost {
  std::string path;
  std::vector<std::string> objects;  // the TUs that read it (sorted)
  std::int64_t cost_ns = 0;          // the sum of their last compile times
};

struct ArtifactObject {
  std::string object;
  std::string state;  // "fresh", "stale", or "unrecorded"
};

struct ReportArtifact {
  std::string path;
  std::string kind;  // artifact_kind_name
  bool fresh = false;
  std::vector<std::string> reasons;  // ArtifactReason::describe()
  std::vector<ArtifactObject> objects;
};

struct ObjectCacheSplit {
  std::string object;
  size_t hits = 0;                            // served
  size_t misses = 0;                          // compiled or raced
  size_t skipped = 0;                         // nvcc not needed at all
  std::map<std::string, size_t> miss_causes;  // cause_name -> count
};

struct CacheSplit {
  size_t hits = 0;
  size_t misses = 0;
  size_t skipped = 0;
  std::map<std::string, size_t> miss_causes;
  std::vector<ObjectCacheSplit> objects;  // sorted by object
};

// The shared cache's own counters (cache/cache_store.hpp), for every tree that uses it: whole
// objects, and the per-step cache's tool runs (cicc, ptxas) served or run.
struct StoreCounters {
  std::string dir;  // "" when no cache was read (off, or not made yet)
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  std::int64_t step_hits = 0;
  std::int64_t step_misses = 0;
  std::int64_t step_saved_ns = 0;
};

struct Report {
  std::string record_root;
  size_t objects = 0;
  size_t fresh = 0;
  size_t stale = 0;
  std::map<std::string, size_t> stale_causes;  // cause_name -> objects
  BuildSummary last_build;
  BuildSummary history;
  std::vector<TranslationUnit> units;    // slowest compile first
  std::vector<HeaderCost> header_costs;  // most expensive first
  std::vector<ReportArtifact> artifacts;
  CacheSplit cache;
  StoreCounters store;  // filled by the caller (build_report reads no cache)
};

// Whether a recorded input belongs to the toolchain rather than to the project: under the toolkit
// nvcc runs from (the directory above its bin/), or a system directory (/usr/include, /usr/lib,
// /usr/share, /lib, /etc, /opt/nvidia, /usr/local/cuda*). compiler: the record's nvcc.
bool is_toolchain_path(const std::string& path, const std::string& compiler);

// Called once per object gathered (done, total): a hook for a progress display on big trees.
using ReportProgress = std::function<void(size_t done, size_t total)>;

Report build_report(const std::string& record_root, const std::vector<ObjectStatus>& objects,
                    const ArtifactReport& artifacts, const std::vector<BuildEvent>& events,
                    const ReportProgress& progress = {});

nlohmann::json report_to_json(const Report& report);

// The per-pass split as JSON rows {part, kind, seconds, runs, served}, in the split's order (the
// report's units and `explain --json` alike).
nlohmann::json pass_split_rows_json(const PassSplit& split);

}  // namespace nvfresh

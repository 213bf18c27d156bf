// A cache hit carried out: the object written atomically where the build wants it, the depfile,
// what the compile printed replayed, and a normal record, so that check, explain, rdeps, sync and
// the next edit work exactly as after a compile. A hit that cannot stand in for a compile of this
// tree now (the console would print differently, the build wants a depfile the entry lacks, an
// input changed since the lookup) is not served: the caller compiles.
#pragma once

#include "cache/object_cache.hpp"
#include "compile/compile_plan.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "outcome/outcome.hpp"
#include "record/record.hpp"
#include "record/record_root.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nvfresh {

struct ServeRequest {
  const CompileRequest& request;
  const CompilerChain& chain;
  const CompilePlan& plan;
  const std::optional<Record>& previous;  // the record of the last build of this object
  std::int64_t start_ns = 0;              // coarse_now_ns() before the lookup's first stat
};

// The directory of the record root's build tree: where the tree's paths are relative to.
std::string build_tree_of(const CompilePlan& plan);

// What the cache needs to know of this compile.
CompileIdentity compile_identity(const CompileRequest& request, const CompilePlan& plan);

// Why the hit cannot stand in for this compile ("" when it can).
std::string serve_doubt(const CacheHit& hit, const CompilePlan& plan);

// Serves the hit: the served outcome, or nullopt (with *why) when it could not stand in after all
// (nothing the build sees was changed then but, at most, the object: the caller compiles).
// Throws on a write failure (the caller compiles).
std::optional<Outcome> serve_hit(const CacheHit& hit, const ServeRequest& serve, FileHasher& hasher,
                                 std::string* why);

// The object a record names, served from the entry the record names (Record::cache_entry), when
// nothing but the object changed since that record (decide_skip's object_only: a clean, a deleted
// or overwritten object) and the entry holds those very bytes (ObjectCache::entry_for_record):
// what a skip does, with the object written first. The manifest is not read and no input set
// compared; the record vouches for the inputs as it does for a skip. `loaded` holds that record
// (load_record with its bytes kept), `serve.start_ns` was taken before its inputs were looked at.
// `elsewhere`: "served from another checkout: names …" where the entry names another tree's paths.
// Throws on a write failure (the caller compiles).
Outcome serve_recorded(const Digest& key, const CacheEntry& entry, const LoadedRecord& loaded,
                       const ServeRequest& serve, FileHasher& hasher,
                       const std::string& elsewhere = {});

// "served from the cache (entry 3f2a…, first compiled 2026-12-01 11:30 in /home/u/build)".
std::string served_description(const CacheHit& hit);
std::string served_description(const Digest& key, const CacheEntry& entry);

}  // namespace nvfresh

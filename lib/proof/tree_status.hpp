// Every CUDA object of a build tree, each compared with the disk: the data behind check, sync and
// explain. The objects are those nvfresh recorded, and those the build graph compiles with nvcc
// that have no usable record: an object nothing vouches for is never fresh (a record lost to a
// full disk, or an object built without nvfresh). A record that describes an object outside the
// tree (a build tree copied with its .nvfresh) is not this tree's: it is set aside, never judged,
// and nothing is written because of it.
#pragma once

#include "freshness/freshness.hpp"
#include "freshness/record_index.hpp"
#include "proof/build_graph.hpp"
#include "record/record.hpp"
#include "util/environment.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct ObjectStatus {
  std::string record_file;
  std::optional<Record> record;  // the record, when it was read (always, unless fresh by the index)
  std::optional<FileFingerprint> output;  // the object as its record has it (usable record only)
  std::string object;                     // from the record, its head, or the build graph
  std::string source;
  FreshnessVerdict verdict;
};

// What belongs to the tree being judged.
struct TreeScope {
  std::string build_dir;  // absolute, symlinks resolved: objects must lie under it
  std::string record_root;
  bool contains(const std::string& path) const;
};

TreeScope tree_scope(const std::string& build_dir, const std::string& configured_record_dir);

struct TreeObjects {
  std::vector<ObjectStatus> objects;
  std::vector<std::string> foreign;  // record files describing objects outside the tree
  RecordIndex index;                 // what they were judged with (TreeRecords::indexed)
};

// Called after each record with (done, total); for progress displays.
using TreeProgress = std::function<void(size_t done, size_t total)>;

// How the records are read. indexed: a record that the tree's record index (freshness/
// record_index.hpp) shows still fresh is not read (ObjectStatus::record stays empty), and the index
// is brought up to date (check, sync); every_record: each one is read (explain, which prints them).
enum class TreeRecords { indexed, every_record };

// The records of the scope's record root, judged, and every compile of `compiles` (from the build
// graph) without a usable record whose object exists (stale: no record).
TreeObjects judge_tree_objects(const TreeScope& scope, FreshnessChecker& checker,
                               const std::vector<CompileEdge>& compiles,
                               const TreeProgress& progress = {},
                               TreeRecords records = TreeRecords::indexed);

}  // namespace nvfresh

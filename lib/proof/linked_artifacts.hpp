// Every linked artifact of a build tree that contains recorded objects, judged against those
// objects: "linked after the current version of each object it contains", or "relink pending"
// with the object concerned. Which artifact contains which object comes from the build graph
// (build_graph.hpp) and from link records (link_record.hpp). A link record whose artifact is still
// the one on disk proves the content ("linked from attention.cu.o 3f2a…"): every object, static
// library and device-link object it read is compared with the disk, whatever the build graph says
// (CMake gives a device-link step its libraries only as order-only inputs, so the build tool never
// relinks it when they change); a shared library it read may change without a relink. Without a
// link record, the artifact's mtime is compared with the time the object's current version was
// written.
#pragma once

#include "freshness/file_hasher.hpp"
#include "proof/build_graph.hpp"
#include "proof/tree_status.hpp"

#include <memory>
#include <string>
#include <vector>

namespace nvfresh {

enum class ArtifactIssue {
  not_linked,    // the artifact does not exist (its target was not built)
  object_stale,  // it contains an object that is itself stale: recompile, then relink
  relink_pending,  // an object or static library it contains is newer than / differs from what it linked
  library_not_fresh,  // a static library or device-link object it contains is not fresh itself
  read_changed,       // a file its link record says it read changed since (a library CMake gives
                      // the step only as an order-only input: the build tool does not relink)
};

std::string_view issue_name(ArtifactIssue issue);

struct ArtifactReason {
  ArtifactIssue kind = ArtifactIssue::relink_pending;
  std::string path;    // the object or library concerned
  std::string before;  // what was linked (short hash or time)
  std::string after;   // what is there now
  std::string describe() const;
};

struct ArtifactStatus {
  LinkEdge edge;
  std::vector<std::string> recorded_objects;  // objects in it that nvfresh recorded
  std::string proof;                          // "link record" (content hashes) or "mtime"
  std::vector<std::string> linked_reads;  // what its link record says it read (proof: link record)
  std::vector<ArtifactReason> reasons;
  bool fresh() const { return reasons.empty(); }
};

struct ArtifactReport {
  std::string graph_source;  // "ninja", "make", "link records", or "" (none found)
  std::vector<ArtifactStatus> artifacts;
  const ArtifactStatus* find(const std::string& artifact) const;
};

ArtifactReport evaluate_artifacts(const BuildGraph& graph, const std::vector<ObjectStatus>& objects,
                                  const std::string& record_root, FileHasher& hasher);

// The graph plus any artifact known only from a link record (e.g. no build graph readable).
BuildGraph merge_link_records(BuildGraph graph, const std::string& record_root);

// Everything check, explain and rdeps show: the records judged, the build graph, the artifacts.
struct ProvenTree {
  std::string record_root;
  TreeScope scope;
  std::vector<ObjectStatus> objects;
  std::vector<std::string> foreign;  // record files describing objects outside the tree
  BuildGraph graph;                  // with link-record-only artifacts merged in
  ArtifactReport artifacts;
  // What the proof was worked out with: the record index and the file hashes, held so that a
  // command can leave them to the process's end (util/keep_until_exit.hpp): freeing a 10k-object tree's
  // index and hashes cost a tenth of check's and sync's time.
  RecordIndex index;
  std::unique_ptr<FileHasher> hasher;
};

// What sync must do so that the build tool relinks the artifacts whose content is, or will be
// after this build, older than what they contain, where the build tool cannot see it: a link step
// whose inputs CMake gives it only as order-only inputs (a device link reading static libraries),
// or a read whose content changed under an old mtime. Such an artifact is made older than anything
// (the next build relinks it), and the recorded objects it read have their compile re-run (nvfresh
// skips nvcc; the object's new mtime makes the build tool relink it in this very build, after the
// libraries it orders before it).
struct RelinkPlan {
  std::vector<const ArtifactStatus*> artifacts;  // with the reason
  std::vector<std::string> objects;              // recorded, fresh objects whose compile re-runs
};

RelinkPlan plan_relinks(const ProvenTree& tree);

// progress: (done, total) after each record; may be empty. records: tree_status.hpp.
ProvenTree prove_tree(const std::string& build_dir, const Environment& env,
                      const TreeProgress& progress = {},
                      TreeRecords records = TreeRecords::indexed);

}  // namespace nvfresh

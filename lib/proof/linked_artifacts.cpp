#include "proof/linked_artifacts.hpp"

#include "config/config.hpp"
#include "proof/build_graph_loader.hpp"
#include "record/link_record.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/string_hash.hpp"
#include "util/time_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

struct IssueName {
  ArtifactIssue issue;
  std::string_view name;
};

constexpr IssueName k_issue_names[] = {
  {ArtifactIssue::not_linked, "not_linked"},
  {ArtifactIssue::object_stale, "object_stale"},
  {ArtifactIssue::relink_pending, "relink_pending"},
  {ArtifactIssue::library_not_fresh, "library_not_fresh"},
  {ArtifactIssue::read_changed, "read_changed"},
};

// A tree's objects by path: views of ObjectStatus::object, which outlive it (10k of them: as a
// std::map of copies, building and freeing it was a tenth of sync's instructions).
using ObjectIndex = StringViewMap<const ObjectStatus*>;

bool is_shared_library(const std::string& path)
{
  const std::string name = fs::path(path).filename().string();
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

// Artifacts one link step contains: a static library or an object (a device-link object).
bool is_contained_kind(ArtifactKind kind)
{
  return kind == ArtifactKind::static_library || kind == ArtifactKind::object;
}

class Evaluator {
public:
  Evaluator(const BuildGraph& graph, const ObjectIndex& objects, const std::string& root,
            FileHasher& hasher)
    : m_objects(objects), m_root(root), m_hasher(hasher)
  {
    for (const auto& edge : graph.edges) {
      m_edges.emplace(edge.artifact, &edge);
    }
  }

  const ArtifactStatus& evaluate(const LinkEdge& edge);
  bool contains_recorded(const LinkEdge& edge, int depth = 0);

private:
  const std::optional<LinkRecord>& link_record(const std::string& artifact);
  const LinkEdge* contained_artifact(const std::string& path) const;
  std::vector<std::string> inputs_of(const LinkEdge& edge);
  void judge_linked_reads(const LinkEdge& edge, const LinkRecord& link, ArtifactStatus& status);
  void judge_by_mtime(const LinkEdge& edge, const FileStat& artifact, ArtifactStatus& status);
  void judge_object(const std::string& object, const FileFingerprint* linked,
                    const FileStat& artifact, bool by_link_record, ArtifactStatus& status);

  const ObjectIndex& m_objects;
  std::string m_root;
  FileHasher& m_hasher;
  std::map<std::string, const LinkEdge*> m_edges;
  std::map<std::string, std::optional<LinkRecord>> m_links;
  std::map<std::string, ArtifactStatus> m_done;
  std::set<std::string> m_in_progress;
};

const std::optional<LinkRecord>& Evaluator::link_record(const std::string& artifact)
{
  auto found = m_links.find(artifact);
  if (found == m_links.end()) {
    found = m_links.emplace(artifact, load_link_record(m_root, artifact)).first;
  }
  return found->second;
}

const LinkEdge* Evaluator::contained_artifact(const std::string& path) const
{
  auto edge = m_edges.find(path);
  return edge != m_edges.end() && is_contained_kind(edge->second->kind) ? edge->second : nullptr;
}

// What a link step takes in: the graph's objects and libraries, and what its link record read.
std::vector<std::string> Evaluator::inputs_of(const LinkEdge& edge)
{
  std::vector<std::string> inputs = edge.objects;
  inputs.insert(inputs.end(), edge.libraries.begin(), edge.libraries.end());
  if (const auto& link = link_record(edge.artifact)) {
    for (const auto& read : link->reads) {
      inputs.push_back(read.path);
    }
  }
  return inputs;
}

bool Evaluator::contains_recorded(const LinkEdge& edge, int depth)
{
  if (depth > 16) {
    return false;
  }
  for (const auto& input : inputs_of(edge)) {
    const LinkEdge* inner = m_objects.count(input) > 0 ? nullptr : contained_artifact(input);
    if (m_objects.count(input) > 0 || (inner != nullptr && contains_recorded(*inner, depth + 1))) {
      return true;
    }
  }
  return false;
}

const ArtifactStatus& Evaluator::evaluate(const LinkEdge& edge)
{
  if (auto done = m_done.find(edge.artifact); done != m_done.end()) {
    return done->second;
  }
  m_in_progress.insert(edge.artifact);
  ArtifactStatus status;
  status.edge = edge;
  FileStat artifact = m_hasher.stat(edge.artifact);
  std::optional<LinkRecord> link = link_record(edge.artifact);
  if (link && !(artifact.exists && m_hasher.unchanged(link->output))) {
    link.reset();  // the artifact was rewritten without nvfresh seeing it: fall back to mtime
  }
  if (!artifact.exists) {
    status.reasons.push_back({ArtifactIssue::not_linked, edge.artifact, "", ""});
    status.proof = "none";
  } else {
    status.proof = link ? "link record" : "mtime";
    link ? judge_linked_reads(edge, *link, status) : judge_by_mtime(edge, artifact, status);
  }
  m_in_progress.erase(edge.artifact);
  return m_done[edge.artifact] = std::move(status);
}

void Evaluator::judge_object(const std::string& object, const FileFingerprint* linked,
                             const FileStat& artifact, bool by_link_record, ArtifactStatus& status)
{
  status.recorded_objects.push_back(object);
  const ObjectStatus& object_status = *m_objects.at(object);
  if (!object_status.verdict.fresh() || !object_status.output) {
    status.reasons.push_back({ArtifactIssue::object_stale, object, "", ""});
    return;
  }
  const FileFingerprint& current = *object_status.output;
  if (by_link_record) {
    if (linked == nullptr || linked->hash != current.hash) {
      status.reasons.push_back({ArtifactIssue::relink_pending, object,
                                linked ? linked->hash.short_hex() : std::string("not linked"),
                                current.hash.short_hex()});
    }
  } else if (artifact.mtime_ns < current.mtime_ns) {
    status.reasons.push_back({ArtifactIssue::relink_pending, object,
                              format_local_time(artifact.mtime_ns, false),
                              format_local_time(current.mtime_ns, false)});
  }
}

// With a link record: every file the link read is compared with the disk, and so is every
// recorded object the graph says it links.
void Evaluator::judge_linked_reads(const LinkEdge& edge, const LinkRecord& link,
                                   ArtifactStatus& status)
{
  std::set<std::string> read_paths;
  const FileStat none;
  for (const auto& read : link.reads) {
    read_paths.insert(read.path);
    status.linked_reads.push_back(read.path);
    if (m_objects.count(read.path) > 0) {
      judge_object(read.path, &read, none, true, status);
      continue;
    }
    const LinkEdge* inner = contained_artifact(read.path);
    if (inner != nullptr && m_in_progress.count(read.path) == 0 && contains_recorded(*inner) &&
        !evaluate(*inner).fresh()) {
      status.reasons.push_back({ArtifactIssue::library_not_fresh, read.path, "", ""});
      continue;
    }
    std::optional<FileFingerprint> now;
    if (!is_shared_library(read.path) && !m_hasher.unchanged(read, &now)) {
      // A dependency the build tool knows is merely pending; any other read it cannot see.
      const auto& deps = edge.dependencies;
      const bool known =
        edge.dependencies_known && std::find(deps.begin(), deps.end(), read.path) != deps.end();
      status.reasons.push_back({known ? ArtifactIssue::relink_pending : ArtifactIssue::read_changed,
                                read.path, read.hash.short_hex(),
                                now ? now->hash.short_hex() : std::string("missing")});
    }
  }
  for (const auto& object : edge.objects) {
    if (m_objects.count(object) > 0 && read_paths.count(object) == 0) {
      judge_object(object, nullptr, none, true, status);
    }
  }
}

// Without a link record: mtimes, for the graph's objects and the static libraries it links.
void Evaluator::judge_by_mtime(const LinkEdge& edge, const FileStat& artifact,
                               ArtifactStatus& status)
{
  for (const auto& object : edge.objects) {
    if (m_objects.count(object) > 0) {
      judge_object(object, nullptr, artifact, false, status);
    }
  }
  for (const auto& library : edge.libraries) {
    const LinkEdge* inner = contained_artifact(library);
    if (inner == nullptr || !contains_recorded(*inner) || m_in_progress.count(library) > 0) {
      continue;
    }
    if (!evaluate(*inner).fresh()) {
      status.reasons.push_back({ArtifactIssue::library_not_fresh, library, "", ""});
    } else if (FileStat now = m_hasher.stat(library); artifact.mtime_ns < now.mtime_ns) {
      status.reasons.push_back({ArtifactIssue::relink_pending, library,
                                format_local_time(artifact.mtime_ns, false),
                                format_local_time(now.mtime_ns, false)});
    }
  }
}

}  // namespace

std::string_view issue_name(ArtifactIssue issue)
{
  for (const auto& entry : k_issue_names) {
    if (entry.issue == issue) {
      return entry.name;
    }
  }
  return "unknown";
}

std::string ArtifactReason::describe() const
{
  switch (kind) {
  case ArtifactIssue::not_linked: return "not linked yet (its target was not built)";
  case ArtifactIssue::object_stale:
    return fmt::format("relink pending: contains {}, which is stale (recompile, then relink)",
                       path);
  case ArtifactIssue::relink_pending:
    return fmt::format("relink pending: {} is newer than / differs from what was linked: {} -> {}",
                       path, before, after);
  case ArtifactIssue::library_not_fresh:
    return fmt::format("relink pending: contains {}, which is not fresh", path);
  case ArtifactIssue::read_changed:
    return fmt::format(
      "relink pending: {} changed since the link read it: {} -> {} (the build tool "
      "does not see this dependency; nvfresh sync makes the next build relink)",
      path, before, after);
  }
  return "relink pending";
}

const ArtifactStatus* ArtifactReport::find(const std::string& artifact) const
{
  for (const auto& status : artifacts) {
    if (status.edge.artifact == artifact) {
      return &status;
    }
  }
  return nullptr;
}

BuildGraph merge_link_records(BuildGraph graph, const std::string& record_root)
{
  for (auto& link : load_all_link_records(record_root)) {
    if (graph.find(link.artifact) != nullptr) {
      continue;
    }
    LinkEdge edge;
    edge.artifact = link.artifact;
    edge.kind = link.kind;
    for (const auto& read : link.reads) {
      const bool object = read.path.ends_with(".o") || read.path.ends_with(".obj");
      (object ? edge.objects : edge.libraries).push_back(read.path);
    }
    graph.edges.push_back(std::move(edge));
  }
  if (graph.generator.empty() && !graph.edges.empty()) {
    graph.generator = "link records";
  }
  return graph;
}

ArtifactReport evaluate_artifacts(const BuildGraph& graph, const std::vector<ObjectStatus>& objects,
                                  const std::string& record_root, FileHasher& hasher)
{
  ObjectIndex index;
  index.reserve(objects.size());
  for (const auto& object : objects) {
    if (!object.object.empty()) {
      index[object.object] = &object;
    }
  }
  Evaluator evaluator(graph, index, record_root, hasher);
  ArtifactReport report;
  report.graph_source = graph.generator;
  for (const auto& edge : graph.edges) {
    if (evaluator.contains_recorded(edge)) {
      report.artifacts.push_back(evaluator.evaluate(edge));
    }
  }
  return report;
}

namespace {

class RelinkPlanner {
public:
  explicit RelinkPlanner(const ProvenTree& tree) : m_tree(tree)
  {
    m_objects.reserve(tree.objects.size());
    for (const auto& object : tree.objects) {
      m_objects[object.object] = &object;
    }
  }

  // Will the artifact be older than what it contains once this build has rebuilt the stale
  // objects? (Its reason is then on the status: a changed read, or a stale object or artifact.)
  bool doomed(const ArtifactStatus& status, int depth = 0)
  {
    auto memo = m_doomed.find(status.edge.artifact);
    if (memo != m_doomed.end()) {
      return memo->second;
    }
    m_doomed[status.edge.artifact] = false;  // a cycle is no doom
    bool result = !status.fresh() && status.reasons.front().kind != ArtifactIssue::not_linked;
    for (const auto& read : status.linked_reads) {
      const ArtifactStatus* inner = m_tree.artifacts.find(read);
      result = result || (inner != nullptr && depth < 16 && doomed(*inner, depth + 1));
    }
    return m_doomed[status.edge.artifact] = result;
  }

  // Does the build tool relink it by itself? Only when every cause is a stale object or library
  // the step depends on in the build graph (ninja's inputs, make's prerequisites).
  bool build_tool_sees(const ArtifactStatus& status) const
  {
    const auto& deps = status.edge.dependencies;
    return status.edge.dependencies_known && !status.reasons.empty() &&
           std::all_of(status.reasons.begin(), status.reasons.end(), [&](const ArtifactReason& r) {
             return r.kind != ArtifactIssue::read_changed &&
                    std::find(deps.begin(), deps.end(), r.path) != deps.end();
           });
  }

  // One fresh recorded object it read is enough: its compile re-runs, and the link after it.
  void add(const ArtifactStatus& status, RelinkPlan& plan) const
  {
    plan.artifacts.push_back(&status);
    for (const auto& read : status.linked_reads) {
      auto object = m_objects.find(read);
      if (object != m_objects.end() && object->second->verdict.fresh()) {
        plan.objects.push_back(read);
        return;
      }
    }
  }

private:
  const ProvenTree& m_tree;
  ObjectIndex m_objects;
  std::map<std::string, bool> m_doomed;
};

}  // namespace

RelinkPlan plan_relinks(const ProvenTree& tree)
{
  RelinkPlanner planner(tree);
  RelinkPlan plan;
  for (const auto& status : tree.artifacts.artifacts) {
    if (planner.doomed(status) && !planner.build_tool_sees(status)) {
      planner.add(status, plan);
    }
  }
  return plan;
}

ProvenTree prove_tree(const std::string& build_dir, const Environment& env,
                      const TreeProgress& progress, TreeRecords records)
{
  ProvenTree tree;
  const Config config = load_config(env);
  log::set_file(config.log_file);
  tree.scope = tree_scope(build_dir, config.record_dir);
  tree.record_root = tree.scope.record_root;
  tree.hasher = std::make_unique<FileHasher>(hash_cache_file(tree.record_root));
  FileHasher& hasher = *tree.hasher;
  FreshnessChecker checker(hasher, env);
  BuildGraph graph = load_build_graph(build_dir);
  TreeObjects judged =
    judge_tree_objects(tree.scope, checker, graph.cuda_compiles, progress, records);
  tree.objects = std::move(judged.objects);
  tree.foreign = std::move(judged.foreign);
  tree.index = std::move(judged.index);
  tree.graph = merge_link_records(std::move(graph), tree.record_root);
  tree.artifacts = evaluate_artifacts(tree.graph, tree.objects, tree.record_root, hasher);
  return tree;
}

}  // namespace nvfresh

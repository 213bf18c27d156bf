#include "proof/artifacts.hpp"

#include "config/config.hpp"
#include "record/link_record.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/time_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>

namespace nvfresh {

namespace {

struct IssueName {
  ArtifactIssue issue;
  std::string_view name;
};

constexpr IssueName k_issue_names[] = {
  {ArtifactIssue::not_linked, "not_linked"},
  {ArtifactIssue::object_stale, "object_stale"},
  {ArtifactIssue::relink_pending, "relink_pending"},
  {ArtifactIssue::library_not_fresh, "library_not_fresh"},
};

using ObjectIndex = std::map<std::string, const ObjectStatus*>;

class Evaluator {
public:
  Evaluator(const BuildGraph& graph, const ObjectIndex& objects, const std::string& root,
            FileHasher& hasher)
    : m_graph(graph), m_objects(objects), m_root(root), m_hasher(hasher)
  {}

  const ArtifactStatus& evaluate(const LinkEdge& edge);
  bool contains_recorded(const LinkEdge& edge, int depth = 0);

private:
  void judge_object(const std::string& object, const std::optional<LinkRecord>& link,
                    const FileStat& artifact, ArtifactStatus& status);
  void judge_static_library(const std::string& library, const std::optional<LinkRecord>& link,
                            const FileStat& artifact, ArtifactStatus& status);

  const BuildGraph& m_graph;
  const ObjectIndex& m_objects;
  std::string m_root;
  FileHasher& m_hasher;
  std::map<std::string, ArtifactStatus> m_done;
};

bool Evaluator::contains_recorded(const LinkEdge& edge, int depth)
{
  bool direct = std::any_of(edge.objects.begin(), edge.objects.end(),
                            [&](const std::string& o) { return m_objects.count(o) > 0; });
  if (direct || depth > 16) {
    return direct;
  }
  return std::any_of(edge.libraries.begin(), edge.libraries.end(), [&](const std::string& lib) {
    const LinkEdge* inner = m_graph.find(lib);
    return inner != nullptr && inner->kind == ArtifactKind::static_library &&
           contains_recorded(*inner, depth + 1);
  });
}

const ArtifactStatus& Evaluator::evaluate(const LinkEdge& edge)
{
  if (auto done = m_done.find(edge.artifact); done != m_done.end()) {
    return done->second;
  }
  ArtifactStatus& status = m_done[edge.artifact];
  status.edge = edge;
  FileStat artifact = m_hasher.stat(edge.artifact);
  if (!artifact.exists) {
    status.reasons.push_back({ArtifactIssue::not_linked, edge.artifact, "", ""});
    status.proof = "none";
  }
  auto link = load_link_record(m_root, edge.artifact);
  if (link && !(artifact.exists && m_hasher.unchanged(link->output))) {
    link.reset();  // the artifact was rewritten without nvfresh seeing it: fall back to mtime
  }
  status.proof = status.proof.empty() ? (link ? "link record" : "mtime") : status.proof;
  for (const auto& object : edge.objects) {
    if (m_objects.count(object) > 0) {
      status.recorded_objects.push_back(object);
      judge_object(object, link, artifact, status);
    }
  }
  for (const auto& library : edge.libraries) {
    judge_static_library(library, link, artifact, status);
  }
  return status;
}

void Evaluator::judge_object(const std::string& object, const std::optional<LinkRecord>& link,
                             const FileStat& artifact, ArtifactStatus& status)
{
  const ObjectStatus& object_status = *m_objects.at(object);
  if (!object_status.verdict.fresh() || !object_status.record) {
    status.reasons.push_back({ArtifactIssue::object_stale, object, "", ""});
    return;
  }
  const FileFingerprint& current = object_status.record->output;
  if (!artifact.exists) {
    return;
  }
  if (link) {
    const FileFingerprint* linked = link->read_of(object);
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

void Evaluator::judge_static_library(const std::string& library,
                                     const std::optional<LinkRecord>& link,
                                     const FileStat& artifact, ArtifactStatus& status)
{
  const LinkEdge* inner = m_graph.find(library);
  if (inner == nullptr || inner->kind != ArtifactKind::static_library ||
      !contains_recorded(*inner)) {
    return;
  }
  if (!evaluate(*inner).fresh()) {
    status.reasons.push_back({ArtifactIssue::library_not_fresh, library, "", ""});
    return;
  }
  FileStat now = m_hasher.stat(library);
  const FileFingerprint* linked = link ? link->read_of(library) : nullptr;
  if (link && (linked == nullptr || !m_hasher.unchanged(*linked))) {
    status.reasons.push_back({ArtifactIssue::relink_pending, library,
                              linked ? linked->hash.short_hex() : std::string("not linked"),
                              "changed"});
  } else if (!link && artifact.exists && artifact.mtime_ns < now.mtime_ns) {
    status.reasons.push_back({ArtifactIssue::relink_pending, library,
                              format_local_time(artifact.mtime_ns, false),
                              format_local_time(now.mtime_ns, false)});
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
    return fmt::format("relink pending: links static library {}, which is not fresh", path);
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
      edge.objects.push_back(read.path);
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

ProvenTree prove_tree(const std::string& build_dir, const Environment& env,
                      const TreeProgress& progress)
{
  ProvenTree tree;
  tree.record_root = record_root_of_build_dir(load_config(env).record_dir, build_dir);
  FileHasher hasher(hash_cache_file(tree.record_root));
  FreshnessChecker checker(hasher, env);
  tree.objects = evaluate_tree(tree.record_root, checker, progress);
  tree.graph = merge_link_records(load_build_graph(build_dir), tree.record_root);
  tree.artifacts = evaluate_artifacts(tree.graph, tree.objects, tree.record_root, hasher);
  return tree;
}

}  // namespace nvfresh

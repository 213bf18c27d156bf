// nvfresh rdeps <file> [-C build-dir] [--json]: the recorded objects that depend on a file
// (header, source, options file or tool), through which pass ("host", "compute_80", "sm_90", ...),
// and the artifacts that contain those objects (directly, or through a library they link).
// A file that an object looked up and did not find is listed too ("probed"): creating it makes
// that object stale. Exit status: 0 found, 1 nothing depends on it, 2 no records.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "proof/linked_artifacts.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

struct Dependent {
  std::string object;
  std::string role;  // "header", "source", ..., or "probed"
  std::vector<std::string> passes;
};

class PathMatcher {
public:
  explicit PathMatcher(const std::string& wanted)
    : m_wanted(canonical(absolute_path(wanted, current_directory())))
  {}
  bool matches(const std::string& path)
  {
    auto memo = m_memo.find(path);
    if (memo == m_memo.end()) {
      memo = m_memo.emplace(path, canonical(path) == m_wanted).first;
    }
    return memo->second;
  }
  const std::string& wanted() const { return m_wanted; }

private:
  static std::string canonical(const std::string& path)
  {
    std::error_code error;
    auto result = fs::weakly_canonical(path, error);
    return error ? lexically_normal(path) : result.string();
  }
  std::string m_wanted;
  std::unordered_map<std::string, bool> m_memo;
};

std::vector<Dependent> find_dependents(const std::vector<ObjectStatus>& objects,
                                       PathMatcher& matcher)
{
  std::vector<Dependent> found;
  for (const auto& status : objects) {
    if (!status.record) {
      continue;
    }
    for (const auto& input : status.record->inputs) {
      if (matcher.matches(input.file.path)) {
        found.push_back({status.object, std::string(role_name(input.role)), input.passes});
      }
    }
    for (const auto& probe : probe_paths(status.record->probes)) {
      if (matcher.matches(probe)) {
        found.push_back({status.object, "probed", {}});
      }
    }
  }
  return found;
}

// Artifacts holding the objects: directly, then every artifact that links one of those.
std::vector<std::string> holding_artifacts(const ProvenTree& tree,
                                           const std::vector<Dependent>& deps)
{
  std::vector<std::string> artifacts;
  for (const auto& dep : deps) {
    for (const auto* edge : tree.graph.containing(dep.object)) {
      if (std::find(artifacts.begin(), artifacts.end(), edge->artifact) == artifacts.end()) {
        artifacts.push_back(edge->artifact);
      }
    }
  }
  for (const auto& edge : tree.graph.edges) {
    auto closure = tree.graph.linked_closure(edge.artifact);
    bool links_one = std::any_of(closure.begin(), closure.end(), [&](const std::string& lib) {
      return std::find(artifacts.begin(), artifacts.end(), lib) != artifacts.end();
    });
    if (links_one &&
        std::find(artifacts.begin(), artifacts.end(), edge.artifact) == artifacts.end()) {
      artifacts.push_back(edge.artifact);
    }
  }
  return artifacts;
}

void print_text(const std::string& file, const std::vector<Dependent>& deps,
                const std::vector<std::string>& artifacts, const ProvenTree& tree)
{
  fmt::print("{}: {} dependent object(s)\n", file, deps.size());
  for (const auto& dep : deps) {
    fmt::print("  {:<8} {:<24} {}\n", dep.role,
               dep.passes.empty() ? std::string("-")
                                  : fmt::format("{}", fmt::join(dep.passes, ",")),
               dep.object);
  }
  fmt::print("artifacts containing them: {}\n", artifacts.size());
  for (const auto& artifact : artifacts) {
    const LinkEdge* edge = tree.graph.find(artifact);
    bool direct = edge != nullptr && std::any_of(deps.begin(), deps.end(), [&](const Dependent& d) {
                    return std::find(edge->objects.begin(), edge->objects.end(), d.object) !=
                           edge->objects.end();
                  });
    fmt::print("  {:<15} {}{}{}\n", edge ? artifact_kind_name(edge->kind) : "unknown", artifact,
               edge && !edge->target.empty() ? " (target " + edge->target + ")" : "",
               direct ? "" : " (through a library it links)");
  }
}

}  // namespace

int run_rdeps(const std::vector<std::string>& args)
{
  SubcommandOptions cli("rdeps");
  std::string build_dir = ".";
  std::string file;
  bool json = false;
  cli.app().add_option("file", file, "a header, source, options file or tool").required();
  cli.add_build_dir(build_dir);
  cli.add_json(json);
  if (auto status = cli.parse(args)) {
    return *status;
  }
  ProvenTree tree =  // it reads every record's inputs
    prove_tree(build_dir, current_environment(), {}, TreeRecords::every_record);
  PathMatcher matcher(file);
  auto deps = find_dependents(tree.objects, matcher);
  auto artifacts = holding_artifacts(tree, deps);
  int exit_status = tree.objects.empty() ? 2 : (deps.empty() ? 1 : 0);
  if (json) {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& dep : deps) {
      objects.push_back({{"object", dep.object}, {"role", dep.role}, {"passes", dep.passes}});
    }
    print_json({{"file", matcher.wanted()},
                {"objects", objects},
                {"artifacts", artifacts},
                {"exit_status", exit_status}});
  } else if (tree.objects.empty()) {
    fmt::print(stderr, "nvfresh rdeps: no records under {}\n", tree.record_root);
  } else {
    print_text(matcher.wanted(), deps, artifacts, tree);
  }
  return exit_status;
}

}  // namespace nvfresh

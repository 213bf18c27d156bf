// nvfresh check [-C build-dir] [--json] [--target T]: every recorded object of the build tree,
// fresh or stale with its reasons (stale ones only, by name); then every linked artifact that
// contains recorded objects, each by name: linked after the current version of each object it
// contains ("fresh"), or relink pending (and why).
// --target T: also says which artifacts with recorded objects T does NOT link (a test executable
// that dlopens the library it tests: building T leaves that library stale).
// Exit status: 0 all fresh, 1 stale found, 2 cannot tell (no records, or an unknown --target).
// A progress line is drawn on stderr when it is a terminal and the run takes a while.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "proof/linked_artifacts.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/keep_until_exit.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t k_progress_delay_ns = 300'000'000;
constexpr std::int64_t k_progress_interval_ns = 100'000'000;

// The answer to "does the target I build pull in the library I changed?".
struct TargetAnswer {
  const LinkEdge* edge = nullptr;
  std::vector<std::string> links;  // artifacts with recorded objects it links
  std::vector<const ArtifactStatus*>
    not_linked;                        // artifacts with recorded objects it does not link
  std::vector<std::string> mentioned;  // of those, the ones whose file name its binary contains
};

bool file_mentions(const std::string& file, const std::string& name)
{
  auto text = try_read_file(file);
  return text && text->find(name) != std::string::npos;
}

TargetAnswer answer_target(const ProvenTree& tree, const std::string& wanted)
{
  TargetAnswer answer;
  answer.edge = tree.graph.find(wanted);
  if (answer.edge == nullptr) {
    return answer;
  }
  auto closure = tree.graph.linked_closure(answer.edge->artifact);
  for (const auto& status : tree.artifacts.artifacts) {
    const std::string& artifact = status.edge.artifact;
    if (artifact == answer.edge->artifact) {
      continue;
    }
    if (std::find(closure.begin(), closure.end(), artifact) != closure.end()) {
      answer.links.push_back(artifact);
      continue;
    }
    answer.not_linked.push_back(&status);
    std::string name = fs::path(artifact).filename().string();
    if (file_mentions(answer.edge->artifact, name)) {
      answer.mentioned.push_back(artifact);
    }
  }
  return answer;
}

nlohmann::json reason_json(std::string_view kind, const std::string& path,
                           const std::string& before, const std::string& after,
                           const std::string& text)
{
  return {{"kind", kind}, {"path", path}, {"before", before}, {"after", after}, {"text", text}};
}

nlohmann::json object_json(const ObjectStatus& status)
{
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : status.verdict.reasons) {
    reasons.push_back(reason_json(cause_name(r.kind), r.path, r.before, r.after, r.describe()));
  }
  nlohmann::json out = {{"object", status.object},
                        {"source", status.source},
                        {"fresh", status.verdict.fresh()},
                        {"reasons", reasons}};
  // How the object came to be in its last build: "served from the cache (...); served from
  // another checkout: names /a/src". Only where this check read the record: one the record index
  // calls fresh is not read (the index keeps no history; `explain` shows it for any object).
  if (status.record && !status.record->history.empty()) {
    const HistoryEntry& last = status.record->history.back();
    out["last_build"] = {{"event", last.event}, {"reason", last.reason}};
  }
  return out;
}

nlohmann::json artifact_json(const ArtifactStatus& status)
{
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : status.reasons) {
    reasons.push_back(reason_json(issue_name(r.kind), r.path, r.before, r.after, r.describe()));
  }
  return {{"artifact", status.edge.artifact},
          {"target", status.edge.target},
          {"kind", artifact_kind_name(status.edge.kind)},
          {"fresh", status.fresh()},
          {"proof", status.proof},
          {"objects", status.recorded_objects},
          {"links", status.edge.libraries},
          {"reasons", reasons}};
}

nlohmann::json target_json(const TargetAnswer& answer)
{
  nlohmann::json not_linked = nlohmann::json::array();
  for (const auto* status : answer.not_linked) {
    bool mentioned = std::find(answer.mentioned.begin(), answer.mentioned.end(),
                               status->edge.artifact) != answer.mentioned.end();
    not_linked.push_back({{"artifact", status->edge.artifact},
                          {"target", status->edge.target},
                          {"fresh", status->fresh()},
                          {"named_in_binary", mentioned}});
  }
  return {{"artifact", answer.edge->artifact},
          {"target", answer.edge->target},
          {"links", answer.links},
          {"does_not_link", not_linked}};
}

std::string artifact_label(const LinkEdge& edge)
{
  return edge.target.empty() ? edge.artifact
                             : fmt::format("{} (target {})", edge.artifact, edge.target);
}

void print_objects(const std::vector<ObjectStatus>& statuses)
{
  for (const auto& status : statuses) {
    if (status.verdict.fresh()) {
      continue;
    }
    fmt::print("stale  {}\n", status.object.empty() ? status.record_file : status.object);
    for (const auto& reason : status.verdict.reasons) {
      fmt::print("         {}\n", reason.describe());
    }
  }
}

// Artifacts are few (objects may be thousands): each is named, the fresh ones with their proof.
void print_artifacts(const ArtifactReport& report)
{
  for (const auto& status : report.artifacts) {
    if (status.fresh()) {
      fmt::print(
        "fresh  {}: linked from the current version of every recorded object in it (proof: {})\n",
        artifact_label(status.edge), status.proof);
      continue;
    }
    fmt::print("relink {}\n", artifact_label(status.edge));
    for (const auto& reason : status.reasons) {
      fmt::print("         {}\n", reason.describe());
    }
  }
}

void print_target(const TargetAnswer& answer)
{
  const std::string& name =
    answer.edge->target.empty() ? answer.edge->artifact : answer.edge->target;
  fmt::print("target {} links {} artifact(s) with recorded objects{}{}\n", name,
             answer.links.size(), answer.links.empty() ? "" : ": ", fmt::join(answer.links, ", "));
  for (const auto* status : answer.not_linked) {
    bool mentioned = std::find(answer.mentioned.begin(), answer.mentioned.end(),
                               status->edge.artifact) != answer.mentioned.end();
    fmt::print("target {} does not pull in {}{}{}\n", name, artifact_label(status->edge),
               status->fresh() ? "" : ", which is NOT fresh: building this target leaves it stale",
               mentioned ? fmt::format(" (its binary names {}: probably loaded at run time, e.g. "
                                       "dlopen; build {} too)",
                                       fs::path(status->edge.artifact).filename().string(),
                                       status->edge.target.empty() ? "it" : status->edge.target)
                         : "");
  }
}

// Records of another tree (a build tree copied with its .nvfresh, whose records name the
// original's objects): set aside, never judged, never acted on.
void print_foreign(const ProvenTree& tree)
{
  if (tree.foreign.empty()) {
    return;
  }
  fmt::print(stderr,
             "nvfresh check: {} record(s) under {} describe objects outside {} (a copied build "
             "tree?): ignored; those objects are judged by their own tree's records\n",
             tree.foreign.size(), tree.record_root, tree.scope.build_dir);
}

// "nvfresh check: 640/10000 records", once the check has taken a moment (a quick check draws
// nothing), where util/progress's rules allow a progress line (a terminal, not TERM=dumb, no --json).
class CheckProgress {
public:
  explicit CheckProgress(bool enabled) : m_enabled(enabled), m_start(now_ns()) {}
  ~CheckProgress()
  {
    if (m_drawn) {
      std::fputs("\r\033[K", stderr);  // not fmt::print, which may throw: this is a destructor
    }
  }
  void update(size_t done, size_t total)
  {
    std::int64_t now = m_enabled && done % 64 == 0 ? now_ns() : 0;
    if (now - m_start < k_progress_delay_ns || now - m_last < k_progress_interval_ns) {
      return;
    }
    m_last = now;
    m_drawn = true;
    fmt::print(stderr, "\rnvfresh check: {}/{} records", done, total);
    std::fflush(stderr);
  }

private:
  bool m_enabled;
  bool m_drawn = false;
  std::int64_t m_start;
  std::int64_t m_last = 0;
};

}  // namespace

int run_check(const std::vector<std::string>& args)
{
  SubcommandOptions cli("check");
  std::string build_dir = ".";
  std::string target;
  bool json = false;
  cli.add_build_dir(build_dir);
  cli.app().add_option(
    "--target", target,
    "a target or artifact you build/run: also say which recorded artifacts it does not link");
  cli.add_json(json);
  if (auto status = cli.parse(args)) {
    return *status;
  }
  ProvenTree* proven = nullptr;
  {
    CheckProgress progress(progress_wanted(progress_facts(json)));
    proven =
      &keep_until_exit(prove_tree(build_dir, current_environment(), [&](size_t done, size_t total) {
        progress.update(done, total);
      }));
  }
  const ProvenTree& tree = *proven;
  size_t stale = std::count_if(tree.objects.begin(), tree.objects.end(),
                               [](const ObjectStatus& s) { return !s.verdict.fresh(); });
  size_t pending = std::count_if(tree.artifacts.artifacts.begin(), tree.artifacts.artifacts.end(),
                                 [](const ArtifactStatus& s) { return !s.fresh(); });
  TargetAnswer answer = target.empty() ? TargetAnswer{} : answer_target(tree, target);
  bool cannot_tell = tree.objects.empty() || (!target.empty() && answer.edge == nullptr);
  int exit_status = cannot_tell ? 2 : (stale + pending > 0 ? 1 : 0);
  if (json) {
    nlohmann::json objects = nlohmann::json::array();
    nlohmann::json artifacts = nlohmann::json::array();
    for (const auto& status : tree.objects) {
      objects.push_back(object_json(status));
    }
    for (const auto& status : tree.artifacts.artifacts) {
      artifacts.push_back(artifact_json(status));
    }
    nlohmann::json out = {{"record_root", tree.record_root},
                          {"build_dir", tree.scope.build_dir},
                          {"objects", objects},
                          {"foreign_records", tree.foreign},
                          {"stale", stale},
                          {"build_graph", tree.artifacts.graph_source},
                          {"artifacts", artifacts},
                          {"relink_pending", pending},
                          {"exit_status", exit_status}};
    if (answer.edge != nullptr) {
      out["target"] = target_json(answer);
    }
    print_json(out);
    return exit_status;
  }
  print_foreign(tree);
  if (tree.objects.empty()) {
    fmt::print(stderr, "nvfresh check: no records under {} (was the build done through nvfresh?)\n",
               tree.record_root);
    return exit_status;
  }
  print_objects(tree.objects);
  print_artifacts(tree.artifacts);
  if (answer.edge != nullptr) {
    print_target(answer);
  } else if (!target.empty()) {
    fmt::print(stderr, "nvfresh check: no target or artifact named {} in the build graph\n",
               target);
  }
  fmt::print(
    "nvfresh check: {} of {} recorded objects stale; {} of {} linked artifacts relink pending{}\n",
    stale, tree.objects.size(), pending, tree.artifacts.artifacts.size(),
    tree.artifacts.graph_source.empty() ? " (no build graph or link records found)" : "");
  return exit_status;
}

}  // namespace nvfresh

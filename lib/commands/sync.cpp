// nvfresh sync [-C build-dir] [-q]: compare every CUDA object of the build tree with the disk and
// make the build tool rebuild exactly the stale ones, including those whose staleness no mtime
// shows, and relink the artifacts whose link read a file that changed since.
//
// For each stale object (a record that does not match the disk, an unreadable record, or an object
// the build graph compiles that has no record): its stamp (from <build dir>/.nvfresh/stamps.map,
// written by cmake/nvfresh.cmake; the object's compile depends on it) is touched, so a build tool
// that is already running (ninja restat, make's sub-makes) rebuilds it in the same build; and the
// object's mtime is set to the epoch, so that any later make/ninja run rebuilds it too. An
// artifact whose link record shows a changed read gets the epoch mtime too (the next build
// relinks it). Every object is handled even when another could not be: a failure is one line.
//
// Records and stamps maps are data: sync writes only inside the build tree (objects, artifacts,
// stamps under <build dir>/.nvfresh/stamps) and nvfresh's record root, whatever they name. Never
// fails the build: problems go to stderr with an "nvfresh:" prefix and the exit status stays 0.
//
// Like every nvfresh process of a tree it holds the tree's build lock and keeps its registry entry
// (space/activity.hpp). Once per build it also warns, in one line on stderr, when the build tree's
// file system is below the free-space floor (NVFRESH_SPACE_FLOOR, default 2 GiB or 2%).
//
// stamps.map grammar: one line per CUDA source, "source-path TAB stamp-path LF" (absolute paths).
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "proof/linked_artifacts.hpp"
#include "proof/tree_status.hpp"
#include "record/record_root.hpp"
#include "space/activity.hpp"
#include "space/full_disk.hpp"
#include "util/file_io.hpp"
#include "util/keep_until_exit.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <map>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

std::string canonical_or_same(const std::string& path)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

// source -> stamp, for the stamps that lie in the module's stamp directory.
std::map<std::string, std::string> read_stamp_map(const std::string& state_dir)
{
  std::map<std::string, std::string> stamps;
  auto text = try_read_file(state_dir + "/stamps.map");
  if (!text) {
    return stamps;
  }
  const std::string stamp_dir = canonical_or_same(state_dir + "/stamps") + "/";
  size_t begin = 0;
  while (begin < text->size()) {
    size_t end = std::min(text->find('\n', begin), text->size());
    std::string line = text->substr(begin, end - begin);
    begin = end + 1;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      continue;
    }
    const std::string stamp = canonical_or_same(line.substr(tab + 1));
    if (stamp.starts_with(stamp_dir) && stamp.find('/', stamp_dir.size()) == std::string::npos) {
      stamps[canonical_or_same(line.substr(0, tab))] = stamp;
    } else {
      fmt::print(stderr, "nvfresh: sync: ignoring the stamp {} of stamps.map: it is not in {}\n",
                 stamp, stamp_dir);
    }
  }
  return stamps;
}

// One step of marking an object stale; a failure is reported and the other steps still run.
void attempt(const std::string& what, const std::function<void()>& step)
{
  try {
    step();
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh: sync: could not {}: {}\n", what, error.what());
  }
}

void mark_stale(const ObjectStatus& status, const TreeScope& scope,
                const std::map<std::string, std::string>& stamps)
{
  const std::string reason = status.verdict.reasons.front().describe();
  if (auto stamp = stamps.find(canonical_or_same(status.source)); stamp != stamps.end()) {
    attempt("touch " + stamp->second, [&] { touch_file(stamp->second); });
  }
  if (!status.object.empty() && scope.contains(status.object) && stat_file(status.object).exists) {
    attempt("mark " + status.object + " stale", [&] { set_mtime_ns(status.object, 1); });
  }
  if (status.record) {
    attempt("note it in the record " + status.record_file, [&] {
      Record record = *status.record;
      add_history(record, {now_ns(), "marked-stale", reason});
      save_record(status.record_file, record);
    });
  }
}

// The artifacts the build tool would not relink by itself (proof/linked_artifacts.hpp, plan_relinks):
// made older than anything, and the compiles of the recorded objects they read re-run (a skip).
void relink(const RelinkPlan& plan, const ProvenTree& tree,
            const std::map<std::string, std::string>& stamps, bool quiet)
{
  for (const ArtifactStatus* artifact : plan.artifacts) {
    const std::string& path = artifact->edge.artifact;
    if (tree.scope.contains(path) && stat_file(path).exists) {
      attempt("mark " + path + " for relinking", [&] { set_mtime_ns(path, 1); });
    }
    if (!quiet) {
      fmt::print("nvfresh: stale, will relink {}{}\n", path,
                 artifact->fresh() ? ": it contains what this build rebuilds"
                                   : ": " + artifact->reasons.front().describe());
    }
  }
  for (const auto& object : plan.objects) {
    for (const auto& status : tree.objects) {
      auto stamp =
        status.object == object ? stamps.find(canonical_or_same(status.source)) : stamps.end();
      if (stamp != stamps.end()) {
        attempt("touch " + stamp->second, [&] { touch_file(stamp->second); });
      }
    }
  }
}

}  // namespace

int run_sync(const std::vector<std::string>& args)
{
  SubcommandOptions cli("sync");
  std::string build_dir = ".";
  bool quiet = false;
  cli.add_build_dir(build_dir);
  cli.app().add_flag("-q,--quiet", quiet, "print nothing when objects are stale");
  if (auto status = cli.parse(args)) {
    return *status;
  }
  try {
    Environment env = current_environment();
    Config config = load_config(env);
    TreeScope scope = tree_scope(build_dir, config.record_dir);
    enter_build_tree(scope.record_root, scope.build_dir, env);
    warn_if_below_floor(scope.build_dir, config.space_floor);
    const ProvenTree& tree = keep_until_exit(prove_tree(build_dir, env));
    auto stamps = read_stamp_map(tree.scope.build_dir + "/.nvfresh");
    for (const auto& status : tree.objects) {
      if (status.verdict.fresh()) {
        continue;
      }
      mark_stale(status, tree.scope, stamps);
      if (!quiet) {
        fmt::print("nvfresh: stale, will rebuild {}: {}\n",
                   status.object.empty() ? status.record_file : status.object,
                   status.verdict.reasons.front().describe());
      }
    }
    relink(plan_relinks(tree), tree, stamps, quiet);
    std::fflush(stdout);
  } catch (const std::exception& error) {
    fmt::print(stderr,
               "nvfresh: sync failed: {} (the build goes on; run 'nvfresh check' after it)\n",
               error.what());
  }
  return 0;
}

}  // namespace nvfresh

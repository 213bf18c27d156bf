// nvfresh sync [-C build-dir]: compare every record with the disk and make the build tool rebuild
// exactly the stale objects, including those whose staleness no mtime shows.
//
// For each stale object: its stamp (from <record root>/stamps.map, written by cmake/nvfresh.cmake;
// the object's compile depends on it) is touched, so a build tool that is already running
// (ninja restat, make's sub-makes) rebuilds it in the same build; and the object's mtime is set to
// the epoch, so that any later make/ninja run rebuilds it too. Never fails the build: problems
// are reported on stderr with an "nvfresh:" prefix and the exit status stays 0.
//
// stamps.map grammar: one line per CUDA source, "source-path TAB stamp-path LF" (absolute paths).
#include "commands/commands.hpp"
#include "config/config.hpp"
#include "proof/tree_status.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

std::string canonical_or_same(const std::string& path)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(path, error);
  return error ? path : canonical.string();
}

std::map<std::string, std::string> read_stamp_map(const std::string& file)
{
  std::map<std::string, std::string> stamps;
  auto text = try_read_file(file);
  if (!text) {
    return stamps;
  }
  size_t begin = 0;
  while (begin < text->size()) {
    size_t end = std::min(text->find('\n', begin), text->size());
    std::string line = text->substr(begin, end - begin);
    size_t tab = line.find('\t');
    if (tab != std::string::npos) {
      stamps[canonical_or_same(line.substr(0, tab))] = line.substr(tab + 1);
    }
    begin = end + 1;
  }
  return stamps;
}

void note_in_history(const ObjectStatus& status, const std::string& reason)
{
  if (!status.record) {
    return;
  }
  Record record = *status.record;
  add_history(record, {now_ns(), "marked-stale", reason});
  save_record(status.record_file, record);
}

void mark_stale(const ObjectStatus& status, const std::map<std::string, std::string>& stamps)
{
  std::string reason = status.verdict.reasons.front().describe();
  auto stamp = stamps.find(canonical_or_same(status.source));
  if (stamp != stamps.end()) {
    touch_file(stamp->second);
  }
  if (!status.object.empty() && stat_file(status.object).exists) {
    set_mtime_ns(status.object, 1);
  }
  note_in_history(status, reason);
}

}  // namespace

int run_sync(const std::vector<std::string>& args)
{
  CLI::App app{"Make the build tool rebuild exactly the stale objects", "nvfresh sync"};
  std::string build_dir = ".";
  bool quiet = false;
  app.add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
  app.add_flag("-q,--quiet", quiet, "print nothing when objects are stale");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    Environment env = current_environment();
    std::string root = record_root_of_build_dir(load_config(env).record_dir, build_dir);
    auto stamps = read_stamp_map(root + "/stamps.map");
    size_t stale = 0;
    for (const auto& status : evaluate_tree(root, env)) {
      if (status.verdict.fresh()) {
        continue;
      }
      ++stale;
      mark_stale(status, stamps);
      if (!quiet) {
        fmt::print("nvfresh: stale, will rebuild {}: {}\n", status.object,
                   status.verdict.reasons.front().describe());
      }
    }
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr,
               "nvfresh: sync failed: {} (the build goes on; run 'nvfresh check' after it)\n",
               error.what());
    return 0;
  }
}

}  // namespace nvfresh

#include "proof/tree_status.hpp"

#include "record/record_root.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

// Reading and parsing records is most of check's time on a big tree and needs no shared state:
// it runs on every core; comparing with the disk (which memoizes per path) stays on one thread.
std::vector<LoadedRecord> load_records_in_parallel(const std::vector<std::string>& files)
{
  std::vector<LoadedRecord> loaded(files.size());
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  workers = std::min(workers, std::max<size_t>(1, files.size() / 256));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      loaded[i] = load_record(files[i]);
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) {
    threads.emplace_back(work);
  }
  work();
  for (auto& thread : threads) {
    thread.join();
  }
  return loaded;
}

std::string canonical_or_same(const std::string& path)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(path, error);
  return error ? lexically_normal(path) : canonical.string();
}

ObjectStatus judge_loaded(LoadedRecord loaded, FreshnessChecker& checker)
{
  ObjectStatus status;
  status.record_file = loaded.file;
  if (!loaded.record) {
    if (loaded.head) {
      status.object = loaded.head->object;
      status.source = loaded.head->source;
    }
    status.verdict.reasons.push_back({Cause::record_unreadable, loaded.file, "", loaded.error});
    return status;
  }
  status.object = loaded.record->object;
  status.source = loaded.record->source;
  status.verdict = checker.check(*loaded.record);
  status.record = std::move(loaded.record);
  return status;
}

ObjectStatus unrecorded(const CompileEdge& compile, const std::string& record_file)
{
  ObjectStatus status;
  status.record_file = record_file;
  status.object = compile.object;
  status.source = compile.source;
  status.verdict.reasons.push_back({Cause::no_record, "nvfresh", "", ""});
  return status;
}

}  // namespace

bool TreeScope::contains(const std::string& path) const
{
  const std::string canonical = canonical_or_same(path);
  return canonical.size() > build_dir.size() &&
         canonical.compare(0, build_dir.size(), build_dir) == 0 &&
         (canonical[build_dir.size()] == '/' || build_dir == "/");
}

TreeScope tree_scope(const std::string& build_dir, const std::string& configured_record_dir)
{
  TreeScope scope;
  scope.build_dir = canonical_or_same(absolute_path(build_dir, current_directory()));
  scope.record_root = record_root_of_build_dir(configured_record_dir, build_dir);
  return scope;
}

TreeObjects judge_tree_objects(const TreeScope& scope, FreshnessChecker& checker,
                               const std::vector<CompileEdge>& compiles,
                               const TreeProgress& progress)
{
  auto files = list_record_files(scope.record_root);
  auto loaded = load_records_in_parallel(files);
  TreeObjects tree;
  tree.objects.reserve(files.size());
  std::map<std::string, size_t> by_record_file;
  for (auto& record : loaded) {
    const std::string named = record.record ? record.record->object
                              : record.head ? record.head->object
                                            : "";
    if (!named.empty() && !scope.contains(named)) {
      tree.foreign.push_back(record.file);
    } else {
      by_record_file[record.file] = tree.objects.size();
      tree.objects.push_back(judge_loaded(std::move(record), checker));
    }
    if (progress) {
      progress(tree.objects.size() + tree.foreign.size(), files.size());
    }
  }
  for (const auto& compile : compiles) {
    const std::string file =
      record_file_for(scope.record_root, canonical_object_path(compile.object, "/"));
    auto known = by_record_file.find(file);
    if (known != by_record_file.end()) {
      ObjectStatus& status = tree.objects[known->second];
      status.object = status.object.empty() ? compile.object : status.object;
      status.source = status.source.empty() ? compile.source : status.source;
    } else if (stat_file(compile.object).exists) {
      tree.objects.push_back(unrecorded(compile, file));
    }
  }
  return tree;
}

}  // namespace nvfresh

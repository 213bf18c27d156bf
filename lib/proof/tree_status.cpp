#include "proof/tree_status.hpp"

#include "freshness/indexed_freshness.hpp"
#include "freshness/record_index.hpp"
#include "record/record_root.hpp"
#include "util/batch_stat.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/parallel.hpp"
#include "util/string_hash.hpp"

#include <filesystem>
#include <map>
#include <string_view>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr size_t k_records_per_thread = 256;
constexpr size_t k_max_threads = 8;

// Reading and parsing records is most of check's time on a big tree and needs no shared state:
// it runs on every core; comparing with the disk (which memoizes per path) stays on one thread.
std::vector<LoadedRecord> load_records_in_parallel(const std::vector<std::string>& files)
{
  std::vector<LoadedRecord> loaded(files.size());
  for_each_index_on_threads(files.size(), k_records_per_thread, k_max_threads,
                            [&](size_t i) { loaded[i] = load_record(files[i]); });
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
  status.output = loaded.record->output;
  status.verdict = checker.check(*loaded.record);
  status.record = std::move(loaded.record);
  return status;
}

ObjectStatus fresh_by_index(const std::string& record_file, const RecordIndex& index,
                            const IndexedRecord& entry)
{
  ObjectStatus status;
  status.record_file = record_file;
  status.object = index.path(entry.object);
  status.source = index.path(entry.source);
  status.output = FileFingerprint{status.object,
                                  entry.output_hash,
                                  entry.output_stamp.size,
                                  entry.output_stamp.mtime_ns,
                                  entry.output_stamp.ctime_ns,
                                  entry.output_stamp.inode};
  return status;
}

// The records the index shows still fresh (nullptr for the others, which are read).
std::vector<const IndexedRecord*> fresh_in_index(const std::vector<std::string>& files,
                                                 const std::vector<FileStat>& stamps,
                                                 RecordIndex& index, FreshnessChecker& checker)
{
  std::vector<const IndexedRecord*> entries(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    entries[i] = index.find(files[i], stamps[i]);
  }
  IndexedFreshness freshness(index, checker.hasher(), checker.compile_env());
  freshness.stat_ahead(entries);
  for (auto& entry : entries) {
    if (entry != nullptr && freshness.still_fresh(*entry)) {
      index.keep(*entry);
    } else {
      entry = nullptr;
    }
  }
  return entries;
}

// The stamps of the record files, stat'ed on several threads (not memoized: nothing stats them
// again).
std::vector<FileStat> stamps_of(const std::vector<std::string>& files)
{
  std::vector<const std::string*> paths;
  paths.reserve(files.size());
  for (const auto& file : files) {
    paths.push_back(&file);
  }
  return stat_files(paths);
}

// A record that was read, judged; nullopt (and set aside in tree.foreign) when it describes an
// object outside the tree.
std::optional<ObjectStatus> judge_read(LoadedRecord record, const TreeScope& scope,
                                       FreshnessChecker& checker, TreeObjects& tree)
{
  const std::string named = record.record ? record.record->object
                            : record.head ? record.head->object
                                          : "";
  if (!named.empty() && !scope.contains(named)) {
    tree.foreign.push_back(record.file);
    return std::nullopt;
  }
  return judge_loaded(std::move(record), checker);
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

// Every compile of the build graph whose object has no usable record, as "stale: no record" (when
// the object exists); the compiles that have one lend their names where the record had none.
void add_unrecorded(const TreeScope& scope, const std::vector<CompileEdge>& compiles,
                    const StringViewMap<size_t>& by_record_file, TreeObjects& tree)
{
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
                               const TreeProgress& progress, TreeRecords records)
{
  auto files = list_record_files(scope.record_root);
  const bool indexed = records == TreeRecords::indexed;
  const std::string index_file = record_index_file(scope.record_root);
  RecordIndex index = indexed ? RecordIndex::read(index_file, scope.build_dir) : RecordIndex();
  const std::vector<FileStat> stamps =
    indexed ? stamps_of(files) : std::vector<FileStat>(files.size());
  const std::vector<const IndexedRecord*> entries =
    indexed ? fresh_in_index(files, stamps, index, checker)
            : std::vector<const IndexedRecord*>(files.size());
  std::vector<std::string> to_read;
  for (size_t i = 0; i < files.size(); ++i) {
    if (entries[i] == nullptr) {
      to_read.push_back(files[i]);
    }
  }
  auto loaded = load_records_in_parallel(to_read);
  const std::int64_t judged_ns = now_ns();
  TreeObjects tree;
  tree.objects.reserve(files.size());
  StringViewMap<size_t> by_record_file;  // views of `files`
  by_record_file.reserve(files.size());
  std::vector<std::pair<size_t, size_t>> to_index;  // (file, object): added after the loop, which
                                                    // holds pointers into the index's entries
  for (size_t i = 0, next_read = 0; i < files.size(); ++i) {
    by_record_file[files[i]] = tree.objects.size();
    if (entries[i] != nullptr) {  // judged for this tree when it was indexed: not foreign
      tree.objects.push_back(fresh_by_index(files[i], index, *entries[i]));
    } else if (auto judged = judge_read(std::move(loaded[next_read++]), scope, checker, tree)) {
      if (indexed && judged->verdict.fresh() && judged->record) {
        to_index.emplace_back(i, tree.objects.size());
      }
      tree.objects.push_back(std::move(*judged));
    } else {
      by_record_file.erase(files[i]);
    }
    if (progress) {
      progress(tree.objects.size() + tree.foreign.size(), files.size());
    }
  }
  for (const auto& [file, object] : to_index) {
    index.add(files[file], stamps[file], *tree.objects[object].record, judged_ns,
              FileHasher::k_default_settle_ns);
  }
  log::info("{}: {} records fresh by the record index, {} read", scope.record_root,
            files.size() - to_read.size(), to_read.size());
  if (indexed && index.changed()) {
    try {
      index.write(index_file, scope.build_dir);
    } catch (const std::exception&) {
      // the index is a cache: without it the next check reads the records, as this one did
    }
  }
  add_unrecorded(scope, compiles, by_record_file, tree);
  tree.index = std::move(index);
  return tree;
}

}  // namespace nvfresh

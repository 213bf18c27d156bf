#include "proof/tree_status.hpp"

#include "freshness/file_hasher.hpp"
#include "record/record_root.hpp"
#include "util/compressed_file.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace nvfresh {

namespace {

// Reads "key<TAB>value" from a record that failed its checks, so that the object it described
// can still be named (and rebuilt). Best effort: escapes are not undone.
std::string salvage_field(const std::string& text, const std::string& key)
{
  std::string prefix = "\n" + key + "\t";
  size_t at = text.find(prefix);
  if (at == std::string::npos) {
    return {};
  }
  size_t begin = at + prefix.size();
  size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

namespace {

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

ObjectStatus evaluate_loaded(LoadedRecord loaded, FreshnessChecker& checker)
{
  ObjectStatus status;
  status.record_file = loaded.file;
  if (!loaded.record) {
    std::string text;
    try {
      text = try_read_compressed_file(loaded.file).value_or("");
    } catch (const CompressedFileError&) {
      // nothing to salvage: the object's name comes from the record's file name alone
    }
    status.object = salvage_field(text, "object");
    status.source = salvage_field(text, "source");
    status.verdict.reasons.push_back({Cause::record_unreadable, loaded.file, "", loaded.error});
    return status;
  }
  status.object = loaded.record->object;
  status.source = loaded.record->source;
  status.verdict = checker.check(*loaded.record);
  status.record = std::move(loaded.record);
  return status;
}

}  // namespace

ObjectStatus evaluate_record_file(const std::string& record_file, FreshnessChecker& checker)
{
  return evaluate_loaded(load_record(record_file), checker);
}

std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, const Environment& env)
{
  FileHasher hasher(hash_cache_file(record_root));
  FreshnessChecker checker(hasher, env);
  return evaluate_tree(record_root, checker);
}

std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, FreshnessChecker& checker,
                                        const TreeProgress& progress)
{
  auto files = list_record_files(record_root);
  auto loaded = load_records_in_parallel(files);
  std::vector<ObjectStatus> statuses;
  statuses.reserve(files.size());
  for (auto& record : loaded) {
    statuses.push_back(evaluate_loaded(std::move(record), checker));
    if (progress) {
      progress(statuses.size(), files.size());
    }
  }
  return statuses;
}

}  // namespace nvfresh

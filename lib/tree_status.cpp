#include "tree_status.hpp"

#include "file_hasher.hpp"
#include "record_store.hpp"
#include "util/file_io.hpp"

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

} // namespace

ObjectStatus evaluate_record_file(const std::string& record_file, FreshnessChecker& checker)
{
  ObjectStatus status;
  status.record_file = record_file;
  LoadedRecord loaded = load_record(record_file);
  if (!loaded.record) {
    std::string text = try_read_file(record_file).value_or("");
    status.object = salvage_field(text, "object");
    status.source = salvage_field(text, "source");
    status.verdict.reasons.push_back(
      {StaleKind::record_unreadable, record_file, "", loaded.error});
    return status;
  }
  status.object = loaded.record->object;
  status.source = loaded.record->source;
  status.verdict = checker.check(*loaded.record);
  status.record = std::move(loaded.record);
  return status;
}

std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, const Environment& env)
{
  FileHasher hasher(record_root + "/hash-cache");
  FreshnessChecker checker(hasher, env);
  return evaluate_tree(record_root, checker);
}

std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, FreshnessChecker& checker,
                                        const TreeProgress& progress)
{
  std::vector<ObjectStatus> statuses;
  auto files = list_record_files(record_root);
  statuses.reserve(files.size());
  for (const auto& file : files) {
    statuses.push_back(evaluate_record_file(file, checker));
    if (progress) {
      progress(statuses.size(), files.size());
    }
  }
  return statuses;
}

} // namespace nvfresh

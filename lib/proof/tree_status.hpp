// Every recorded object of a build tree, each compared with the disk: the data behind check, sync
// and explain.
#pragma once

#include "freshness/freshness.hpp"
#include "record/record.hpp"
#include "util/process.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct ObjectStatus {
  std::string record_file;
  std::optional<Record> record;  // empty when the record is unreadable
  std::string object;            // from the record, or salvaged from an unreadable one
  std::string source;
  FreshnessVerdict verdict;
};

std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, const Environment& env);

// Called after each record with (done, total); for progress displays.
using TreeProgress = std::function<void(size_t done, size_t total)>;
std::vector<ObjectStatus> evaluate_tree(const std::string& record_root, FreshnessChecker& checker,
                                        const TreeProgress& progress = {});

ObjectStatus evaluate_record_file(const std::string& record_file, FreshnessChecker& checker);

}  // namespace nvfresh

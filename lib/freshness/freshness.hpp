// One record compared with the disk and the current environment: fresh, or stale with reasons a
// person can read ("kernel_forward.h changed: 3f2a1b0c -> 9b1c22d4"). Content decides: stat is only
// a shortcut to skip hashing, except for a compile whose output depends on mtimes
// (Record::mtime_dependent): there a touched input makes the object stale (mtime_in_output).
#pragma once

#include "freshness/file_hasher.hpp"
#include "freshness/input_check.hpp"
#include "freshness/stale_reason.hpp"
#include "outcome/outcome.hpp"
#include "record/record.hpp"
#include "util/process.hpp"

#include <string>
#include <vector>

namespace nvfresh {

struct FreshnessVerdict {
  std::vector<StaleReason> reasons;
  std::size_t inputs_touched = 0;  // inputs whose stat stamp changed (their content was compared)
  bool fresh() const { return reasons.empty(); }
};

class FreshnessChecker {
public:
  // current_env: the environment the next compile would get (the build's environment).
  FreshnessChecker(FileHasher& hasher, const Environment& current_env);

  FreshnessVerdict check(const Record& record);

  FileHasher& hasher() { return m_hasher; }
  const std::map<std::string, std::string>& compile_env() const { return m_compile_env; }

private:
  void check_object(const Record& record, FreshnessVerdict& verdict);
  void check_mtimes(const Record& record, FreshnessVerdict& verdict);
  void check_environment(const Record& record, FreshnessVerdict& verdict);
  void check_path_lookups(const Record& record, FreshnessVerdict& verdict);

  FileHasher& m_hasher;
  std::map<std::string, std::string> m_compile_env;
};

}  // namespace nvfresh

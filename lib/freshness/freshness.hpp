// One record compared with the disk and the current environment: fresh, or stale with reasons a
// person can read ("kernel_forward.h changed: 3f2a1b0c -> 9b1c22d4"). Content decides: stat is only
// a shortcut to skip hashing.
#pragma once

#include "freshness/file_hasher.hpp"
#include "record/record.hpp"
#include "util/process.hpp"

#include <string>
#include <vector>

namespace nvfresh {

enum class StaleKind {
  record_unreadable,  // corrupt, truncated, older format
  untrusted,          // an input changed while the object compiled
  object_missing,
  object_modified,  // someone else wrote the object after nvfresh recorded it
  input_changed,
  input_missing,
  input_unstable,       // it kept changing while nvfresh hashed it
  tool_changed,         // nvcc, cicc, ptxas, the host compiler, ... replaced
  probe_found,          // a lookup that found nothing now finds a file (shadowing, __has_include)
  env_changed,          // NVCC_APPEND_FLAGS and friends
  path_lookup_changed,  // a program found through PATH (gcc, as) resolves elsewhere under today's PATH
  inputs_unknown,  // neither traced nor listed by a depfile: a launcher answered from its cache
                   // and the build asked nvcc for no depfile, so nothing can prove it fresh
};

struct StaleReason {
  StaleKind kind = StaleKind::input_changed;
  std::string path;    // the file or variable concerned
  std::string before;  // recorded value (short hash, env value)
  std::string after;   // current value
  std::string describe() const;
};

std::string_view kind_name(StaleKind kind);  // stable identifier for --json

struct FreshnessVerdict {
  std::vector<StaleReason> reasons;
  bool fresh() const { return reasons.empty(); }
};

class FreshnessChecker {
public:
  // current_env: the environment the next compile would get (the build's environment).
  FreshnessChecker(FileHasher& hasher, Environment current_env);

  FreshnessVerdict check(const Record& record);

private:
  void check_object(const Record& record, FreshnessVerdict& verdict);
  void check_inputs(const Record& record, FreshnessVerdict& verdict);
  void check_probes(const Record& record, FreshnessVerdict& verdict);
  void check_environment(const Record& record, FreshnessVerdict& verdict);
  void check_path_lookups(const Record& record, FreshnessVerdict& verdict);

  FileHasher& m_hasher;
  std::map<std::string, std::string> m_compile_env;
};

}  // namespace nvfresh

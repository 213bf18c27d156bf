// Why an object is stale, one reason a person can read ("kernel_forward.h changed: 3f2a1b0c ->
// 9b1c22d4"); describe() is in freshness.cpp.
#pragma once

#include "outcome/outcome.hpp"

#include <string>

namespace nvfresh {

struct StaleReason {
  Cause kind = Cause::input_changed;  // its stable name: cause_name(kind)
  std::string path;                   // the file or variable concerned
  std::string before;                 // recorded value (short hash, env value; mtime_in_output:
                                      // why the output depends on mtimes)
  std::string after;                  // current value
  std::string describe() const;
};

}  // namespace nvfresh

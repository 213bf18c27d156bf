// Where each step's outcome goes: the build tree's steps log (record/step_events.hpp) that the
// compile plan named in the environment; nowhere for a tool run outside a compile nvfresh planned.
#pragma once

#include "outcome/outcome.hpp"
#include "step/step_key.hpp"
#include "util/environment.hpp"

#include <cstdint>
#include <string>

namespace nvfresh {

// Set by the compile plan: the build tree's record root, the compile's output, an id of this
// compile (none part of the signature).
inline constexpr const char* k_step_record_root_variable = "NVFRESH_STEP_RECORD_ROOT";
inline constexpr const char* k_step_object_variable = "NVFRESH_STEP_OBJECT";
inline constexpr const char* k_step_run_variable = "NVFRESH_STEP_RUN";

class StepReport {
public:
  explicit StepReport(const Environment& env);
  const std::string& record_root() const { return m_root; }
  void add(const Step& step, Outcome outcome, std::int64_t duration_ns) const;

private:
  std::string m_root;
  std::string m_object;
  std::string m_run;
};

}  // namespace nvfresh

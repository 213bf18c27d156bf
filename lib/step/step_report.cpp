#include "step/step_report.hpp"

#include "record/step_events.hpp"
#include "util/clock.hpp"

#include <utility>

namespace nvfresh {

StepReport::StepReport(const Environment& env)
  : m_root(env_value(env, k_step_record_root_variable)),
    m_object(env_value(env, k_step_object_variable)), m_run(env_value(env, k_step_run_variable))
{}

void StepReport::add(const Step& step, Outcome outcome, std::int64_t duration_ns) const
{
  if (m_root.empty()) {
    return;
  }
  append_step_event(m_root, {now_ns(), std::move(outcome), duration_ns, m_object, m_run, step.pass,
                             tool_name(step)});
}

}  // namespace nvfresh

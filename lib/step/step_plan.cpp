#include "step/step_plan.hpp"

#include "cache/line_layout.hpp"

#include <fmt/format.h>

#include <utility>

namespace nvfresh {

namespace {

StepPlan served(const Digest& key, StepEntry entry, const std::string& from)
{
  StepPlan plan;
  plan.action = StepPlan::Action::serve;
  plan.key = key;
  plan.note = key.short_hex() + from;
  plan.outcome = Outcome{OutcomeKind::served, Cause::cache_hit, "entry " + plan.note};
  plan.entry = std::move(entry);
  return plan;
}

StepPlan verified(const Digest& key, StepEntry entry)
{
  StepPlan plan;
  plan.action = StepPlan::Action::run_and_verify;
  plan.key = key;
  plan.note = fmt::format("hit {} sampled for verification", key.short_hex());
  plan.entry = std::move(entry);
  return plan;
}

StepPlan stored(const Digest& key, bool input_changed, std::string why_missed)
{
  StepPlan plan;
  plan.action = StepPlan::Action::run_and_store;
  plan.key = key;
  plan.note = input_changed ? "an input changed" : why_missed;
  plan.outcome =
    input_changed
      ? Outcome{OutcomeKind::compiled, Cause::input_changed, "a file the stored step read changed"}
      : Outcome{OutcomeKind::compiled, Cause::step_not_cached, std::move(why_missed)};
  return plan;
}

}  // namespace

StepPlan plan_plainly(PlainReason reason, std::string note)
{
  StepPlan plan;
  plan.plain_reason = reason;
  plan.note = std::move(note);
  return plan;
}

std::optional<StepPlan> plan_before_key(const StepGate& gate)
{
  if (gate.cache_enabled && gate.step_cache_on && gate.refusal.empty() && gate.cached_tool) {
    return std::nullopt;
  }
  const PlainReason reason = !gate.cached_tool       ? PlainReason::not_a_step_tool
                             : !gate.refusal.empty() ? PlainReason::refused
                                                     : PlainReason::cache_off;
  StepPlan plan = plan_plainly(reason, gate.refusal);
  if (!gate.refusal.empty() && gate.cached_tool) {
    plan.outcome = Outcome{OutcomeKind::passthrough, Cause::unsupported_option, gate.refusal};
  }
  return plan;
}

std::optional<StepPlan> plan_if_store_refuses(const std::string& store_refusal)
{
  if (store_refusal.empty()) {
    return std::nullopt;
  }
  return plan_plainly(PlainReason::store_refused, store_refusal);
}

std::optional<StepPlan> plan_if_no_key(const std::optional<Digest>& key)
{
  if (key) {
    return std::nullopt;
  }
  return plan_plainly(PlainReason::no_key);
}

StepPlan plan_step(const Digest& key, StepLookup lookup, const KeyedInputs& inputs,
                   const VerifyDraw& verify)
{
  const bool input_changed = lookup.local && !lookup.local_holds;
  std::string why_missed = std::move(lookup.why_missed);
  std::optional<StepEntry> entry;
  std::string from;
  if (lookup.local_holds) {
    entry = std::move(lookup.local);
  } else if (lookup.remote && lookup.remote_holds) {
    entry = std::move(lookup.remote);
    from = ", from the remote";
  }
  if (entry) {
    const bool moved = entry->input_lines != inputs.lines_text;
    entry = placed_for_input(std::move(*entry), inputs, &why_missed);
    from += moved ? ", its lines moved" : "";
  }
  if (entry && verify.fraction > 0 && verify.draw < verify.fraction) {
    return verified(key, std::move(*entry));
  }
  if (entry) {
    return served(key, std::move(*entry), from);
  }
  if (!inputs.whole_input_why.empty()) {
    why_missed +=
      fmt::format(" (keyed on its input with its line numbers: {})", inputs.whole_input_why);
  }
  return stored(key, input_changed, std::move(why_missed));
}

std::optional<StepEntry> placed_for_input(StepEntry entry, const KeyedInputs& inputs,
                                          std::string* why)
{
  if (entry.input_lines == inputs.lines_text) {
    return entry;
  }
  auto stored_table = parse_line_table(entry.input_lines);
  if (!stored_table || !inputs.lines) {
    *why = "the stored step's line table is damaged";
    return std::nullopt;
  }
  if (!entry.out.empty() || !entry.err.empty()) {
    *why = "its input's lines moved, and the stored run printed something (which may name a line)";
    return std::nullopt;
  }
  for (auto& output : entry.outputs) {
    std::string reason;
    auto moved = move_lines(output.content, *stored_table, *inputs.lines, &reason);
    if (!moved) {
      *why =
        fmt::format("its input's lines moved, and {} cannot follow them: {}", output.path, reason);
      return std::nullopt;
    }
    output.content = std::move(*moved);
  }
  entry.input_lines = inputs.lines_text;
  return entry;
}

}  // namespace nvfresh

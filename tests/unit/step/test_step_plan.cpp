#include "step/step_plan.hpp"

#include "cache/line_layout.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

// cicc's input as the preprocessor writes it (tests/unit/cache/test_line_layout.cpp has the same):
// a kernel in k.cu below `host_lines` host-only lines.
std::string preprocessed(int host_lines)
{
  std::string text = "# 0 \"k.cu\"\n# 0 \"<built-in>\"\n# 1 \"k.cu\"\n# 1 \"v.h\" 1\n"
                     "int value();\n\n\n# 6 \"v.h\"\nint other();\n# 2 \"k.cu\" 2\n";
  text += std::string(static_cast<size_t>(host_lines), '\n');
  const int kernel = 2 + host_lines;
  text += "__global__ void kernel(int* out)\n{\n# " + std::to_string(kernel + 2) +
          " \"k.cu\" 3 4\n  out[0] = 1;\n# " + std::to_string(kernel + 3) +
          " \"k.cu\"\n  out[1] = 2;\n}\n";
  return text;
}

// What cicc writes of it: markers and a local variable named by the kernel's line in the input.
std::string output_for(int kernel, int kernel_input_line)
{
  return "# 1 \"k.cu\"\nstatic int x;\n# " + std::to_string(kernel) +
         " \"k.cu\"\nvoid kernel(int* out) {\n# " + std::to_string(kernel + 2) +
         " \"k.cu\"\n int __cuda_local_var_" + std::to_string(kernel_input_line) +
         "_8_non_const_f;\n# 6 \"v.h\"\n}\n";
}

KeyedInputs inputs_with_lines(int host_lines)
{
  KeyedInputs inputs;
  auto layout = split_line_layout(preprocessed(host_lines));
  REQUIRE(layout);
  inputs.lines_text = serialize_line_table(layout->table);
  inputs.lines = layout->table;
  return inputs;
}

const Digest k_key = hash_bytes("a step");

StepEntry stored_entry(const KeyedInputs& inputs, std::string content = "ptx")
{
  StepEntry entry;
  entry.key = k_key;
  entry.tool = "/cuda/nvvm/bin/cicc";
  entry.pass = "compute_80";
  entry.run_ns = 1'000'000;
  entry.outputs.push_back({"/tmp/tmpxft_@0@", std::move(content)});
  entry.input_lines = inputs.lines_text;
  return entry;
}

StepLookup local_hit(StepEntry entry)
{
  StepLookup lookup;
  lookup.local = std::move(entry);
  lookup.local_holds = true;
  return lookup;
}

}  // namespace

TEST_CASE("step_plan: a local hit whose inputs hold is served as stored", "[step]")
{
  const KeyedInputs inputs;
  const StepPlan plan = plan_step(k_key, local_hit(stored_entry(inputs)), inputs, {});
  CHECK(plan.action == StepPlan::Action::serve);
  CHECK(plan.key == k_key);
  REQUIRE(plan.entry);
  CHECK(*plan.entry == stored_entry(inputs));
  REQUIRE(plan.outcome);
  CHECK(plan.outcome->kind == OutcomeKind::served);
  CHECK(plan.outcome->cause == Cause::cache_hit);
  CHECK(plan.outcome->detail == "entry " + k_key.short_hex());
}

TEST_CASE("step_plan: a hit whose reads changed is a miss, input_changed", "[step]")
{
  const KeyedInputs inputs;
  StepLookup lookup = local_hit(stored_entry(inputs));
  lookup.local_holds = false;
  const StepPlan plan = plan_step(k_key, lookup, inputs, {});
  CHECK(plan.action == StepPlan::Action::run_and_store);
  CHECK_FALSE(plan.entry);
  REQUIRE(plan.outcome);
  CHECK(plan.outcome->kind == OutcomeKind::compiled);
  CHECK(plan.outcome->cause == Cause::input_changed);
  CHECK(plan.note == "an input changed");
}

TEST_CASE("step_plan: no entry is a miss that says why", "[step]")
{
  KeyedInputs inputs;
  StepLookup lookup;
  lookup.why_missed = "no entry";
  SECTION("keyed on its code")
  {
    const StepPlan plan = plan_step(k_key, lookup, inputs, {});
    CHECK(plan.action == StepPlan::Action::run_and_store);
    CHECK(plan.outcome->cause == Cause::step_not_cached);
    CHECK(plan.outcome->detail == "no entry");
  }
  SECTION("keyed on its whole input")
  {
    inputs.whole_input_why = "a raw string";
    const StepPlan plan = plan_step(k_key, lookup, inputs, {});
    CHECK(plan.outcome->detail ==
          "no entry (keyed on its input with its line numbers: a raw string)");
  }
}

TEST_CASE("step_plan: a remote hit after a local miss is served, and says so", "[step]")
{
  const KeyedInputs inputs;
  StepLookup lookup;
  lookup.why_missed = "no entry";
  lookup.remote = stored_entry(inputs);
  SECTION("its inputs hold: served")
  {
    lookup.remote_holds = true;
    const StepPlan plan = plan_step(k_key, lookup, inputs, {});
    CHECK(plan.action == StepPlan::Action::serve);
    CHECK(plan.outcome->detail == "entry " + k_key.short_hex() + ", from the remote");
  }
  SECTION("its inputs do not: run")
  {
    const StepPlan plan = plan_step(k_key, lookup, inputs, {});
    CHECK(plan.action == StepPlan::Action::run_and_store);
    CHECK(plan.outcome->cause == Cause::step_not_cached);
  }
  SECTION("a local entry that no longer holds, the remote's that does: served")
  {
    lookup.local = stored_entry(inputs, "stale");
    lookup.remote_holds = true;
    const StepPlan plan = plan_step(k_key, lookup, inputs, {});
    CHECK(plan.action == StepPlan::Action::serve);
    CHECK(plan.entry->outputs[0].content == "ptx");
  }
}

TEST_CASE("step_plan: lines moved, the hit is served with its outputs moved", "[step]")
{
  const KeyedInputs near = inputs_with_lines(1);
  const KeyedInputs far = inputs_with_lines(3);
  const StepPlan plan = plan_step(k_key, local_hit(stored_entry(near, output_for(3, 12))), far, {});
  CHECK(plan.action == StepPlan::Action::serve);
  REQUIRE(plan.entry);
  CHECK(plan.entry->outputs[0].content == output_for(5, 14));
  CHECK(plan.entry->input_lines == far.lines_text);
  CHECK(plan.outcome->detail == "entry " + k_key.short_hex() + ", its lines moved");
}

TEST_CASE("step_plan: lines moved, but the stored run printed: run", "[step]")
{
  const KeyedInputs near = inputs_with_lines(1);
  const KeyedInputs far = inputs_with_lines(3);
  StepEntry printed = stored_entry(near, output_for(3, 12));
  printed.err = "k.cu(3): warning: something\n";
  const StepPlan plan = plan_step(k_key, local_hit(printed), far, {});
  CHECK(plan.action == StepPlan::Action::run_and_store);
  CHECK(plan.outcome->cause == Cause::step_not_cached);
  CHECK(plan.outcome->detail.find("the stored run printed something") != std::string::npos);
}

TEST_CASE("step_plan: lines moved where an output cannot follow: run", "[step]")
{
  const KeyedInputs near = inputs_with_lines(1);
  const KeyedInputs far = inputs_with_lines(3);
  // Line 2 of k.cu is no code line of the stored input (a blank line).
  const StepPlan plan =
    plan_step(k_key, local_hit(stored_entry(near, "# 2 \"k.cu\"\nint x;\n")), far, {});
  CHECK(plan.action == StepPlan::Action::run_and_store);
  CHECK(plan.outcome->detail.find("cannot follow them") != std::string::npos);
}

TEST_CASE("step_plan: a hit sampled for verification runs and compares", "[step]")
{
  const KeyedInputs inputs;
  const StepLookup lookup = local_hit(stored_entry(inputs));
  SECTION("drawn: run and verify against the entry")
  {
    const StepPlan plan = plan_step(k_key, lookup, inputs, {0.5, 0.25});
    CHECK(plan.action == StepPlan::Action::run_and_verify);
    REQUIRE(plan.entry);
    CHECK(*plan.entry == stored_entry(inputs));
    CHECK_FALSE(plan.outcome);
  }
  SECTION("not drawn: served")
  {
    CHECK(plan_step(k_key, lookup, inputs, {0.5, 0.75}).action == StepPlan::Action::serve);
  }
  SECTION("a miss is never sampled")
  {
    CHECK(plan_step(k_key, {}, inputs, {1.0, 0.0}).action == StepPlan::Action::run_and_store);
  }
}

TEST_CASE("step_plan: a refused step runs plainly, a passthrough", "[step]")
{
  StepGate gate;
  CHECK_FALSE(plan_before_key(gate));
  SECTION("-G or -lineinfo: passthrough, unsupported_option")
  {
    gate.refusal = "debug or line information asked for (-lineinfo)";
    const auto plan = plan_before_key(gate);
    REQUIRE(plan);
    CHECK(plan->action == StepPlan::Action::run_plainly);
    CHECK(plan->plain_reason == PlainReason::refused);
    REQUIRE(plan->outcome);
    CHECK(plan->outcome->kind == OutcomeKind::passthrough);
    CHECK(plan->outcome->cause == Cause::unsupported_option);
    CHECK(plan->outcome->detail == gate.refusal);
  }
  SECTION("the step cache off: plainly, nothing reported")
  {
    gate.step_cache_on = false;
    const auto plan = plan_before_key(gate);
    REQUIRE(plan);
    CHECK(plan->plain_reason == PlainReason::cache_off);
    CHECK_FALSE(plan->outcome);
  }
  SECTION("the cache off: plainly, nothing reported")
  {
    gate.cache_enabled = false;
    CHECK(plan_before_key(gate)->plain_reason == PlainReason::cache_off);
  }
  SECTION("another tool: plainly, nothing reported")
  {
    gate.cached_tool = false;
    gate.refusal = "not run by nvcc";
    const auto plan = plan_before_key(gate);
    CHECK(plan->plain_reason == PlainReason::not_a_step_tool);
    CHECK_FALSE(plan->outcome);
  }
}

TEST_CASE("step_plan: a store that takes nothing, or no key, runs plainly", "[step]")
{
  CHECK_FALSE(plan_if_store_refuses(""));
  const auto full = plan_if_store_refuses("the cache's file system is full");
  REQUIRE(full);
  CHECK(full->action == StepPlan::Action::run_plainly);
  CHECK(full->plain_reason == PlainReason::store_refused);
  CHECK_FALSE(full->outcome);
  CHECK_FALSE(plan_if_no_key(k_key));
  const auto keyless = plan_if_no_key(std::nullopt);
  REQUIRE(keyless);
  CHECK(keyless->action == StepPlan::Action::run_plainly);
  CHECK(keyless->plain_reason == PlainReason::no_key);
}

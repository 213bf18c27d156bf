// What the step runner will do, decided before it acts: a pure function of what was gathered (the
// gate of settings and refusals, the store's refusal, the key, the local and remote entries and
// whether their inputs hold, the verify draw), giving a plan value that step_runner carries out.
//   serve          the entry (its lines moved to this input's where they sat elsewhere)
//   run_and_store  run the tool and store its run under the key (the outcome says why it ran)
//   run_and_verify a hit sampled for verification: run the tool and compare with the entry
//   run_plainly    exec the tool as nvcc asked, nothing looked up or stored (the reason says why)
#pragma once

#include "cache/cache_storage.hpp"
#include "cache/step_entry.hpp"
#include "outcome/outcome.hpp"
#include "step/step_key.hpp"
#include "util/hasher.hpp"

#include <optional>
#include <string>

namespace nvfresh {

enum class PlainReason {
  config_unreadable,  // the configuration could not be read
  cache_off,          // the cache or the step cache is off
  refused,            // debug or line information asked for, or not run by nvcc (step_refusal)
  not_a_step_tool,    // neither cicc nor ptxas
  setup_failed,       // the step, the store or the lookup failed (an error)
  store_refused,      // the store takes nothing (full disk, a cache dir another user owns)
  no_key,             // the tool or a file the key hashes could not be read
};

struct StepPlan {
  enum class Action { run_plainly, serve, run_and_store, run_and_verify };
  Action action = Action::run_plainly;
  PlainReason plain_reason = PlainReason::setup_failed;  // run_plainly only
  // serve: reported before serving; run_plainly: the passthrough of a refused step, if any;
  // run_and_store: reported when the run exits 0. None for run_and_verify (the comparison is).
  std::optional<Outcome> outcome;
  Digest key;
  std::optional<StepEntry> entry;  // serve: what is written; run_and_verify: compared with
  std::string note;                // for the log: why it runs, what it serves
};

StepPlan plan_plainly(PlainReason reason, std::string note = {});

// The settings and refusals known before the key is built.
struct StepGate {
  bool cache_enabled = true;
  bool step_cache_on = true;
  std::string refusal;  // step_refusal of the words
  bool cached_tool = true;
};
// A plan to run plainly, or nullopt: go on to the key.
std::optional<StepPlan> plan_before_key(const StepGate& gate);

// A plan to run plainly when the store takes nothing (its refusal, not empty: a full disk, a cache
// dir another user owns), or nullopt.
std::optional<StepPlan> plan_if_store_refuses(const std::string& store_refusal);
// A plan to run plainly when the step has no key (a file it hashes could not be read), or nullopt.
std::optional<StepPlan> plan_if_no_key(const std::optional<Digest>& key);

// What the lookups found. The remote is asked only when the local entry does not hold.
// (CacheStorage::find_step)
using StepLookup = StepEntries;

struct VerifyDraw {
  double fraction = 0;  // NVFRESH_CACHE_VERIFY
  double draw = 1;      // uniform in [0, 1): a hit is sampled when draw < fraction
};

StepPlan plan_step(const Digest& key, StepLookup lookup, const KeyedInputs& inputs,
                   const VerifyDraw& verify);

// The entry as a hit writes it for this step's input: as stored where the input's code lines sit
// where they sat, else with its outputs' line numbers moved to where they sit now
// (cache/line_layout.hpp); nullopt (`why` says) where they cannot be moved, or the stored run
// printed something (a warning names a line).
std::optional<StepEntry> placed_for_input(StepEntry entry, const KeyedInputs& inputs,
                                          std::string* why);

}  // namespace nvfresh

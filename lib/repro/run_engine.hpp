// The run engine of `nvfresh repro`: plans the runs (each with its perturbation, private
// directories and compile caches), runs them J at a time through a ProcessRunner, each within its
// timeout, stops them when interrupted, digests what each made, groups the observations into
// variants, and keeps one copy of each variant and a diff against the first under the out
// directory. commands/repro.cpp reads the command line and prints the report (repro_report.hpp);
// a unit test drives the engine with a fake runner.
#pragma once

#include "repro/repro.hpp"
#include "repro/repro_run.hpp"
#include "util/environment.hpp"
#include "util/process.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// The default out directory is this prefix and a time; a --workdir-copy of the directory repro
// runs in leaves such directories out of the runs' copies.
inline constexpr std::string_view k_repro_out_prefix = "nvfresh-repro-";

// What differs between the modes: how a run's command is made, and what it produced.
struct ReproMode {
  std::optional<ReproTarget> nvcc;    // nvcc mode: the compile; its output is redirected per run
  std::vector<std::string> patterns;  // command mode: the --artifact globs
  std::string workdir_copy;           // command mode: each run's working directory is a copy of it
  bool touch_sources = false;
};

// What the command line decided.
struct ReproPlan {
  std::vector<std::string> command;
  std::size_t runs = 1;  // the control included
  std::uint64_t seed = 0;
  std::size_t jobs = 1;
  double timeout_seconds = 0;      // per run; 0: none
  std::string out_dir;             // where variants and diffs are kept (created)
  std::string heap_noise_library;  // preloaded into the perturbed runs; "": none
  bool show_progress = false;      // a progress line on stderr (util/progress.hpp)
};

// What the runs gave.
struct ReproRuns {
  std::vector<RunRecord> runs;  // interrupted: only the runs that started, in order
  std::vector<Variant> variants;
  std::vector<ObservationRef> observations;  // Variant::runs holds numbers into this
  std::vector<KeptVariant> kept;
  std::vector<std::string> warnings;  // inherited caches, ASLR off, interrupted
  std::string aslr_note;
  std::string heap_noise_note;
  std::string out_dir;     // absolute
  int interrupted_by = 0;  // SIGINT or SIGTERM, else 0
  int exit_code = 0;  // 0 identical, 1 several variants, 2 a run failed, 128 + signal interrupted
  double wall_seconds = 0;
};

// Runs the plan. While it runs, SIGINT and SIGTERM call interrupt_repro (a second one ends the
// process). Prints warnings, progress (when plan.show_progress) and each failed run's stderr on
// stderr. Throws when its scratch or out directory cannot be made.
ReproRuns run_repro_runs(const ReproPlan& plan, const ReproMode& mode, const Environment& env,
                         ProcessRunner& runner);

// Stops the runs under way (their process groups: stop_redirected_children) and starts no more;
// run_repro_runs then reports the runs that finished. Async-signal-safe.
void interrupt_repro(int signal) noexcept;

}  // namespace nvfresh

// The report of `nvfresh repro`: what was run and how (run count and what it can see, perturbations,
// private directories and caches), one line per run, the variants with what differs in each and
// where it is kept, the time per run, what the runs rule out, and the verdict; as text and as JSON.
#pragma once

#include "repro/repro_run.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct ReproReport {
  std::vector<std::string> command;
  bool nvcc_mode = true;
  std::vector<std::string> artifact_patterns;
  std::string workdir_copy;
  std::uint64_t seed = 0;
  std::size_t jobs = 1;
  double confidence = 0;
  std::optional<double> goal_rate;  // the --detect rate the run count came from (none with -n)
  std::string aslr_note;
  std::string heap_noise_note;
  std::vector<std::string> warnings;
  const std::vector<RunRecord>& runs;
  const std::vector<Variant>& variants;  // Variant::runs holds observation numbers
  const std::vector<ObservationRef>& observations;
  const std::vector<KeptVariant>& kept;
  double wall_seconds = 0;
  int exit_code = 0;
  std::string out_dir;
};

std::string format_repro_report(const ReproReport& report);
nlohmann::json repro_report_json(const ReproReport& report);

// "run 3 FAILED (exit 1)", "variant 2", ...: a run's result column.
std::string run_status(const RunRecord& run);

}  // namespace nvfresh

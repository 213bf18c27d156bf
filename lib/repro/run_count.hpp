// How many runs `repro` needs, and what a series of runs rules out. Runs are taken as independent
// draws: a variant that a run produces with probability p shows up at least once in n runs with
// probability 1 - (1 - p)^n. So seeing a variant of frequency p with confidence C takes
// n = ceil(ln(1 - C) / ln(1 - p)) runs (59 for 5% and 95%), and n clean runs rule out, at confidence
// C, any variant of frequency 1 - (1 - C)^(1/n) or more.
//
// Samples that one process writes (the in-process helper, nvfresh.repro) are not independent draws: a
// process's heap grows from sample to sample, and the CuTe DSL's in-process variant never showed in a
// process's first 24 compiles. Only runs count here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace nvfresh {

inline constexpr double k_default_detect_rate = 0.05;
inline constexpr double k_default_confidence = 0.95;
// The most runs one repro makes, the control included: for -n and for what --detect plans alike.
inline constexpr std::size_t k_max_runs = 100000;

// The fewest runs that see a variant of frequency `rate` at least once with probability `confidence`.
// Both must lie strictly between 0 and 1.
std::size_t runs_to_detect(double rate, double confidence);

// The probability that `runs` runs see a variant of frequency `rate` at least once.
double detection_probability(double rate, std::size_t runs);

// The smallest frequency that `runs` runs see with probability `confidence` (1 when runs is 0).
double detectable_rate(std::size_t runs, double confidence);

// A rate or probability as a person reads it: 0.05 -> "5%", 0.348 -> "34.8%", 0.0283 -> "2.83%".
std::string percent(double fraction);

// "no variant seen in 59 perturbed runs: a variant of >= 5% would have been seen with 95% probability".
// With no perturbed run (-n 1: the control alone) it says that nothing is ruled out.
// The rate named is `goal` when the runs reach it (the --detect the run count came from), else the
// smallest rate they do reach.
std::string ruled_out_text(std::size_t runs, double confidence,
                           std::optional<double> goal = std::nullopt);

// "" when both are usable, else what is wrong with them (for the --detect and --confidence options),
// including a goal that needs more than k_max_runs runs.
std::string check_detection_goal(double rate, double confidence);

}  // namespace nvfresh

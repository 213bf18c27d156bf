#include "repro/run_count.hpp"

#include <fmt/format.h>

#include <cmath>

namespace nvfresh {

std::size_t runs_to_detect(double rate, double confidence)
{
  const double exact = std::log1p(-confidence) / std::log1p(-rate);
  auto runs = static_cast<std::size_t>(std::ceil(exact - 1e-9));
  // The rounding guard above must not cost a run the formula needs, nor add one it does not.
  while (runs > 1 && detection_probability(rate, runs - 1) >= confidence) {
    --runs;
  }
  while (detection_probability(rate, runs) < confidence) {
    ++runs;
  }
  return runs;
}

double detection_probability(double rate, std::size_t runs)
{
  return -std::expm1(static_cast<double>(runs) * std::log1p(-rate));
}

double detectable_rate(std::size_t runs, double confidence)
{
  if (runs == 0) {
    return 1.0;
  }
  return -std::expm1(std::log1p(-confidence) / static_cast<double>(runs));
}

std::string percent(double fraction)
{
  return fmt::format("{:.3g}%", fraction * 100.0);
}

std::string ruled_out_text(std::size_t runs, double confidence, std::optional<double> goal)
{
  if (runs == 0) {
    return "no perturbed run (the control alone): no variant frequency is ruled out";
  }
  const bool reached = goal && runs > 0 && detection_probability(*goal, runs) >= confidence;
  const double rate = reached ? *goal : detectable_rate(runs, confidence);
  return fmt::format("no variant seen in {} perturbed run{}: a variant of >= {} would have been "
                     "seen with {} probability",
                     runs, runs == 1 ? "" : "s", percent(rate), percent(confidence));
}

std::string check_detection_goal(double rate, double confidence)
{
  if (!(rate > 0.0 && rate < 1.0)) {
    return fmt::format("--detect {} is not a frequency between 0 and 1 (e.g. --detect 0.05 for a "
                       "variant in 5% of runs)",
                       rate);
  }
  if (!(confidence > 0.0 && confidence < 1.0)) {
    return fmt::format(
      "--confidence {} is not a probability between 0 and 1 (e.g. --confidence 0.95)", confidence);
  }
  // In doubles first: a tiny rate needs more runs than a size_t holds.
  const double perturbed = std::ceil(std::log1p(-confidence) / std::log1p(-rate) - 1e-9);
  if (perturbed + 1 > static_cast<double>(k_max_runs)) {
    return fmt::format("--detect {} with --confidence {} needs {:.0f} runs, more than the limit of "
                       "{} (the same as -n's); {} perturbed runs see a variant of >= {:.3g} with "
                       "that confidence: give a --detect at least that large, or a lower "
                       "--confidence",
                       rate, confidence, perturbed + 1, k_max_runs, k_max_runs - 1,
                       detectable_rate(k_max_runs - 1, confidence));
  }
  return {};
}

}  // namespace nvfresh

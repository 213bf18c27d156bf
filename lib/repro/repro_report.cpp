#include "repro/repro_report.hpp"

#include "digest/comparison_report.hpp"
#include "repro/private_caches.hpp"
#include "repro/run_count.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace nvfresh {

namespace {

constexpr std::string_view k_verdicts[] = {"deterministic: all successful runs are identical",
                                           "NOT deterministic: several variants", "runs failed"};

bool has_samples(const ReproReport& report)
{
  return std::any_of(report.observations.begin(), report.observations.end(),
                     [](const ObservationRef& o) { return o.sample.has_value(); });
}

std::size_t successful_perturbed_runs(const ReproReport& report)
{
  return static_cast<std::size_t>(
    std::count_if(report.runs.begin(), report.runs.end(),
                  [](const RunRecord& r) { return r.index > 0 && !r.failed(); }));
}

// The runs a variant appeared in, ascending, each once.
std::vector<std::size_t> runs_of(const ReproReport& report, const Variant& variant)
{
  std::set<std::size_t> runs;
  for (std::size_t observation : variant.runs) {
    runs.insert(report.observations[observation].run);
  }
  return {runs.begin(), runs.end()};
}

// "run 0: 27 29 34; run 1: 46"
std::string samples_by_run(const ReproReport& report, const Variant& variant)
{
  std::map<std::size_t, std::vector<std::size_t>> samples;
  for (std::size_t observation : variant.runs) {
    const auto& ref = report.observations[observation];
    samples[ref.run].push_back(ref.sample.value_or(0));
  }
  std::vector<std::string> parts;
  parts.reserve(samples.size());
  for (const auto& [run, indices] : samples) {
    parts.push_back(fmt::format("run {}: {}", run, fmt::join(indices, " ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string seconds_text(double seconds)
{
  if (seconds < 90) {
    return fmt::format("{:.1f} s", seconds);
  }
  return fmt::format("{} min {:.0f} s", static_cast<int>(seconds / 60),
                     seconds - 60 * static_cast<int>(seconds / 60));
}

std::string run_count_line(const ReproReport& report)
{
  const std::size_t perturbed = report.runs.empty() ? 0 : report.runs.size() - 1;
  const std::string runs =
    fmt::format("run 0 (the control) and {} perturbed run{}", perturbed, perturbed == 1 ? "" : "s");
  if (report.goal_rate) {
    return fmt::format(
      "runs: {}, enough to see a variant that >= {} of runs produce with {} probability "
      "(--detect, --confidence)",
      runs, percent(*report.goal_rate), percent(report.confidence));
  }
  return fmt::format(
    "runs: {} (-n); they see a variant that >= {} of runs produce with {} probability", runs,
    percent(detectable_rate(perturbed, report.confidence)), percent(report.confidence));
}

std::string isolation_line(const ReproReport& report)
{
  std::vector<std::string_view> caches;
  for (const auto& cache : compile_caches()) {
    caches.push_back(cache.variable);
  }
  const std::string where =
    report.nvcc_mode ? "its own output path and TMPDIR"
    : report.workdir_copy.empty()
      ? "its own empty working directory and TMPDIR"
      : fmt::format("its own working directory (a copy of {}) and TMPDIR", report.workdir_copy);
  return fmt::format(
    "every run: {}, and an empty directory for each compile cache ({}); the runs' directory "
    "names are factored out of the digests",
    where, fmt::join(caches, ", "));
}

void format_header(std::string& out, const ReproReport& report)
{
  auto to = std::back_inserter(out);
  fmt::format_to(to, "nvfresh repro: {} runs of `{}` ({} at a time, seed {})\n", report.runs.size(),
                 fmt::join(report.command, " "), report.jobs, report.seed);
  fmt::format_to(to, "{}\n", run_count_line(report));
  if (!report.nvcc_mode) {
    fmt::format_to(
      to, "artifacts: {} in each run's working directory (or in each nvfresh-sample-<n>/ in it)\n",
      fmt::join(report.artifact_patterns, " "));
  }
  fmt::format_to(to, "ASLR control: {}\nheap noise: {}\n{}\n", report.aslr_note,
                 report.heap_noise_note, isolation_line(report));
  for (const auto& warning : report.warnings) {
    fmt::format_to(to, "{}\n", warning);
  }
}

void format_runs(std::string& out, const ReproReport& report)
{
  auto to = std::back_inserter(out);
  fmt::format_to(to, "{:>5}  {:<22} {:>8}  perturbations\n", "run", "result", "time");
  for (const auto& run : report.runs) {
    std::string status = run_status(run);
    if (!run.failed() && run.observations.size() > 1) {
      status = fmt::format("{} samples", run.observations.size());
    }
    fmt::format_to(to, "{:>5}  {:<22} {:>8}  {}\n", run.index, status, seconds_text(run.seconds),
                   run.perturbation.describe());
  }
}

std::vector<std::string> differing_kernels(const ReproReport& report, const KeptVariant& kept)
{
  std::vector<std::string> names;
  for (const auto& artifact : kept.artifacts) {
    if (!artifact.versus_first) {
      continue;
    }
    for (const auto& component : artifact.versus_first->components) {
      for (const auto& kernel : component.kernels) {
        names.push_back(fmt::format("{}{}: {}", report.nvcc_mode ? "" : artifact.path + ": ",
                                    component.key, kernel.name));
      }
    }
  }
  return names;
}

void format_variant(std::string& out, const ReproReport& report, std::size_t v)
{
  auto to = std::back_inserter(out);
  const Variant& variant = report.variants[v];
  const KeptVariant& kept = report.kept[v];
  const auto runs = runs_of(report, variant);
  if (has_samples(report)) {
    fmt::format_to(to, "  variant {}: {} sample{} in {} run{} ({})  kept: {}\n", v + 1,
                   variant.runs.size(), variant.runs.size() == 1 ? "" : "s", runs.size(),
                   runs.size() == 1 ? "" : "s", samples_by_run(report, variant), kept.directory);
  } else {
    const auto perturbed =
      std::count_if(runs.begin(), runs.end(), [](std::size_t r) { return r > 0; });
    const std::size_t of = successful_perturbed_runs(report);
    const std::string rate =
      report.variants.size() < 2 || of == 0
        ? std::string()
        : fmt::format("; {} of {} perturbed runs ({})", perturbed, of,
                      percent(static_cast<double>(perturbed) / static_cast<double>(of)));
    fmt::format_to(to, "  variant {}: {} run{} ({}){}  kept: {}\n", v + 1, runs.size(),
                   runs.size() == 1 ? "" : "s", fmt::join(runs, " "), rate, kept.directory);
  }
  if (v == 0) {
    return;
  }
  fmt::format_to(to, "    differs from variant 1 in: {}\n", fmt::join(kept.differing, ", "));
  const auto kernels = differing_kernels(report, kept);
  if (!kernels.empty()) {
    fmt::format_to(to, "    kernels: {}\n", fmt::join(kernels, ", "));
  }
  fmt::format_to(to, "    diff: {}\n", kept.diff);
}

void format_timing(std::string& out, const ReproReport& report)
{
  std::vector<double> seconds;
  for (const auto& run : report.runs) {
    seconds.push_back(run.seconds);
  }
  if (seconds.empty()) {
    return;
  }
  double total = 0;
  for (double s : seconds) {
    total += s;
  }
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  fmt::format_to(
    std::back_inserter(out), "time per run: {} mean ({} to {}); all {} runs took {} at -j {}\n",
    seconds_text(total / static_cast<double>(seconds.size())), seconds_text(*low),
    seconds_text(*high), seconds.size(), seconds_text(report.wall_seconds), report.jobs);
}

nlohmann::json kept_artifact_json(const KeptArtifact& artifact, const std::string& first)
{
  nlohmann::json entry{
    {"path", artifact.path}, {"kept", artifact.kept}, {"status", to_string(artifact.verdict)}};
  if (artifact.versus_first) {
    entry["comparison"] = comparison_json(first, artifact.kept, *artifact.versus_first);
  } else if (!artifact.file_diff.empty()) {
    entry["diff"] = artifact.file_diff;
  }
  return entry;
}

nlohmann::json variant_json(const ReproReport& report, std::size_t v)
{
  const Variant& variant = report.variants[v];
  const KeptVariant& kept = report.kept[v];
  nlohmann::json entry{
    {"variant", v + 1}, {"runs", runs_of(report, variant)}, {"kept", kept.directory}};
  if (has_samples(report)) {
    nlohmann::json samples = nlohmann::json::array();
    for (std::size_t observation : variant.runs) {
      const auto& ref = report.observations[observation];
      samples.push_back({{"run", ref.run}, {"sample", ref.sample.value_or(0)}});
    }
    entry["samples"] = std::move(samples);
  }
  if (v == 0) {
    return entry;
  }
  entry["diff"] = kept.diff;
  entry["differing_components"] = kept.differing;
  nlohmann::json artifacts = nlohmann::json::array();
  for (std::size_t i = 0; i < kept.artifacts.size(); ++i) {
    const auto& first = report.kept[0].artifacts;
    const auto match = std::find_if(first.begin(), first.end(), [&](const KeptArtifact& a) {
      return a.path == kept.artifacts[i].path;
    });
    artifacts.push_back(
      kept_artifact_json(kept.artifacts[i], match == first.end() ? std::string() : match->kept));
  }
  if (report.nvcc_mode && kept.artifacts.size() == 1 && kept.artifacts[0].versus_first) {
    entry["comparison"] =
      artifacts[0]["comparison"];  // nvcc mode: the one output's comparison, as before
  }
  entry["artifacts"] = std::move(artifacts);
  return entry;
}

}  // namespace

std::string run_status(const RunRecord& run)
{
  if (run.result.timed_out) {
    return "TIMED OUT";
  }
  if (!run.error.empty()) {
    return "FAILED";
  }
  if (run.result.term_signal != 0) {
    return fmt::format("FAILED (signal {})", run.result.term_signal);
  }
  if (run.result.exit_code != 0) {
    return fmt::format("FAILED (exit {})", run.result.exit_code);
  }
  if (run.observations.empty() || !run.observations.front().variant) {
    return "no variant";
  }
  return fmt::format("variant {}", *run.observations.front().variant + 1);
}

std::string format_repro_report(const ReproReport& report)
{
  std::string out;
  format_header(out, report);
  format_runs(out, report);
  auto to = std::back_inserter(out);
  const auto ok = std::count_if(report.runs.begin(), report.runs.end(),
                                [](const RunRecord& r) { return !r.failed(); });
  const std::string samples =
    has_samples(report) ? fmt::format(" ({} samples)", report.observations.size()) : "";
  fmt::format_to(to, "variants: {} in {} successful run{}{}\n", report.variants.size(), ok,
                 ok == 1 ? "" : "s", samples);
  for (std::size_t v = 0; v < report.variants.size(); ++v) {
    format_variant(out, report, v);
  }
  format_timing(out, report);
  if (report.variants.size() == 1) {
    fmt::format_to(
      to, "{}\n",
      ruled_out_text(successful_perturbed_runs(report), report.confidence, report.goal_rate));
    if (has_samples(report)) {
      fmt::format_to(
        to,
        "  (that bound counts runs: the samples of one process are not independent draws, since "
        "its heap grows from sample to sample)\n");
    }
  }
  const std::string_view verdict =
    report.exit_code >= 0 && report.exit_code < static_cast<int>(std::size(k_verdicts))
      ? k_verdicts[report.exit_code]
      : "interrupted: the runs that finished are above";
  fmt::format_to(to, "result: {} (exit {})\nkept in {}\n", verdict, report.exit_code,
                 report.out_dir);
  return out;
}

nlohmann::json repro_report_json(const ReproReport& report)
{
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : report.runs) {
    nlohmann::json entry{{"run", run.index},
                         {"perturbations", run.perturbation.describe()},
                         {"aslr_off", run.perturbation.aslr_off},
                         {"exit_code", run.result.exit_code},
                         {"signal", run.result.term_signal},
                         {"error", run.error},
                         {"failed", run.failed()},
                         {"seconds", run.seconds},
                         {"samples", run.observations.size()}};
    entry["variant"] =
      !run.failed() && !run.observations.empty() && run.observations.front().variant
        ? nlohmann::json(*run.observations.front().variant + 1)
        : nlohmann::json(nullptr);
    if (!run.failed() && run.observations.size() > 1) {
      nlohmann::json per_sample = nlohmann::json::array();
      for (const auto& observation : run.observations) {
        per_sample.push_back(observation.variant ? nlohmann::json(*observation.variant + 1)
                                                 : nlohmann::json(nullptr));
      }
      entry["sample_variants"] = std::move(per_sample);  // in sample order
    }
    runs.push_back(std::move(entry));
  }
  nlohmann::json variants = nlohmann::json::array();
  for (std::size_t v = 0; v < report.variants.size(); ++v) {
    variants.push_back(variant_json(report, v));
  }
  nlohmann::json document{{"command", report.command},
                          {"mode", report.nvcc_mode ? "nvcc" : "command"},
                          {"artifact_patterns", report.artifact_patterns},
                          {"workdir_copy", report.workdir_copy},
                          {"seed", report.seed},
                          {"jobs", report.jobs},
                          {"confidence", report.confidence},
                          {"aslr_control", report.aslr_note},
                          {"heap_noise", report.heap_noise_note},
                          {"warnings", report.warnings},
                          {"perturbed_runs", successful_perturbed_runs(report)},
                          {"wall_seconds", report.wall_seconds},
                          {"runs", std::move(runs)},
                          {"variants", std::move(variants)},
                          {"exit_code", report.exit_code}};
  document["detect"] =
    report.goal_rate ? nlohmann::json(*report.goal_rate) : nlohmann::json(nullptr);
  document["ruled_out"] = report.variants.size() == 1
                            ? nlohmann::json(ruled_out_text(successful_perturbed_runs(report),
                                                            report.confidence, report.goal_rate))
                            : nlohmann::json(nullptr);
  return document;
}

}  // namespace nvfresh

// `nvfresh repro`: runs a compile N times under perturbation (see repro/repro.hpp), J at a time, each
// run in private directories and with private compile caches, groups what the runs produced into
// variants by normalized digests, and keeps one copy and one diff per variant (the run engine:
// repro/run_engine.hpp; this file reads the command line and prints the report). Two modes:
//   nvfresh repro [options] -- nvcc <args...>                    one single-source nvcc compile; its
//                                                               output is redirected into the run
//   nvfresh repro [options] --artifact GLOB... [--workdir-copy DIR] -- <any command...>
//                                                               the whole command, in its own working
//                                                               directory; the globs say what it made
// Exit status: 0 all identical, 1 more than one variant, 2 a run failed (or a usage error).
#include "repro/repro.hpp"
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "repro/repro_report.hpp"
#include "repro/run_artifacts.hpp"
#include "repro/run_count.hpp"
#include "repro/run_engine.hpp"
#include "util/installed_libraries.hpp"
#include "util/json.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr int k_exit_failed = 2;

constexpr std::string_view k_description =
  R"(Runs a compile N times under perturbation and reports the distinct outputs (variants) by normalized digests.

  nvfresh repro [options] -- nvcc <args...>
      one single-source nvcc compile; each run writes its output into its own directory
  nvfresh repro [options] --artifact GLOB [--artifact GLOB...] [--workdir-copy DIR] -- <any command...>
      any compile pipeline (a CuTe DSL or Triton script, a CMake build, ...): the whole command runs
      once per run in its own working directory (empty, or a copy of DIR), and every file the globs
      match there is digested: objects, fatbins, cubins and PTX by their normalized components,
      anything else by its bytes. Globs are relative to that directory ('*' stays within one
      directory, '**' spans any number). A run that leaves nvfresh-sample-<n>/ directories (the
      in-process helper python/nvfresh/repro.py writes them) is taken as that many samples, each
      matched on its own.

Every run gets a private TMPDIR (and working directory) and an empty directory for each compile cache
(CUTE_DSL_CACHE_DIR, TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, TORCH_EXTENSIONS_DIR, CUDA_CACHE_PATH,
CUPY_CACHE_DIR, NUMBA_CACHE_DIR, JAX_COMPILATION_CACHE_DIR, WARP_CACHE_PATH, FLASHINFER_WORKSPACE_BASE,
CCACHE_DIR, SCCACHE_DIR): a shared cache would hand later runs the first run's result. Run 0 is the
control with ASLR off; the others run with ASLR on, glibc heap tunables, a heap-noise library that
allocates at random before main, and a padded environment.

The number of runs comes from what you want to be sure of: --detect RATE --confidence C runs enough
to see a variant that RATE of runs produce with probability C, n = ceil(ln(1 - C) / ln(1 - RATE))
perturbed runs plus the control (59 + 1 for the defaults, 5% and 95%); -n sets it directly. The report
says what the runs rule out.

Each run may take --timeout seconds (default 3600): then it is killed, with every process it started,
and reported as timed out. Interrupted (Ctrl-C, SIGTERM), repro stops the runs under way and reports
the runs that finished.

Exit status: 0 all identical, 1 several variants, 2 a run failed or timed out, 130/143 interrupted.)";

struct ReproOptions {
  std::optional<std::size_t> runs;
  double detect = k_default_detect_rate;
  double confidence = k_default_confidence;
  std::size_t jobs = 2;
  double timeout_seconds = 3600;
  bool touch_sources = false;
  std::string out_dir;
  std::uint64_t seed = 0;
  bool json = false;
  std::vector<std::string> artifacts;
  std::string workdir_copy;
  std::vector<std::string> command;

  bool nvcc_mode() const { return artifacts.empty(); }
  std::size_t run_count() const { return runs.value_or(runs_to_detect(detect, confidence) + 1); }
};

std::string timestamp()
{
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &local);
  return text;
}

void add_cli_options(CommandLine app, ReproOptions& options)
{
  auto runs =
    app
      .add_option("-n,--runs", options.runs,
                  "number of runs, the control included (default: from --detect and --confidence)")
      .in_range(std::size_t{1}, k_max_runs);
  app.add_option("--detect", options.detect, "the smallest variant frequency to see (default 0.05)")
    .excludes(runs);
  app.add_option("--confidence", options.confidence, "the probability of seeing it (default 0.95)");
  app.add_option("-j,--jobs", options.jobs, "runs at a time (default 2)").in_range(1, 256);
  app
    .add_option("--timeout", options.timeout_seconds,
                "seconds one run may take before it is killed with all it started (default 3600; "
                "0: no limit)")
    .in_range(0.0, 1e9);
  app.add_option("--artifact", options.artifacts,
                 "a glob of files the command makes, relative to its working directory "
                 "(repeatable); turns on the command mode");
  app.add_option("--workdir-copy", options.workdir_copy,
                 "run each command in a copy of DIR (default: an empty directory)");
  app.add_flag("--touch-sources", options.touch_sources,
               "give the sources a different modification time in each run (nvcc mode: the "
               "source file, restored afterwards; command mode: the files --workdir-copy copied)");
  app.add_option("--out", options.out_dir,
                 "where to keep artifacts and diffs (default ./nvfresh-repro-<time>)");
  app.add_option(
    "--seed", options.seed,
    "seed of the perturbation values (printed; it replays the values, not the memory layout)");
  app.add_flag("--json", options.json, "machine-readable report on stdout");
}

std::optional<std::string> check_options(const ReproOptions& options)
{
  if (options.command.empty()) {
    return std::string(options.nvcc_mode()
                         ? "give the compile after \"--\", e.g. nvfresh repro -- nvcc -c k.cu"
                         : "give the command after \"--\", e.g. nvfresh repro --artifact '*.ptx' "
                           "-- python compile.py");
  }
  if (std::string problem = check_detection_goal(options.detect, options.confidence);
      !problem.empty()) {
    return problem;
  }
  for (const auto& pattern : options.artifacts) {
    if (std::string problem = check_artifact_pattern(pattern); !problem.empty()) {
      return problem;
    }
  }
  if (!options.workdir_copy.empty() && options.nvcc_mode()) {
    return std::string("--workdir-copy goes with --artifact (the command mode); an nvcc compile "
                       "runs where repro runs");
  }
  if (!options.workdir_copy.empty() && !fs::is_directory(options.workdir_copy)) {
    return fmt::format("--workdir-copy {}: not a directory", options.workdir_copy);
  }
  return std::nullopt;
}

std::optional<int> parse_options(const std::vector<std::string>& args, ReproOptions& options)
{
  auto separator = std::find(args.begin(), args.end(), "--");
  options.command.assign(separator == args.end() ? separator : separator + 1, args.end());
  options.seed = std::random_device{}();
  SubcommandOptions cli("repro");
  cli.app().footer(std::string(k_description));
  add_cli_options(cli.app(), options);
  if (auto status = cli.parse(std::vector<std::string>(args.begin(), separator))) {
    return *status;
  }
  if (auto problem = check_options(options)) {
    fmt::print(stderr, "nvfresh repro: {}\n", *problem);
    return k_exit_failed;
  }
  if (options.out_dir.empty()) {
    options.out_dir = std::string(k_repro_out_prefix) + timestamp();
  }
  if (!options.workdir_copy.empty()) {
    options.workdir_copy = fs::absolute(options.workdir_copy).lexically_normal().string();
  }
  return std::nullopt;
}

int repro(const ReproOptions& options, const ReproMode& mode, const Environment& env)
{
  const ReproPlan plan{options.command,
                       options.run_count(),
                       options.seed,
                       options.jobs,
                       options.timeout_seconds,
                       options.out_dir,
                       locate_installed_library("libnvfresh_heap_noise.so"),
                       progress_wanted(progress_facts(options.json))};
  SystemProcessRunner runner;
  const ReproRuns done = run_repro_runs(plan, mode, env, runner);
  const ReproReport report{
    options.command,    options.nvcc_mode(),
    options.artifacts,  options.workdir_copy,
    options.seed,       options.jobs,
    options.confidence, options.runs ? std::nullopt : std::optional<double>(options.detect),
    done.aslr_note,     done.heap_noise_note,
    done.warnings,      done.runs,
    done.variants,      done.observations,
    done.kept,          done.wall_seconds,
    done.exit_code,     done.out_dir};
  const nlohmann::json document = repro_report_json(report);
  std::ofstream(fs::path(done.out_dir) / "report.json") << dump_json(document) << "\n";
  if (options.json) {
    print_json(document);
  } else {
    fmt::print("{}", format_repro_report(report));
  }
  std::fflush(stdout);
  return report.exit_code;
}

std::variant<ReproMode, std::string> make_mode(const ReproOptions& options, const Environment& env)
{
  ReproMode mode;
  mode.touch_sources = options.touch_sources;
  if (!options.nvcc_mode()) {
    mode.patterns = options.artifacts;
    mode.workdir_copy = options.workdir_copy;
    return mode;
  }
  auto target = prepare_repro_target(options.command, env, fs::current_path().string());
  if (auto* problem = std::get_if<std::string>(&target)) {
    return *problem + " (for any other command, say what it makes with --artifact GLOB)";
  }
  mode.nvcc = std::get<ReproTarget>(std::move(target));
  return mode;
}

}  // namespace

int run_repro(const std::vector<std::string>& args)
{
  ReproOptions options;
  if (auto status = parse_options(args, options)) {
    return *status;
  }
  const Environment env = current_environment();
  auto mode = make_mode(options, env);
  if (const auto* problem = std::get_if<std::string>(&mode)) {
    fmt::print(stderr, "nvfresh repro: {}\n", *problem);
    return k_exit_failed;
  }
  try {
    return repro(options, std::get<ReproMode>(mode), env);
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh repro: {}\n", error.what());
    return k_exit_failed;
  }
}

}  // namespace nvfresh

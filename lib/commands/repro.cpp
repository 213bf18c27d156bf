// `nvfresh repro [-n N] [-j J] [--out DIR] [--seed S] [--json] -- nvcc <args...>`: compiles one TU N
// times under perturbation (see repro.hpp), J at a time, each run in a private directory, groups the
// outputs by normalized component digests and keeps one artifact per variant and one diff per variant
// against the first. Exit status: 0 all identical, 1 more than one variant, 2 a run failed or usage.
#include "repro/repro.hpp"
#include "commands/commands.hpp"
#include "digest/compare.hpp"
#include "digest/comparison_report.hpp"
#include "digest/object_digest.hpp"
#include "util/file_io.hpp"
#include "util/installed_libraries.hpp"
#include "util/process.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr int k_exit_identical = 0;
constexpr int k_exit_variants = 1;
constexpr int k_exit_failed = 2;
constexpr std::size_t k_max_stderr_shown = 16 * 1024;
constexpr std::uint32_t k_addr_no_randomize = 0x0040000;

struct ReproOptions {
  std::size_t runs = 8;
  std::size_t jobs = 2;
  std::string out_dir;
  std::uint64_t seed = 0;
  bool json = false;
  std::vector<std::string> command;
};

// How the control run turns ASLR off: a command prefix ("setarch <machine> -R"), or why it cannot.
struct AslrControl {
  std::vector<std::string> prefix;
  std::string note;
};

struct RunRecord {
  std::size_t index = 0;
  Perturbation perturbation;
  std::vector<std::string> argv;
  Environment env;
  std::string output;
  std::string tmp_dir;  // the run's private TMPDIR
  std::string stderr_path;
  ProcessResult result;
  std::string error;  // why the run failed to start or its output could not be digested
  std::optional<ObjectDigests> digests;
  std::optional<std::size_t> variant;

  bool failed() const { return !error.empty() || !result.succeeded(); }
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

std::optional<int> parse_options(const std::vector<std::string>& args, ReproOptions& options)
{
  auto separator = std::find(args.begin(), args.end(), "--");
  options.command.assign(separator == args.end() ? separator : separator + 1, args.end());
  options.seed = std::random_device{}();
  CLI::App app(
    "Compile one TU N times under perturbation (ASLR, heap layout, environment size, private "
    "temp dirs) and report the distinct outputs by normalized digests. Exit status: 0 all "
    "identical, 1 several variants, 2 a run failed.",
    "nvfresh repro [options] -- nvcc <args...>");
  app.add_option("-n,--runs", options.runs, "number of compiles (default 8)")
    ->check(CLI::Range(1, 10000));
  app.add_option("-j,--jobs", options.jobs, "compiles at a time (default 2)")
    ->check(CLI::Range(1, 256));
  app.add_option("--out", options.out_dir,
                 "where to keep artifacts and diffs (default ./nvfresh-repro-<time>)");
  app.add_option("--seed", options.seed,
                 "seed of the perturbation values (printed; to replay a run)");
  app.add_flag("--json", options.json, "machine-readable report on stdout");
  try {
    app.parse(std::vector<std::string>(std::make_reverse_iterator(separator), args.rend()));
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error);
    return status == 0 ? k_exit_identical : k_exit_failed;
  }
  if (options.command.empty()) {
    fmt::print(
      stderr, "nvfresh repro: give the compile after \"--\", e.g. nvfresh repro -- nvcc -c k.cu\n");
    return k_exit_failed;
  }
  if (options.out_dir.empty()) {
    options.out_dir = "nvfresh-repro-" + timestamp();
  }
  return std::nullopt;
}

// Runs `setarch <machine> -R cat /proc/self/personality` and checks that ADDR_NO_RANDOMIZE is set
// (a container may refuse the personality change).
AslrControl probe_aslr_control(const Environment& env, const fs::path& scratch)
{
  std::string setarch = find_program("setarch", env);
  if (setarch.empty()) {
    return {{}, "unavailable: setarch is not installed; run 0 is an unperturbed ASLR-on run"};
  }
  struct utsname machine {};
  ::uname(&machine);
  std::vector<std::string> prefix{setarch, machine.machine, "-R"};
  std::vector<std::string> probe = prefix;
  probe.insert(probe.end(), {"cat", "/proc/self/personality"});
  const std::string out = (scratch / "personality").string();
  const bool ran = run_redirected(probe, env, out, out + ".stderr").succeeded();
  const std::string personality = "0" + try_read_file(out).value_or("");
  if (!ran || (std::strtoul(personality.c_str(), nullptr, 16) & k_addr_no_randomize) == 0) {
    return {{},
            "unavailable: setarch -R did not set ADDR_NO_RANDOMIZE here; run 0 is an unperturbed "
            "ASLR-on run"};
  }
  return {prefix, "run 0 is the control with ASLR off (setarch -R); the others run with ASLR on"};
}

std::string system_aslr_note()
{
  auto setting = try_read_file("/proc/sys/kernel/randomize_va_space");
  if (setting && !setting->empty() && (*setting)[0] == '0') {
    return "warning: ASLR is off system-wide (kernel.randomize_va_space=0): no run has ASLR on";
  }
  return {};
}

std::vector<RunRecord> plan_runs(const ReproOptions& options, const ReproTarget& target,
                                 const AslrControl& aslr, const std::string& heap_noise_library,
                                 const Environment& env, const fs::path& scratch)
{
  std::vector<RunRecord> runs;
  auto plan = plan_perturbations(options.runs, options.seed);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    RunRecord run;
    run.index = i;
    run.perturbation = plan[i];
    run.perturbation.aslr_off = plan[i].aslr_off && !aslr.prefix.empty();
    const fs::path dir = scratch / fmt::format("run-{:05}", i);
    fs::create_directories(dir / "tmp");
    fs::create_directories(dir / "out");
    run.output = (dir / "out" / target.output_name).string();
    run.stderr_path = (dir / "stderr").string();
    run.argv = run_command(target, run.output, (dir / "out" / "depfile.d").string());
    if (run.perturbation.aslr_off) {
      run.argv.insert(run.argv.begin(), aslr.prefix.begin(), aslr.prefix.end());
    }
    run.tmp_dir = (dir / "tmp").string();
    if (heap_noise_library.empty()) {
      run.perturbation.heap_noise_seed = 0;
    }
    run.env = run.perturbation.apply(env, run.tmp_dir, heap_noise_library);
    runs.push_back(std::move(run));
  }
  return runs;
}

// "3/8 done, 2 running, 1 failed" on one rewritten terminal line; silent when stderr is no terminal.
class Progress {
public:
  explicit Progress(std::size_t total) : m_total(total), m_enabled(::isatty(STDERR_FILENO) != 0) {}
  void started() { update(1, 0, 0); }
  void finished(bool failed) { update(-1, 1, failed ? 1 : 0); }
  void clear()
  {
    if (m_enabled) {
      fmt::print(stderr, "\r\033[K");
    }
  }

private:
  void update(int running, std::size_t done, std::size_t failed)
  {
    std::lock_guard lock(m_mutex);
    m_running += running;
    m_done += done;
    m_failed += failed;
    if (m_enabled) {
      fmt::print(stderr, "\r\033[Knvfresh repro: {}/{} done, {} running, {} failed", m_done,
                 m_total, m_running, m_failed);
      std::fflush(stderr);
    }
  }

  std::mutex m_mutex;
  std::size_t m_total;
  bool m_enabled;
  int m_running = 0;
  std::size_t m_done = 0;
  std::size_t m_failed = 0;
};

void execute_run(RunRecord& run)
{
  try {
    run.result = run_redirected(run.argv, run.env, run.stderr_path + ".stdout", run.stderr_path);
  } catch (const std::exception& error) {
    run.error = error.what();
    return;
  }
  if (!run.result.succeeded()) {
    return;
  }
  try {
    auto bytes = try_read_file(run.output);
    if (!bytes) {
      throw DigestError(fmt::format("{}: cannot be read", run.output));
    }
    replace_same_length(*bytes, run.tmp_dir, canonical_tmp_dir(run.tmp_dir));
    run.digests = digest_bytes(*bytes, run.output);
  } catch (const DigestError& error) {
    run.error = fmt::format("output cannot be digested: {}", error.what());
  }
}

void execute_runs(std::vector<RunRecord>& runs, std::size_t jobs)
{
  Progress progress(runs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      progress.started();
      execute_run(runs[i]);
      progress.finished(runs[i].failed());
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t j = 0; j < std::min(jobs, runs.size()); ++j) {
    threads.emplace_back(worker);
  }
  for (auto& thread : threads) {
    thread.join();
  }
  progress.clear();
}

std::vector<Variant> assign_variants(std::vector<RunRecord>& runs)
{
  std::vector<RunDigests> digests;
  for (const auto& run : runs) {
    if (!run.failed()) {
      digests.push_back(RunDigests{run.index, component_digest_list(*run.digests)});
    }
  }
  std::vector<Variant> variants = group_variants(digests);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t index : variants[v].runs) {
      runs[index].variant = v;
    }
  }
  return variants;
}

// What is kept in --out for one variant.
struct KeptVariant {
  std::string artifact;
  std::string diff;  // empty for the first variant
  std::optional<Comparison> versus_first;
};

std::vector<KeptVariant> keep_variants(const fs::path& out, const std::vector<Variant>& variants,
                                       const std::vector<RunRecord>& runs, const std::string& name)
{
  std::vector<KeptVariant> kept;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const RunRecord& run = runs[variants[v].runs.front()];
    KeptVariant entry;
    const fs::path dir = out / fmt::format("variant-{}", v + 1);
    fs::create_directories(dir);
    entry.artifact = (dir / name).string();
    fs::copy_file(run.output, entry.artifact, fs::copy_options::overwrite_existing);
    if (v > 0) {
      entry.versus_first = compare_digests(*runs[variants[0].runs.front()].digests, *run.digests);
      entry.diff = (out / fmt::format("variant-{}.diff", v + 1)).string();
      std::ofstream(entry.diff) << format_comparison(kept[0].artifact, entry.artifact,
                                                     *entry.versus_first);
    }
    kept.push_back(std::move(entry));
  }
  return kept;
}

std::string run_status(const RunRecord& run)
{
  if (!run.error.empty()) {
    return "FAILED";
  }
  if (run.result.term_signal != 0) {
    return fmt::format("FAILED (signal {})", run.result.term_signal);
  }
  if (run.result.exit_code != 0) {
    return fmt::format("FAILED (exit {})", run.result.exit_code);
  }
  return fmt::format("variant {}", *run.variant + 1);
}

std::vector<std::string> differing_kernels(const Comparison& comparison)
{
  std::vector<std::string> names;
  for (const auto& component : comparison.components) {
    for (const auto& kernel : component.kernels) {
      names.push_back(component.key + ": " + kernel.name);
    }
  }
  return names;
}

void show_failures(const fs::path& out, const std::vector<RunRecord>& runs)
{
  for (const auto& run : runs) {
    if (!run.failed()) {
      continue;
    }
    std::string text = try_read_file(run.stderr_path).value_or("");
    const fs::path kept = out / fmt::format("run-{}.stderr", run.index);
    std::ofstream(kept) << text << (run.error.empty() ? "" : "nvfresh repro: " + run.error + "\n");
    if (text.size() > k_max_stderr_shown) {
      text =
        text.substr(0, k_max_stderr_shown) + "\n[... cut; all of it in " + kept.string() + "]\n";
    }
    fmt::print(stderr, "nvfresh repro: run {} {}{}; its stderr:\n{}", run.index, run_status(run),
               run.error.empty() ? "" : ": " + run.error, text);
  }
}

std::string heap_noise_note(const std::string& library)
{
  return library.empty()
           ? "off: libnvfresh_heap_noise.so is not installed next to nvfresh"
           : fmt::format("{} preloaded into the perturbed runs (random allocations before main)",
                         library);
}

struct Report {
  const ReproOptions& options;
  const AslrControl& aslr;
  std::string heap_noise;
  std::string system_note;
  const std::vector<RunRecord>& runs;
  const std::vector<Variant>& variants;
  const std::vector<KeptVariant>& kept;
  int exit_code = 0;
};

void print_variant(const Report& report, std::size_t v)
{
  const auto& variant = report.variants[v];
  const auto& kept = report.kept[v];
  fmt::print("  variant {}: {} run{} ({})  kept: {}\n", v + 1, variant.runs.size(),
             variant.runs.size() == 1 ? "" : "s", fmt::join(variant.runs, " "), kept.artifact);
  if (!kept.versus_first) {
    return;
  }
  fmt::print("    differs from variant 1 in: {}\n",
             fmt::join(differing_components(report.variants[0], variant), ", "));
  const auto kernels = differing_kernels(*kept.versus_first);
  if (!kernels.empty()) {
    fmt::print("    kernels: {}\n", fmt::join(kernels, ", "));
  }
  fmt::print("    diff: {}\n", kept.diff);
}

void print_human(const Report& report)
{
  fmt::print("nvfresh repro: {} runs of `{}` ({} at a time, seed {})\n", report.runs.size(),
             fmt::join(report.options.command, " "), report.options.jobs, report.options.seed);
  fmt::print("ASLR control: {}\n", report.aslr.note);
  fmt::print("heap noise: {}\n", report.heap_noise);
  if (!report.system_note.empty()) {
    fmt::print("{}\n", report.system_note);
  }
  fmt::print(
    "every run: private TMPDIR (its path, written into host debug info, is factored out of the "
    "digests) and output path\n{:>5}  {:<18} perturbations\n",
    "run", "result");
  for (const auto& run : report.runs) {
    fmt::print("{:>5}  {:<18} {}\n", run.index, run_status(run), run.perturbation.describe());
  }
  const auto ok = std::count_if(report.runs.begin(), report.runs.end(),
                                [](const auto& r) { return !r.failed(); });
  fmt::print("variants: {} in {} successful run{}\n", report.variants.size(), ok,
             ok == 1 ? "" : "s");
  for (std::size_t v = 0; v < report.variants.size(); ++v) {
    print_variant(report, v);
  }
  static constexpr std::string_view k_verdicts[] = {
    "deterministic: all successful runs are identical", "NOT deterministic: several variants",
    "runs failed"};
  fmt::print("result: {} (exit {})\n", k_verdicts[report.exit_code], report.exit_code);
}

nlohmann::json report_json(const Report& report)
{
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : report.runs) {
    runs.push_back(
      {{"run", run.index},
       {"perturbations", run.perturbation.describe()},
       {"aslr_off", run.perturbation.aslr_off},
       {"exit_code", run.result.exit_code},
       {"signal", run.result.term_signal},
       {"error", run.error},
       {"failed", run.failed()},
       {"variant", run.variant ? nlohmann::json(*run.variant + 1) : nlohmann::json(nullptr)}});
  }
  nlohmann::json variants = nlohmann::json::array();
  for (std::size_t v = 0; v < report.variants.size(); ++v) {
    const auto& kept = report.kept[v];
    nlohmann::json entry{
      {"variant", v + 1}, {"runs", report.variants[v].runs}, {"artifact", kept.artifact}};
    if (kept.versus_first) {
      entry["diff"] = kept.diff;
      entry["differing_components"] = differing_components(report.variants[0], report.variants[v]);
      entry["comparison"] =
        comparison_json(report.kept[0].artifact, kept.artifact, *kept.versus_first);
    }
    variants.push_back(std::move(entry));
  }
  return {{"command", report.options.command}, {"seed", report.options.seed},
          {"jobs", report.options.jobs},       {"aslr_control", report.aslr.note},
          {"heap_noise", report.heap_noise},   {"system_aslr", report.system_note},
          {"runs", std::move(runs)},           {"variants", std::move(variants)},
          {"exit_code", report.exit_code}};
}

int exit_code_of(const std::vector<RunRecord>& runs, const std::vector<Variant>& variants)
{
  const bool any_failed =
    std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.failed(); });
  if (any_failed) {
    return k_exit_failed;
  }
  return variants.size() > 1 ? k_exit_variants : k_exit_identical;
}

// A scratch directory under $TMPDIR holding the runs' private directories; removed afterwards.
class ScratchDir {
public:
  ScratchDir()
  {
    std::string pattern = (fs::temp_directory_path() / "nvfresh-repro.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(fmt::format("cannot create a directory like {}", pattern));
    }
    m_path = pattern;
  }
  ~ScratchDir()
  {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return m_path; }

private:
  fs::path m_path;
};

int repro(const ReproOptions& options, const ReproTarget& target, const Environment& env)
{
  ScratchDir scratch;
  const AslrControl aslr = probe_aslr_control(env, scratch.path());
  const std::string noise_library = locate_installed_library("libnvfresh_heap_noise.so");
  std::vector<RunRecord> runs =
    plan_runs(options, target, aslr, noise_library, env, scratch.path());
  execute_runs(runs, options.jobs);
  const std::vector<Variant> variants = assign_variants(runs);
  const fs::path out = fs::absolute(options.out_dir);
  fs::create_directories(out);
  const std::vector<KeptVariant> kept = keep_variants(out, variants, runs, target.output_name);
  show_failures(out, runs);
  const Report report{options,  aslr, heap_noise_note(noise_library), system_aslr_note(), runs,
                      variants, kept, exit_code_of(runs, variants)};
  const nlohmann::json document = report_json(report);
  std::ofstream(out / "report.json") << document.dump(2) << "\n";
  if (options.json) {
    fmt::print("{}\n", document.dump(2));
  } else {
    print_human(report);
    fmt::print("kept in {}\n", out.string());
  }
  std::fflush(stdout);
  return report.exit_code;
}

}  // namespace

int run_repro(const std::vector<std::string>& args)
{
  ReproOptions options;
  if (auto status = parse_options(args, options)) {
    return *status;
  }
  const Environment env = current_environment();
  auto target = prepare_repro_target(options.command, env, fs::current_path().string());
  if (const auto* problem = std::get_if<std::string>(&target)) {
    fmt::print(stderr, "nvfresh repro: {}\n", *problem);
    return k_exit_failed;
  }
  try {
    return repro(options, std::get<ReproTarget>(target), env);
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh repro: {}\n", error.what());
    return k_exit_failed;
  }
}

}  // namespace nvfresh

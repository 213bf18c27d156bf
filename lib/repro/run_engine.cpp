// The run engine of `nvfresh repro` (run_engine.hpp).
#include "repro/run_engine.hpp"

#include "digest/compare.hpp"
#include "digest/comparison_report.hpp"
#include "digest/object_digest.hpp"
#include "repro/private_caches.hpp"
#include "repro/repro_report.hpp"
#include "repro/run_artifacts.hpp"
#include "util/file_io.hpp"
#include "util/progress.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int k_exit_identical = 0;
constexpr int k_exit_variants = 1;
constexpr int k_exit_failed = 2;
constexpr std::size_t k_max_stderr_shown = std::size_t{16} * 1024;
constexpr std::size_t k_files_named_in_errors = 12;
constexpr std::uint32_t k_addr_no_randomize = 0x0040000;

// How the control run turns ASLR off: a command prefix ("setarch <machine> -R"), or why it cannot.
struct AslrControl {
  std::vector<std::string> prefix;
  std::string note;
};

// Runs `setarch <machine> -R cat /proc/self/personality` and checks that ADDR_NO_RANDOMIZE is set
// (a container may refuse the personality change).
AslrControl probe_aslr_control(const Environment& env, const fs::path& scratch,
                               ProcessRunner& runner)
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
  const bool ran = runner.run_redirected(probe, env, out, out + ".stderr", {}, {}).succeeded();
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

// --touch-sources: run k's sources get this time plus k seconds (2001-09-09), a time no editor
// leaves: -lineinfo and -G write it into the line table, where compare must not see it.
constexpr std::int64_t k_touch_base_ns = std::int64_t{1'000'000'000} * 1'000'000'000;

std::int64_t touched_mtime_ns(std::size_t run)
{
  return k_touch_base_ns + static_cast<std::int64_t>(run) * 1'000'000'000;
}

// Gives every file under `root` the run's modification time.
void touch_tree(const std::string& root, std::size_t run)
{
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) {
      set_mtime_ns(entry.path().string(), touched_mtime_ns(run));
    }
  }
}

// nvcc mode's --touch-sources changes the user's source file: its modification time comes back
// when repro ends (a build tool must not see it as edited).
class RestoredMtime {
public:
  explicit RestoredMtime(std::string path)
    : m_path(std::move(path)), m_mtime_ns(stat_file(m_path).mtime_ns)
  {}
  ~RestoredMtime()
  {
    try {
      set_mtime_ns(m_path, m_mtime_ns);
    } catch (const std::exception& error) {
      fmt::print(stderr, "nvfresh repro: could not restore the modification time of {}: {}\n",
                 m_path, error.what());
    }
  }
  RestoredMtime(const RestoredMtime&) = delete;
  RestoredMtime& operator=(const RestoredMtime&) = delete;

private:
  std::string m_path;
  std::int64_t m_mtime_ns;
};

// The run's private directories, its environment (perturbation, TMPDIR, compile caches) and argv.
RunRecord plan_run(std::size_t index, const Perturbation& planned, const ReproMode& mode,
                   const AslrControl& aslr, const std::string& heap_noise_library,
                   const Environment& env, const std::vector<std::string>& command,
                   const fs::path& scratch)
{
  RunRecord run;
  run.index = index;
  run.perturbation = planned;
  run.perturbation.aslr_off = planned.aslr_off && !aslr.prefix.empty();
  if (heap_noise_library.empty()) {
    run.perturbation.heap_noise_seed = 0;
  }
  const fs::path dir = scratch / fmt::format("run-{:05}", index);
  run.run_dir = dir.string();
  run.tmp_dir = (dir / "tmp").string();
  fs::create_directories(run.tmp_dir);
  run.stdout_path = (dir / "stdout").string();
  run.stderr_path = (dir / "stderr").string();
  if (mode.nvcc) {
    fs::create_directories(dir / "out");
    run.output = (dir / "out" / mode.nvcc->output_name).string();
    run.argv = run_command(*mode.nvcc, run.output, (dir / "out" / "depfile.d").string());
  } else {
    run.working_dir = (dir / "work").string();
    run.argv = command;
  }
  if (run.perturbation.aslr_off) {
    run.argv.insert(run.argv.begin(), aslr.prefix.begin(), aslr.prefix.end());
  }
  run.env = run.perturbation.apply(env, run.tmp_dir, heap_noise_library);
  for (const auto& [variable, directory] : private_cache_directories((dir / "cache").string())) {
    fs::create_directories(directory);
    run.env[variable] = directory;
  }
  return run;
}

// The run's own directory names, written into what it made, read as the same placeholder in every run.
Rewrites run_rewrites(const RunRecord& run)
{
  Rewrites rewrites{{run.run_dir, canonical_tmp_dir(run.run_dir)}};
  return rewrites;
}

std::string files_in(const std::string& root)
{
  const auto everything = find_artifacts(root, {"**/*"}).files;
  std::vector<std::string> shown(
    everything.begin(), everything.begin() + std::min(everything.size(), k_files_named_in_errors));
  if (everything.size() > shown.size()) {
    shown.push_back(fmt::format("... {} more", everything.size() - shown.size()));
  }
  return shown.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(shown, ", "));
}

// One observation: the artifacts the patterns match under `root`.
Observation observe(const std::string& root, std::optional<std::size_t> sample,
                    const ReproMode& mode, Rewrites rewrites)
{
  const FoundArtifacts found = find_artifacts(root, mode.patterns);
  if (!found.unmatched.empty()) {
    throw std::runtime_error(fmt::format(
      "--artifact {} matched no file in {} (it holds: {})", fmt::join(found.unmatched, " "),
      sample ? sample_directory_name(*sample) : std::string("the working directory"),
      files_in(root)));
  }
  if (sample) {
    const std::string name = sample_directory_name(*sample);
    rewrites.emplace_back(name, std::string(k_sample_directory_prefix) +
                                  std::string(name.size() - k_sample_directory_prefix.size(), 'X'));
  }
  Observation observation;
  observation.sample = sample;
  for (const auto& relative : found.files) {
    observation.artifacts.push_back(digest_run_artifact(root, relative, rewrites));
  }
  observation.components = artifact_component_list(observation.artifacts);
  return observation;
}

void collect_command_outputs(RunRecord& run, const ReproMode& mode)
{
  const auto samples = sample_directories(run.working_dir);
  if (samples.empty()) {
    run.observations.push_back(observe(run.working_dir, std::nullopt, mode, run_rewrites(run)));
    return;
  }
  for (const auto& sample : samples) {
    run.observations.push_back(observe(sample.path, sample.index, mode, run_rewrites(run)));
  }
}

void collect_nvcc_output(RunRecord& run, const ReproMode& mode)
{
  ArtifactDigest artifact = digest_run_artifact(fs::path(run.output).parent_path().string(),
                                                mode.nvcc->output_name, run_rewrites(run));
  if (!artifact.digests) {
    throw DigestError(fmt::format("{}: not an object, fatbin, cubin or PTX", run.output));
  }
  Observation observation;
  observation.components = component_digest_list(*artifact.digests);
  observation.artifacts.push_back(std::move(artifact));
  run.observations.push_back(std::move(observation));
}

// The run's working directory: empty, or a copy of --workdir-copy DIR without repro's own reports
// (nvfresh-repro-<time>, the default --out, when DIR is where repro runs).
void prepare_working_dir(const RunRecord& run, const ReproMode& mode)
{
  fs::create_directories(run.working_dir);
  if (mode.workdir_copy.empty()) {
    return;
  }
  for (const auto& entry : fs::directory_iterator(mode.workdir_copy)) {
    if (entry.path().filename().string().starts_with(k_repro_out_prefix)) {
      continue;
    }
    fs::copy(entry.path(), fs::path(run.working_dir) / entry.path().filename(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
}

// --touch-sources: the run's sources get its own modification time. In nvcc mode the runs share the
// source file: with -j above 1 a run may see a neighbour's time (still not the original one).
void touch_sources(const RunRecord& run, const ReproMode& mode)
{
  if (mode.nvcc) {
    set_mtime_ns(mode.nvcc->source, touched_mtime_ns(run.index));
  } else {
    touch_tree(run.working_dir, run.index);
  }
}

// The signal that interrupted repro (SIGINT, SIGTERM), else 0. Set by interrupt_repro, which the
// handler of ReproInterrupts calls.
std::atomic<int> g_interrupted{0};

void execute_run(RunRecord& run, const ReproMode& mode, double timeout_seconds,
                 ProcessRunner& runner)
{
  const auto start = Clock::now();
  try {
    if (!mode.nvcc) {
      prepare_working_dir(run, mode);
    }
    if (mode.touch_sources) {
      touch_sources(run, mode);
    }
    run.result = runner.run_redirected(run.argv, run.env, run.stdout_path, run.stderr_path,
                                       run.working_dir, RedirectLimits{true, timeout_seconds});
  } catch (const std::exception& error) {
    run.error = error.what();
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (run.result.timed_out) {
    run.error = fmt::format("timed out after {:g} s (--timeout); killed with every process it "
                            "started",
                            timeout_seconds);
  } else if (g_interrupted.load() != 0 && run.failed()) {
    run.error = "interrupted: repro was stopped while it ran";
  }
  if (run.failed()) {
    return;
  }
  try {
    if (mode.nvcc) {
      collect_nvcc_output(run, mode);
    } else {
      collect_command_outputs(run, mode);
    }
  } catch (const DigestError& error) {
    run.error = fmt::format("output cannot be digested: {}", error.what());
  } catch (const std::exception& error) {
    run.error = error.what();
  }
}

// "nvfresh repro: 12/60, 0.2/s, 1 min 10 s, about 5 min 0 s left, 2 running, 0 failed, 2 variants
// so far" on one rewritten terminal line (util/progress.hpp); nothing when `enabled` is false.
class Progress {
public:
  Progress(std::size_t total, bool enabled) : m_total(total), m_line("nvfresh repro", enabled) {}
  void started() { update(1, nullptr); }
  void finished(const RunRecord& run) { update(-1, &run); }
  void clear() { m_line.clear(); }

private:
  void update(int running, const RunRecord* run)
  {
    std::lock_guard lock(m_mutex);
    m_running += running;
    if (run != nullptr) {
      ++m_done;
      m_failed += run->failed() ? 1 : 0;
      for (const auto& observation : run->observations) {
        m_seen.insert(observation.components);
      }
    }
    m_line.update(m_done, m_total,
                  fmt::format(", {} running, {} failed, {} variant{} so far", m_running, m_failed,
                              m_seen.size(), m_seen.size() == 1 ? "" : "s"));
  }

  std::mutex m_mutex;
  std::size_t m_total;
  ProgressLine m_line;
  int m_running = 0;
  std::size_t m_done = 0;
  std::size_t m_failed = 0;
  std::set<ComponentDigestList> m_seen;
};

// Runs them, `jobs` at a time, until all have run or repro is interrupted; returns how many were
// started (runs are started in order: the rest never ran).
std::size_t execute_runs(std::vector<RunRecord>& runs, const ReproMode& mode, std::size_t jobs,
                         double timeout_seconds, bool show_progress, ProcessRunner& runner)
{
  Progress progress(runs.size(), show_progress);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> started{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      if (g_interrupted.load() != 0) {
        runs[i].error = "not run: repro was interrupted";
        continue;
      }
      std::size_t seen = started.load();
      while (seen < i + 1 && !started.compare_exchange_weak(seen, i + 1)) {
      }
      progress.started();
      execute_run(runs[i], mode, timeout_seconds, runner);
      progress.finished(runs[i]);
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
  return started.load();
}

// While it lives, SIGINT and SIGTERM stop repro's runs (their whole process groups) and let it report
// what finished; a second signal ends repro at once (the handler is reset after the first).
class ReproInterrupts {
public:
  ReproInterrupts()
  {
    g_interrupted.store(0);
    allow_redirected_children();
    struct sigaction action {};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &m_old_int);
    ::sigaction(SIGTERM, &action, &m_old_term);
  }
  ~ReproInterrupts()
  {
    ::sigaction(SIGINT, &m_old_int, nullptr);
    ::sigaction(SIGTERM, &m_old_term, nullptr);
    allow_redirected_children();  // run_redirected's later children (in a test) start as before
  }
  ReproInterrupts(const ReproInterrupts&) = delete;
  ReproInterrupts& operator=(const ReproInterrupts&) = delete;

private:
  static void on_signal(int signal) { interrupt_repro(signal); }

  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

// The warning that heads the report of an interrupted repro.
std::string interrupted_note(std::size_t started, std::size_t planned)
{
  return fmt::format("interrupted by {} after starting {} of {} runs: the runs under way were "
                     "stopped, and this report covers the runs that finished",
                     g_interrupted.load() == SIGINT ? "SIGINT" : "SIGTERM", started, planned);
}

// Groups every observation of every successful run; returns the variants (over observation numbers)
// and where each observation is.
std::pair<std::vector<Variant>, std::vector<ObservationRef>> assign_variants(
  std::vector<RunRecord>& runs)
{
  std::vector<RunDigests> digests;
  std::vector<ObservationRef> refs;
  std::vector<Observation*> observations;
  for (auto& run : runs) {
    for (auto& observation : run.observations) {
      if (!run.failed()) {
        digests.push_back(RunDigests{refs.size(), observation.components});
        refs.push_back({run.index, observation.sample});
        observations.push_back(&observation);
      }
    }
  }
  std::vector<Variant> variants = group_variants(digests);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t number : variants[v].runs) {
      observations[number]->variant = v;
    }
  }
  return {std::move(variants), std::move(refs)};
}

const Observation& observation_at(const std::vector<RunRecord>& runs, const ObservationRef& ref)
{
  const auto& observations = runs[ref.run].observations;
  return *std::find_if(observations.begin(), observations.end(),
                       [&](const Observation& o) { return o.sample == ref.sample; });
}

// Compares one kept artifact with variant 1's artifact of the same path.
void compare_with_first(KeptArtifact& kept, const ArtifactDigest& artifact,
                        const ArtifactDigest& first, const std::string& first_kept)
{
  if (artifact.digests && first.digests) {
    kept.versus_first = compare_digests(*first.digests, *artifact.digests, 0);
    kept.verdict = kept.versus_first->same() ? Verdict::same : Verdict::different;
    return;
  }
  const bool same = !artifact.digests && !first.digests && artifact.content == first.content;
  kept.verdict = same ? Verdict::same : Verdict::different;
  if (!same) {
    kept.file_diff = file_diff(first_kept, kept.kept, 0);
  }
}

std::string variant_diff_text(const KeptVariant& first, const KeptVariant& kept, std::size_t v)
{
  std::string text;
  for (const auto& artifact : kept.artifacts) {
    if (artifact.verdict == Verdict::same) {
      continue;
    }
    const auto match = std::find_if(first.artifacts.begin(), first.artifacts.end(),
                                    [&](const KeptArtifact& a) { return a.path == artifact.path; });
    text += fmt::format("=== {}: {}\n", artifact.path,
                        artifact.verdict == Verdict::only_in_b
                          ? "only in variant " + std::to_string(v + 1)
                          : "differs");
    if (artifact.versus_first) {
      text += format_comparison(match->kept, artifact.kept, *artifact.versus_first);
    }
    for (const auto& line : artifact.file_diff) {
      text += line + "\n";
    }
  }
  for (const auto& artifact : first.artifacts) {
    const bool here = std::any_of(kept.artifacts.begin(), kept.artifacts.end(),
                                  [&](const KeptArtifact& a) { return a.path == artifact.path; });
    if (!here) {
      text += fmt::format("=== {}: only in variant 1\n", artifact.path);
    }
  }
  return text;
}

// Keeps a copy of each variant's first observation (its artifacts under --out/variant-<k>/) and, for
// every variant after the first, a diff against variant 1.
std::vector<KeptVariant> keep_variants(const fs::path& out, const std::vector<Variant>& variants,
                                       const std::vector<ObservationRef>& refs,
                                       const std::vector<RunRecord>& runs)
{
  std::vector<KeptVariant> kept;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const Observation& observation = observation_at(runs, refs[variants[v].runs.front()]);
    KeptVariant entry;
    entry.directory = (out / fmt::format("variant-{}", v + 1)).string();
    for (const auto& artifact : observation.artifacts) {
      KeptArtifact copy;
      copy.path = artifact.path;
      copy.kept = (fs::path(entry.directory) / artifact.path).string();
      fs::create_directories(fs::path(copy.kept).parent_path());
      fs::copy_file(artifact.source, copy.kept, fs::copy_options::overwrite_existing);
      if (v > 0) {
        const Observation& first = observation_at(runs, refs[variants[0].runs.front()]);
        const auto match =
          std::find_if(first.artifacts.begin(), first.artifacts.end(),
                       [&](const ArtifactDigest& a) { return a.path == artifact.path; });
        if (match == first.artifacts.end()) {
          copy.verdict = Verdict::only_in_b;
        } else {
          compare_with_first(copy, artifact, *match,
                             (fs::path(kept[0].directory) / artifact.path).string());
        }
      }
      entry.artifacts.push_back(std::move(copy));
    }
    if (v > 0) {
      entry.differing = differing_components(variants[0], variants[v]);
      entry.diff = (out / fmt::format("variant-{}.diff", v + 1)).string();
      std::ofstream(entry.diff) << variant_diff_text(kept[0], entry, v);
    }
    kept.push_back(std::move(entry));
  }
  return kept;
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

int exit_code_of(const std::vector<RunRecord>& runs, const std::vector<Variant>& variants)
{
  const bool any_failed =
    std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.failed(); });
  if (any_failed) {
    return k_exit_failed;
  }
  return variants.size() > 1 ? k_exit_variants : k_exit_identical;
}

std::vector<std::string> warnings_for(const Environment& env)
{
  std::vector<std::string> warnings = inherited_cache_warnings(env);
  if (std::string note = system_aslr_note(); !note.empty()) {
    warnings.push_back(std::move(note));
  }
  return warnings;
}

}  // namespace

void interrupt_repro(int signal) noexcept
{
  g_interrupted.store(signal);
  stop_redirected_children();
}

ReproRuns run_repro_runs(const ReproPlan& plan, const ReproMode& mode, const Environment& env,
                         ProcessRunner& runner)
{
  const auto start = Clock::now();
  ReproRuns done;
  done.warnings = warnings_for(env);
  for (const auto& warning : done.warnings) {
    fmt::print(stderr, "nvfresh repro: {}\n", warning);
  }
  ReproInterrupts interrupts;
  std::optional<RestoredMtime> source_mtime;
  if (mode.touch_sources && mode.nvcc) {
    source_mtime.emplace(mode.nvcc->source);
  }
  ScratchDir scratch("nvfresh-repro.");  // the runs' private directories
  const AslrControl aslr = probe_aslr_control(env, scratch.path(), runner);
  done.aslr_note = aslr.note;
  done.heap_noise_note = heap_noise_note(plan.heap_noise_library);
  const auto planned = plan_perturbations(plan.runs, plan.seed);
  std::vector<RunRecord>& runs = done.runs;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    runs.push_back(plan_run(i, planned[i], mode, aslr, plan.heap_noise_library, env, plan.command,
                            scratch.path()));
  }
  const std::size_t started =
    execute_runs(runs, mode, plan.jobs, plan.timeout_seconds, plan.show_progress, runner);
  done.interrupted_by = g_interrupted.load();
  if (done.interrupted_by != 0) {
    done.warnings.push_back(interrupted_note(started, runs.size()));
    fmt::print(stderr, "nvfresh repro: {}\n", done.warnings.back());
    runs.resize(started);
  }
  std::tie(done.variants, done.observations) = assign_variants(runs);
  const fs::path out = fs::absolute(plan.out_dir);
  fs::create_directories(out);
  done.out_dir = out.string();
  done.kept = keep_variants(out, done.variants, done.observations, runs);
  show_failures(out, runs);
  done.exit_code =
    done.interrupted_by != 0 ? 128 + done.interrupted_by : exit_code_of(runs, done.variants);
  done.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return done;
}

}  // namespace nvfresh

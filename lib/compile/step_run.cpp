#include "compile/step_run.hpp"

#include "cache/line_layout.hpp"
#include "cache/object_cache.hpp"
#include "cache/step_key.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "record/step_events.hpp"
#include "trace/trace_channel.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nvfresh {

namespace {

constexpr std::string_view k_key_version = "nvfresh-step-2";
constexpr std::string_view k_trace_file_variable = "NVFRESH_TRACE_FILE";
constexpr std::string_view k_never_read_prefixes[] = {"/proc/", "/dev/", "/sys/"};

struct Step {
  std::string tool;               // as execve named it
  std::string tool_exe;           // canonical
  std::vector<std::string> argv;  // argv[0] as the caller passed it
  TempNames temp;                 // nvcc's temporary names in its words
  std::string cwd;
  std::string pass;
  std::int64_t started_ns = 0;  // CLOCK_MONOTONIC, when the runner started (a served step's time)
};

// What the key holds of the step's inputs: the temporary files it is given (the only ones a stored
// step may have read), and where the code lines of cicc's preprocessed input sit, when the key
// holds its code alone (cache/line_layout.hpp).
struct KeyedInputs {
  std::set<std::string> given_files;
  std::optional<LineTable> lines;
  std::string lines_text;       // serialized, as a step entry keeps it
  std::string whole_input_why;  // why cicc's input is keyed with its line numbers, if it is
};

bool is_cicc(const Step& step)
{
  return fs::path(step.tool).filename() == "cicc";
}

// The environment the tool gets: the runner's, with LD_PRELOAD as the tracer found it.
Environment tool_environment(const Environment& runner_env)
{
  Environment env = runner_env;
  if (auto preload = env.find(k_step_preload_variable); preload != env.end()) {
    env["LD_PRELOAD"] = preload->second;
    env.erase(k_step_preload_variable);
  }
  return env;
}

[[noreturn]] void exec_plainly(const Step& step, const Environment& env)
{
  const int error = replace_process_as(step.tool, step.argv, env);
  std::_Exit(error == ENOENT ? 127 : 126);
}

// The tracer's pass tag for the tool's own argv (tool_arch in nvfresh_trace.c).
std::string pass_of(const std::vector<std::string>& argv)
{
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string value;
    if ((argv[i] == "-arch" || argv[i] == "--gpu-name") && i + 1 < argv.size()) {
      value = argv[i + 1];
    } else if (argv[i].starts_with("-arch=")) {
      value = argv[i].substr(6);
    } else if (argv[i].starts_with("--gpu-name=")) {
      value = argv[i].substr(11);
    }
    if (value.starts_with("compute_") || value.starts_with("sm_")) {
      return value;
    }
  }
  return "-";
}

// Where the step's trace lines go: the compile's socket, else its trace file, else nowhere.
class TraceSink {
public:
  explicit TraceSink(const Environment& env)
    : m_socket(env_value(env, k_trace_socket_variable)),
      m_file(env_value(env, std::string(k_trace_file_variable)))
  {}
  bool active() const { return !m_socket.empty() || !m_file.empty(); }
  // One datagram (or one append) per call: an X line and its I line travel together.
  bool send(std::string_view lines) const
  {
    if (!m_socket.empty()) {
      return send_trace_datagram(m_socket, lines);
    }
    if (!m_file.empty()) {
      const int fd = ::open(m_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      const bool written = fd >= 0 && write_fully(fd, lines);
      if (fd >= 0) {
        ::close(fd);
      }
      return written;
    }
    return true;
  }

private:
  std::string m_socket;
  std::string m_file;
};

// Where each step's outcome goes: the build tree's steps log the compile plan named (none for a
// tool run outside a compile nvfresh planned).
class StepReport {
public:
  explicit StepReport(const Environment& env)
    : m_root(env_value(env, k_step_record_root_variable)),
      m_object(env_value(env, k_step_object_variable)), m_run(env_value(env, k_step_run_variable))
  {}
  void add(const Step& step, Outcome outcome, std::int64_t duration_ns) const
  {
    if (m_root.empty()) {
      return;
    }
    append_step_event(m_root, {now_ns(), std::move(outcome), duration_ns, m_object, m_run,
                               step.pass, fs::path(step.tool).filename().string()});
  }

private:
  std::string m_root;
  std::string m_object;
  std::string m_run;
};

std::string process_lines(const Step& step)
{
  std::string lines =
    fmt::format("X {} {} {} {}\n", ::getpid(), ::getppid(), step.pass, step.tool_exe);
  const std::string invoked = absolute_path(step.tool, step.cwd);
  if (invoked != step.tool_exe) {
    lines += fmt::format("I {} {}\n", ::getpid(), invoked);
  }
  return lines;
}

double random_draw()
{
  std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

bool is_never_read(std::string_view path)
{
  return std::any_of(std::begin(k_never_read_prefixes), std::end(k_never_read_prefixes),
                     [&](std::string_view prefix) { return path.starts_with(prefix); });
}

// The key: the tool (path and content), the working directory, the words with nvcc's temporary
// names replaced, and the content of each temporary file the words name (names replaced too; of
// cicc's preprocessed input, its code without line numbers: `inputs.lines` says where it sat).
std::optional<Digest> step_key(const Step& step, FileHasher& hasher, KeyedInputs& inputs)
{
  auto tool = hasher.fingerprint(step.tool_exe);
  if (!tool.fingerprint) {
    return std::nullopt;
  }
  Hasher key;
  key.tag(k_key_version).tag("tool").field(step.tool_exe).field(tool.fingerprint->hash.to_hex());
  key.tag("cwd").field(step.cwd);
  key.tag("args");
  for (size_t i = 1; i < step.argv.size(); ++i) {
    key.field(normalize_temp_names(step.argv[i], step.temp));
  }
  key.tag("files");
  for (size_t i = 1; i < step.argv.size(); ++i) {
    const std::string& word = step.argv[i];
    if (!has_stem(word, step.temp)) {
      continue;
    }
    const std::string path = absolute_path(word, step.cwd);
    if (!stat_file(path).is_regular) {
      continue;
    }
    auto content = try_read_file(path);
    if (!content) {
      return std::nullopt;
    }
    std::string normalized = normalize_temp_names(*content, step.temp);
    key.field(normalize_temp_names(word, step.temp));
    std::optional<LineLayout> layout;
    if (is_cicc(step) && !inputs.lines && word.ends_with(".ii")) {
      layout = split_line_layout(normalized, &inputs.whole_input_why);
    }
    if (layout) {
      key.tag("code").field(layout->code);
      inputs.lines_text = serialize_line_table(layout->table);
      inputs.lines = std::move(layout->table);
    } else {
      key.field(normalized);
    }
    inputs.given_files.insert(path);
  }
  return key.digest();
}

// Whether every file the entry read still has its content and every lookup still finds nothing.
bool inputs_hold(const StepEntry& entry, FileHasher& hasher)
{
  for (const auto& read : entry.reads) {
    auto now = hasher.fingerprint(read.path);
    if (!now.fingerprint || now.fingerprint->hash != read.hash) {
      log::info("step {}: {} changed", entry.key.short_hex(), read.path);
      return false;
    }
  }
  return std::none_of(entry.missing.begin(), entry.missing.end(),
                      [](const std::string& path) { return lstat_file(path).exists; });
}

// The entry as a hit writes it for this step's input: as stored where the input's code lines sit
// where they sat, else with its outputs' line numbers moved to where they sit now
// (cache/line_layout.hpp); nullopt (`why` says) where they cannot be moved, or the stored run
// printed something (a warning names a line).
std::optional<StepEntry> placed_for_input(StepEntry entry, const KeyedInputs& inputs,
                                          std::string& why)
{
  if (entry.input_lines == inputs.lines_text) {
    return entry;
  }
  auto stored = parse_line_table(entry.input_lines);
  if (!stored || !inputs.lines) {
    why = "the stored step's line table is damaged";
    return std::nullopt;
  }
  if (!entry.out.empty() || !entry.err.empty()) {
    why = "its input's lines moved, and the stored run printed something (which may name a line)";
    return std::nullopt;
  }
  for (auto& output : entry.outputs) {
    std::string reason;
    auto moved = move_lines(output.content, *stored, *inputs.lines, &reason);
    if (!moved) {
      why =
        fmt::format("its input's lines moved, and {} cannot follow them: {}", output.path, reason);
      return std::nullopt;
    }
    output.content = std::move(*moved);
  }
  entry.input_lines = inputs.lines_text;
  return entry;
}

[[noreturn]] void serve(const Step& step, const StepEntry& entry, const TraceSink& sink,
                        const Environment& env)
{
  std::string lines = process_lines(step);
  // The step ran no tool: its times say so ("served"), for the compile's per-pass split.
  lines += fmt::format("T {} {} {} served\n", ::getpid(), step.started_ns, monotonic_now_ns());
  for (const auto& read : entry.reads) {
    lines += fmt::format("R {} {}\n", ::getpid(), read.path);
  }
  for (const auto& path : entry.missing) {
    lines += fmt::format("M {} {}\n", ::getpid(), path);
  }
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& output : entry.outputs) {
    outputs.emplace_back(restore_temp_names(output.path, step.temp),
                         restore_temp_names(output.content, step.temp));
    lines += fmt::format("W {} {}\n", ::getpid(), outputs.back().first);
  }
  if (!sink.send(lines)) {
    exec_plainly(step, env);  // the record would miss what the step read: run it for real
  }
  for (const auto& [path, content] : outputs) {
    write_file_atomically(path, content);
  }
  write_fully(STDOUT_FILENO, restore_temp_names(entry.out, step.temp));
  write_fully(STDERR_FILENO, restore_temp_names(entry.err, step.temp));
  std::_Exit(0);
}

// What the tool's own trace says it read, looked up and wrote; nullopt when it read one of nvcc's
// temporary files it was not given (its output would depend on a file the key does not cover) or
// its trace is incomplete.
struct StepAccesses {
  std::set<std::string> reads;
  std::set<std::string> missing;
  std::vector<std::string> written;  // in order, once each
};

std::optional<StepAccesses> step_accesses(std::string_view trace, const Step& step,
                                          const std::set<std::string>& given_files)
{
  StepAccesses accesses;
  std::set<std::string> written;
  size_t at = 0;
  while (at < trace.size()) {
    size_t end = trace.find('\n', at);
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view line = trace.substr(at, end - at);
    at = end + 1;
    const size_t pid_end = line.find(' ', 2);
    if (line.size() < 2 || pid_end == std::string_view::npos) {
      return std::nullopt;
    }
    const char kind = line[0];
    const std::string path = lexically_normal(std::string(line.substr(pid_end + 1)));
    if (kind == 'L') {
      return std::nullopt;
    }
    if (kind == 'W' && written.insert(path).second) {
      accesses.written.push_back(path);
    } else if (kind == 'R' && !is_never_read(path)) {
      accesses.reads.insert(path);
    } else if (kind == 'M' && !is_never_read(path) && !has_stem(path, step.temp)) {
      accesses.missing.insert(path);
    }
  }
  for (auto read = accesses.reads.begin(); read != accesses.reads.end();) {
    if (written.contains(*read) || given_files.contains(*read)) {
      read = accesses.reads.erase(read);
    } else if (has_stem(*read, step.temp)) {
      log::info("step not stored: it read {}, a temporary file it was not given", *read);
      return std::nullopt;
    } else {
      ++read;
    }
  }
  return accesses;
}

// The entry for a run that exited 0, or nullopt when it may not be stored.
std::optional<StepEntry> entry_of_run(const Step& step, const StepAccesses& accesses,
                                      FileHasher& hasher, std::int64_t started_ns)
{
  StepEntry entry;
  entry.tool = step.tool_exe;
  entry.pass = step.pass;
  for (const auto& path : accesses.reads) {
    auto read = hasher.fingerprint(path);
    // A file written while the step ran may not be what the tool saw.
    if (!read.fingerprint || read.stat.mtime_ns >= started_ns || read.stat.ctime_ns >= started_ns) {
      log::info("step not stored: {} changed while it ran", path);
      return std::nullopt;
    }
    entry.reads.push_back({path, read.fingerprint->hash});
  }
  entry.missing.assign(accesses.missing.begin(), accesses.missing.end());
  for (const auto& path : accesses.written) {
    if (!lstat_file(path).is_regular) {
      continue;  // a scratch file the tool removed
    }
    auto content = try_read_file(path);
    if (!content || content->empty()) {
      log::info("step not stored: its output {} is empty or unreadable", path);
      return std::nullopt;
    }
    StepOutput output{normalize_temp_names(path, step.temp),
                      normalize_temp_names(*content, step.temp)};
    // A temporary name the words do not give (one derived from them) would be another run's.
    if (has_stem(output.path, step.temp) || has_stem(output.content, step.temp)) {
      log::info("step not stored: {} names a temporary file its command does not", path);
      return std::nullopt;
    }
    entry.outputs.push_back(std::move(output));
  }
  if (entry.outputs.empty()) {
    return std::nullopt;
  }
  return entry;
}

// A sampled hit's run compared with its entry byte for byte (outputs, stdout, stderr), counted and
// reported as the object cache's verify-on-hit is: cache_verified or cache_mismatch.
Outcome verified_outcome(CacheStore& store, const Digest& key, const StepEntry& stored,
                         const std::optional<StepEntry>& run)
{
  if (!run) {
    return {OutcomeKind::compiled, Cause::step_not_cached,
            "sampled for verification, but the run could not be compared (not storable)"};
  }
  const std::string difference = step_output_difference(stored, *run);
  store.count(key, difference.empty() ? CacheCounter::verified : CacheCounter::verify_mismatches);
  log::info("step {} sampled for verification: {}", key.short_hex(),
            difference.empty() ? "the same" : difference);
  if (difference.empty()) {
    return {OutcomeKind::compiled, Cause::cache_verified,
            fmt::format("the step entry {} was run again and is the same", key.short_hex())};
  }
  return {OutcomeKind::compiled, Cause::cache_mismatch,
          fmt::format("the tool's output differs from the step entry {}: {}", key.short_hex(),
                      difference)};
}

// The remote (NVFRESH_REMOTE), when one is set and the compile plan named the build tree's record
// root, whose "remote-failed" marker says once per build that the remote failed (as for objects).
void use_remote(ObjectCache& cache, const Config& config, const Environment& env)
{
  auto root = env.find(k_step_record_root_variable);
  if (root == env.end() || root->second.empty()) {
    return;
  }
  if (auto remote = remote_settings(config)) {
    cache.use_remote(std::move(*remote), root->second + "/remote-failed");
  }
}

// The step's command as its remote Action names it: the tool's file name and its arguments, nvcc's
// temporary names normalized (step_key.hpp).
std::vector<std::string> remote_arguments(const Step& step)
{
  std::vector<std::string> arguments{fs::path(step.tool).filename().string()};
  for (size_t i = 1; i < step.argv.size(); ++i) {
    arguments.push_back(normalize_temp_names(step.argv[i], step.temp));
  }
  return arguments;
}

void forward_trace(const TraceSink& sink, const Step& step, std::string_view trace)
{
  sink.send(process_lines(step));
  // Whole lines, in datagrams well below the socket's limit; an X line with its I line together.
  constexpr size_t k_chunk = size_t{32} * 1024;
  size_t at = 0;
  while (at < trace.size()) {
    size_t end = std::min(trace.size(), at + k_chunk);
    if (end < trace.size()) {
      const size_t newline = trace.rfind('\n', end - 1);
      end = newline == std::string_view::npos || newline < at ? trace.size() : newline + 1;
      while (end < trace.size() && trace.substr(end).starts_with("I ")) {
        end = trace.find('\n', end) + 1;
      }
    }
    sink.send(trace.substr(at, end - at));
    at = end;
  }
}

std::string temp_capture(const std::string& stem, const char* which)
{
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/nvfresh-step-{}-{}-{}", tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp",
                     ::getpid(), stem, which);
}

[[noreturn]] void run_and_store(const Step& step, const Environment& env, ObjectCache& cache,
                                const Digest& key, FileHasher& hasher, const KeyedInputs& inputs,
                                const TraceSink& sink, const StepReport& report, const Outcome& why,
                                const std::optional<StepEntry>& verifying)
{
  CacheStore& store = cache.store();
  TraceListener listener;
  Environment child_env = env;
  child_env.erase(k_step_runner_variable);
  child_env.erase(std::string(k_trace_file_variable));
  child_env[k_trace_socket_variable] = listener.address();
  const std::string out_path = temp_capture(step.temp.stem, "out");
  const std::string err_path = temp_capture(step.temp.stem, "err");
  const std::int64_t started_ns = coarse_now_ns();
  const auto started = std::chrono::steady_clock::now();
  const ProcessResult result = run_program_as(step.tool, step.argv, child_env, out_path, err_path);
  const std::int64_t run_ns =
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
      .count();
  const std::string trace = listener.finish();
  const std::string out = try_read_file(out_path).value_or("");
  const std::string err = try_read_file(err_path).value_or("");
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  forward_trace(sink, step, trace);
  write_fully(STDOUT_FILENO, out);
  write_fully(STDERR_FILENO, err);
  if (!result.succeeded()) {
    report.add(step,
               {OutcomeKind::failed,
                result.term_signal != 0 ? Cause::nvcc_signal : Cause::nvcc_exit_status,
                fmt::format("{} exited with status {}", fs::path(step.tool).filename().string(),
                            result.exit_code)},
               run_ns);
  } else if (!verifying) {
    report.add(step, why, run_ns);
  }
  if (result.succeeded()) {
    try {
      auto accesses = step_accesses(trace, step, inputs.given_files);
      auto entry = accesses ? entry_of_run(step, *accesses, hasher, started_ns) : std::nullopt;
      if (entry) {
        entry->run_ns = run_ns;
        entry->input_lines = inputs.lines_text;
        entry->out = normalize_temp_names(out, step.temp);
        entry->err = normalize_temp_names(err, step.temp);
        if (has_stem(entry->out, step.temp) || has_stem(entry->err, step.temp)) {
          entry.reset();
        }
      }
      if (verifying) {
        report.add(step, verified_outcome(store, key, *verifying, entry), run_ns);
      }
      // A mismatch replaces the entry: a later hit serves what the tool gives.
      if (entry && store.has_room() &&
          (!verifying || !step_output_difference(*verifying, *entry).empty())) {
        store.write_step(key, *entry);
        cache.upload_step(key, remote_arguments(step), *entry);
      }
    } catch (const std::exception& error) {
      log::info("step {} not stored: {}", key.short_hex(), error.what());
    }
  }
  exit_like(result);
}

}  // namespace

int run_step(const std::vector<std::string>& args, const Environment& runner_env)
{
  const Environment env = tool_environment(runner_env);
  if (args.size() < 2) {
    std::fputs("nvfresh: __step is nvfresh's own (the step cache's runner)\n", stderr);
    return 2;
  }
  Step step;
  step.started_ns = monotonic_now_ns();
  step.tool = args[0];
  step.argv.assign(args.begin() + 1, args.end());
  step.pass = pass_of(step.argv);
  const StepReport report(env);
  const Config config = [&] {
    try {
      return load_config(env);
    } catch (const std::exception&) {
      exec_plainly(step, env);
    }
  }();
  log::set_file(config.log_file);
  const CacheSettings settings = cache_settings(config, env);
  if (!settings.enabled || is_false(config.step_cache) || !step_refusal(step.argv).empty() ||
      !is_cached_step_tool(step.tool)) {
    log::info("step {} runs plainly: {}", step.tool, step_refusal(step.argv));
    if (const std::string refusal = step_refusal(step.argv);
        !refusal.empty() && is_cached_step_tool(step.tool)) {
      report.add(step, {OutcomeKind::passthrough, Cause::unsupported_option, refusal}, 0);
    }
    exec_plainly(step, env);
  }
  const TraceSink sink(env);
  std::optional<Digest> key;
  std::optional<ObjectCache> cache;
  KeyedInputs inputs;
  Outcome why{OutcomeKind::compiled, Cause::step_not_cached, ""};
  std::optional<StepEntry> verifying;
  FileHasher hasher({}, FileHasher::k_default_settle_ns, shared_hash_cache_file(settings.dir));
  try {
    step.temp = find_temp_names(step.argv);
    step.cwd = current_directory();
    step.tool_exe = fs::canonical(absolute_path(step.tool, step.cwd)).string();
    cache.emplace(settings);
    if (!cache->store().refusal().empty()) {
      exec_plainly(step, env);
    }
    use_remote(*cache, config, env);
    key = step_key(step, hasher, inputs);
    if (!key) {
      exec_plainly(step, env);
    }
    std::string why_missed;
    auto entry = cache->store().read_step(*key, &why_missed);
    bool holds = entry && inputs_hold(*entry, hasher);
    const bool input_changed = entry && !holds;
    std::string from;
    if (!holds) {  // a local miss asks the remote, whose entry is judged like a local one
      if (auto fetched = cache->fetch_remote_step(*key, remote_arguments(step))) {
        if (inputs_hold(*fetched, hasher)) {
          entry = std::move(fetched);
          holds = true;
          from = ", from the remote";
        } else {
          log::info("step {}: the remote's entry does not hold: an input changed",
                    key->short_hex());
        }
      }
    }
    const bool moved = holds && entry->input_lines != inputs.lines_text;
    if (holds) {
      entry = placed_for_input(std::move(*entry), inputs, why_missed);
      holds = entry.has_value();
      from += moved ? ", its lines moved" : "";
    }
    if (holds && settings.verify_fraction > 0 && random_draw() < settings.verify_fraction) {
      log::info("step {} {} runs: hit {} sampled for verification", step.pass,
                fs::path(step.tool).filename().string(), key->short_hex());
      verifying = std::move(entry);
    } else if (holds) {
      cache->store().count(
        *key, {{CacheCounter::step_hits, 1}, {CacheCounter::step_saved_ns, entry->run_ns}});
      cache->store().touch_step(*key);
      log::info("step {} {} served ({}{})", step.pass, fs::path(step.tool).filename().string(),
                key->short_hex(), from);
      report.add(step, {OutcomeKind::served, Cause::cache_hit, "entry " + key->short_hex() + from},
                 entry->run_ns);
      serve(step, *entry, sink, env);
    } else {
      if (!inputs.whole_input_why.empty()) {
        why_missed +=
          fmt::format(" (keyed on its input with its line numbers: {})", inputs.whole_input_why);
      }
      log::info("step {} {} runs: {}", step.pass, fs::path(step.tool).filename().string(),
                input_changed ? "an input changed" : why_missed);
      why = input_changed ? Outcome{OutcomeKind::compiled, Cause::input_changed,
                                    "a file the stored step read changed"}
                          : Outcome{OutcomeKind::compiled, Cause::step_not_cached, why_missed};
    }
    cache->store().count(*key, CacheCounter::step_misses);
  } catch (const std::exception& error) {
    log::info("step {} runs plainly: {}", step.tool, error.what());
    exec_plainly(step, env);
  }
  try {
    run_and_store(step, env, *cache, *key, hasher, inputs, sink, report, why, verifying);
  } catch (const std::exception& error) {  // thrown only before the tool started
    log::info("step {} runs plainly: {}", step.tool, error.what());
    exec_plainly(step, env);
  }
}

}  // namespace nvfresh

#include "compile/recording.hpp"

#include "compile/build_depfile.hpp"
#include "freshness/file_hasher.hpp"
#include "freshness/input_check.hpp"
#include "freshness/race_rule.hpp"
#include "record/pass_times.hpp"
#include "record/record_root.hpp"

#include "digest/object_digest.hpp"
#include "digest/timestamp_text.hpp"
#include "nvcc/nvcc_version.hpp"
#include "record/signature.hpp"
#include "trace/trace.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

// A trace can be trusted only when it saw the compiler proper run for the source's language: with
// a launcher that answered from its cache (ccache hit) nvcc's passes never ran and the trace lists
// only its lookups. CUDA (and PTX) sources: cicc or ptxas. Host sources compiled by nvcc (.cpp,
// .c, .ii): cc1plus or cc1, whose reads are every header (a cache's preprocessor run included).
struct CompilePrograms {
  std::string_view language;
  std::array<std::string_view, 2> programs;
};
constexpr CompilePrograms k_compile_programs[] = {
  {"c", {"cc1", "cc1plus"}},
  {"c++", {"cc1", "cc1plus"}},
  {"i", {"cc1", "cc1plus"}},
  {"ii", {"cc1", "cc1plus"}},
  {"cubin", {"fatbinary", "fatbinary"}},
  {"fatbin", {"fatbinary", "fatbinary"}},
};
constexpr std::array<std::string_view, 2> k_device_compile_programs = {"cicc", "ptxas"};

const std::array<std::string_view, 2>& compile_programs_for(const std::string& language)
{
  for (const auto& entry : k_compile_programs) {
    if (entry.language == language) {
      return entry.programs;
    }
  }
  return k_device_compile_programs;  // cu, gpu, ptx, and whatever nvcc treats as CUDA
}

struct Candidate {
  InputRole role = InputRole::header;
  std::set<std::string> passes;
};

using Candidates = std::map<std::string, Candidate>;

bool saw_compile(const TracedInputs& traced, const std::string& language)
{
  const auto& programs = compile_programs_for(language);
  return std::any_of(traced.executables.begin(), traced.executables.end(), [&](const auto& exe) {
    const std::string name = fs::path(exe).filename().string();
    return std::find(programs.begin(), programs.end(), name) != programs.end();
  });
}

// The traced inputs, and whether the trace is complete; nullopt when the trace saw no compile (a
// launcher answered from its cache, or nothing was traced at all).
struct TraceSummary {
  TracedInputs inputs;
  bool complete = true;
  std::vector<PassTime> pass_times;
};

std::optional<TraceSummary> traced_inputs(const FinishedCompile& in)
{
  Trace trace = restrict_to_subtree(parse_trace(in.trace_text), in.plan.compiler_path);
  TraceSummary summary{summarize_trace(trace), trace.complete, pass_times_of(trace)};
  if (saw_compile(summary.inputs, in.request.language)) {
    return summary;
  }
  log::info("the trace saw no compiler pass (a launcher answered from its cache?)");
  return std::nullopt;
}

void add_traced(Candidates& candidates, const TracedInputs& traced)
{
  for (const auto& [path, passes] : traced.files_read) {
    candidates[path].passes.insert(passes.begin(), passes.end());
  }
  for (const auto& path : traced.read_as_data) {
    candidates[path].role = InputRole::data;
  }
  for (const auto& exe : traced.executables) {
    candidates[exe].role = InputRole::tool;
  }
}

void add_command_line_inputs(Candidates& candidates, const FinishedCompile& in,
                             const std::optional<Depfile>& nvcc_depfile)
{
  const auto& cwd = in.plan.working_dir;
  if (nvcc_depfile) {
    for (const auto& dep : nvcc_depfile->prerequisites) {
      candidates[absolute_path(dep, cwd)];
    }
  }
  for (const auto& file : in.request.options_files) {
    candidates[absolute_path(file, cwd)].role = InputRole::options_file;
  }
  candidates[in.plan.compiler_path].role = InputRole::tool;
  candidates[in.plan.source].role = InputRole::source;
  // The host compiler (-ccbin, else NVCC_CCBIN) when it is a script: the trace names only its
  // interpreter as a program (/proc/self/exe) and sees the script itself read like a header. It is
  // a tool all the same; a binary host compiler is already a traced program.
  std::string host = in.request.host_compiler;
  if (auto ccbin = in.plan.child_env.find("NVCC_CCBIN");
      host.empty() && ccbin != in.plan.child_env.end()) {
    host = ccbin->second;
  }
  if (auto script = candidates.find(absolute_path(host, cwd));
      !host.empty() && script != candidates.end()) {
    script->second.role = InputRole::tool;
  }
}

std::string race_reason(const std::string& path, const FileStat& stat, std::int64_t start_ns)
{
  return fmt::format("{} changed while the object compiled (ctime {} >= start {}, mtime {})", path,
                     stat.ctime_ns, start_ns, stat.mtime_ns);
}

// Why the record cannot vouch for its object, the first reason found (the record keeps its text).
struct Distrust {
  Cause cause = Cause::none;
  void note(Record& record, Cause why, std::string reason)
  {
    if (record.trusted) {
      record.trusted = false;
      record.untrusted_reason = std::move(reason);
      cause = why;
    }
  }
};

void fingerprint_inputs(const Candidates& candidates, Record& record, FileHasher& hasher,
                        Distrust& distrust)
{
  for (const auto& [path, candidate] : candidates) {
    FingerprintResult result = hasher.fingerprint(path);
    if (!result.fingerprint) {
      if (result.stat.exists && !result.stat.is_regular) {
        continue;  // a directory or device that the trace saw: not content
      }
      distrust.note(record, Cause::input_changed_during_compile,
                    fmt::format("{} could not be read after the compile", path));
      continue;
    }
    const FileStat& stat = result.stat;
    if (changed_since(stat, record.start_ns)) {
      distrust.note(record, Cause::input_changed_during_compile,
                    race_reason(path, stat, record.start_ns));
    }
    RecordedInput input;
    input.file = *result.fingerprint;
    input.role = candidate.role;
    input.passes.assign(candidate.passes.begin(), candidate.passes.end());
    record.inputs.push_back(std::move(input));
  }
}

const RecordedInput* find_input(const Record& record, const std::string& path)
{
  for (const auto& input : record.inputs) {
    if (input.file.path == path) {
      return &input;
    }
  }
  return nullptr;
}

std::string nvcc_version_text(const FinishedCompile& in, const Record& record)
{
  const std::string& canonical = in.plan.compiler_path;
  if (in.previous && !in.previous->nvcc_version.empty()) {
    const RecordedInput* before = find_input(*in.previous, canonical);
    const RecordedInput* now = find_input(record, canonical);
    if (before != nullptr && now != nullptr && before->file.hash == now->file.hash) {
      return in.previous->nvcc_version;
    }
  }
  Environment env = in.plan.child_env;
  env.erase("LD_PRELOAD");
  // As the build invoked it: a symlink to ccache named nvcc answers as nvcc only under that name.
  return query_nvcc_version(in.chain.compiler, env);
}

void fingerprint_output(Record& record, FileHasher& hasher)
{
  FingerprintResult result = hasher.fingerprint(record.object);
  if (!result.fingerprint) {
    throw OutcomeError(Cause::output_unreadable,
                       fmt::format("nvcc succeeded but {} cannot be read", record.object));
  }
  record.output = *result.fingerprint;
}

void digest_output(Record& record)
{
  try {
    for (const auto& component : digest_artifact(record.object).components) {
      record.components[component.key] = component.digest;
    }
  } catch (const std::exception& error) {
    log::info("no component digests for {}: {}", record.object, error.what());
  }
}

void append_history(Record& record, const std::optional<Record>& previous, const Outcome& why)
{
  if (previous) {
    record.history = previous->history;
  }
  std::string ran = why.detail.empty() ? std::string("nvcc ran") : "nvcc ran: " + why.detail;
  add_history(
    record, {record.end_ns,
             std::string(outcome_name(record.trusted ? OutcomeKind::compiled : OutcomeKind::raced)),
             record.trusted ? ran : record.untrusted_reason});
}

std::optional<Depfile> read_nvcc_depfile(const CompilePlan& plan)
{
  if (plan.depfile_path.empty()) {
    return std::nullopt;
  }
  auto text = try_read_file(plan.depfile_path);
  std::string error;
  auto depfile = text ? parse_depfile(*text, &error, DepfileDialect::k_nvcc) : std::nullopt;
  if (text && !depfile) {
    log::info("cannot parse nvcc's depfile {}: {}", plan.depfile_path, error);
  }
  return depfile;
}

void set_console(Record& record, const CapturedOutput& captured, const Environment& env)
{
  if (!captured.captured || captured.overflow) {
    record.console_mode = "none";
    return;
  }
  record.console_mode = captured.combined ? "combined" : "separate";
  record.console_out = captured.out;
  record.console_err = captured.err;
  record.console_terminals = captured.terminals;
  if (!captured.terminals.empty()) {
    record.console_terminal_env = terminal_environment(env);
  }
}

// An untrusted record's object is made older than the compile's start, so that make and ninja (any
// version) rebuild it on the next run.
void apply_race_guard(Record& record)
{
  if (record.trusted) {
    return;
  }
  set_mtime_ns(record.object, record.start_ns - k_one_second_ns);
  FileStat after = stat_file(record.object);
  record.output.mtime_ns = after.mtime_ns;
  record.output.ctime_ns = after.ctime_ns;
}

// mtime_dependence_of's bounds: headers are far smaller; a NUL this early means a binary
// (libdevice's bitcode, a shared library), whose bytes no preprocessor reads.
constexpr std::uint64_t k_max_searched_bytes = std::uint64_t{16} << 20;
constexpr size_t k_binary_probe_bytes = 4096;
constexpr size_t k_mtime_reasons_named = 3;
constexpr size_t k_max_searched_object_bytes = size_t{1} << 30U;

constexpr InputRole k_searched_roles[] = {InputRole::source, InputRole::header,
                                          InputRole::options_file};

bool is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\\' || c == '\n' || c == '\r';
}

// Whether the line that ends at text[newline] goes on in the next one (a backslash, maybe before
// a CR).
bool spliced(std::string_view text, size_t newline)
{
  const size_t before = newline > 0 && text[newline - 1] == '\r' ? newline - 1 : newline;
  return before > 0 && text[before - 1] == '\\';
}

// The logical line around `at`: physical lines joined where one ends in a backslash.
std::string_view logical_line(std::string_view text, size_t at)
{
  size_t begin = text.rfind('\n', at);
  while (begin != std::string_view::npos && spliced(text, begin)) {
    begin = begin > 0 ? text.rfind('\n', begin - 1) : std::string_view::npos;
  }
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t end = text.find('\n', at);
  while (end != std::string_view::npos && spliced(text, end)) {
    end = text.find('\n', end + 1);
  }
  return text.substr(begin, (end == std::string_view::npos ? text.size() : end) - begin);
}

bool is_pragma_directive(std::string_view line)
{
  const size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#' &&
         line.find("pragma") != std::string_view::npos;
}

// Whether "GCC" comes right before line[at], blanks and line splices between: the pragma's words
// as a macro's argument (DEPENDS_ON(GCC dependency "f"), the macro spelling _Pragma elsewhere).
bool gcc_before(std::string_view line, size_t at)
{
  while (at > 0 && is_blank(line[at - 1])) {
    --at;
  }
  return at >= 3 && line.substr(at - 3, 3) == "GCC";
}

bool has_dependency_pragma(std::string_view text)
{
  constexpr std::string_view k_word = "dependency";
  for (size_t at = text.find(k_word); at != std::string_view::npos;
       at = text.find(k_word, at + k_word.size())) {
    const std::string_view line = logical_line(text, at);
    const size_t in_line = static_cast<size_t>(text.data() + at - line.data());
    if (line.find("_Pragma") != std::string_view::npos || is_pragma_directive(line) ||
        gcc_before(line, in_line)) {
      return true;
    }
  }
  return false;
}

// Where `found` names the places mtime_dependence found something: the first few, then a count.
std::string joined_mtime_reasons(const std::vector<std::string>& found)
{
  std::string text;
  for (size_t i = 0; i < found.size() && i < k_mtime_reasons_named; ++i) {
    text += (i == 0 ? "" : "; ") + found[i];
  }
  if (found.size() > k_mtime_reasons_named) {
    text += fmt::format("; and {} more", found.size() - k_mtime_reasons_named);
  }
  return text;
}

// What mtime_dependence finds in the file at `path`; "" for a binary or unreadable one.
std::string_view file_mtime_dependence(const std::string& path)
{
  const auto text = try_read_file_prefix(path, k_max_searched_bytes);
  if (!text || std::string_view(*text).substr(0, k_binary_probe_bytes).find('\0') !=
                 std::string_view::npos) {
    return {};
  }
  return mtime_dependence(*text);
}

// The object's host bytes searched for each source's and header's mtime as __TIMESTAMP__ spells
// it (digest/timestamp_text.hpp): what a spelling made by token pasting leaves. "" when none is
// there (a timestamp only in compressed device code is not seen).
std::string timestamp_in_object(const Record& record)
{
  std::unordered_set<std::string> texts;
  std::map<std::string, std::string> named;  // text -> the first input with that mtime
  for (const auto& input : record.inputs) {
    if (input.role == InputRole::source || input.role == InputRole::header) {
      std::string text = timestamp_text(input.file.mtime_ns);
      named.emplace(text, input.file.path);
      texts.insert(std::move(text));
    }
  }
  const auto object = try_read_file(record.object, k_max_searched_object_bytes);
  const std::string_view found = object ? find_timestamp_text(*object, texts) : std::string_view();
  if (found.empty()) {
    return {};
  }
  return fmt::format("the object holds the mtime of {} as __TIMESTAMP__ spells it ({})",
                     named.at(std::string(found)), found);
}

Record make_record(const FinishedCompile& in, const std::optional<Depfile>& nvcc_depfile,
                   FileHasher& hasher, Distrust& distrust)
{
  Record record = record_of_command(in.request, in.chain, in.plan);
  record.start_ns = in.run.start_ns;
  record.end_ns = in.run.end_ns;
  Candidates candidates;
  auto traced = traced_inputs(in);
  record.inputs_from_trace = traced.has_value();
  if (traced) {
    add_traced(candidates, traced->inputs);
    record.pass_times = std::move(traced->pass_times);
    record.probes = group_probes({traced->inputs.missing.begin(), traced->inputs.missing.end()});
    if (!traced->complete) {
      distrust.note(record, Cause::trace_incomplete,
                    "the tracer lost events (a path it cannot write, or a line it could not "
                    "deliver): not every input is known");
    }
  }
  add_command_line_inputs(candidates, in, nvcc_depfile);
  fingerprint_inputs(candidates, record, hasher, distrust);
  record.probe_dirs = stamp_probe_directories(record.probes, record.start_ns);
  record.mtime_dependent = mtime_dependence_of(record);
  fingerprint_output(record, hasher);
  digest_output(record);
  record.nvcc_version = nvcc_version_text(in, record);
  append_history(record, in.previous, in.run.why);
  return record;
}

}  // namespace

Record record_of_command(const CompileRequest& request, const CompilerChain& chain,
                         const CompilePlan& plan)
{
  Record record;
  record.object = plan.object;
  record.source = plan.source;
  record.working_dir = plan.working_dir;
  record.compiler = chain.compiler;
  record.launcher_prefix = chain.prefix;
  record.signature_args = request.signature_args;
  record.env = plan.signature_env;
  record.signature = plan.signature;
  record.depfile_path = plan.depfile_path;
  record.depfile_target = plan.depfile_target;
  record.depfile_phony = request.depfile.phony_targets;
  return record;
}

std::string_view mtime_dependence(std::string_view text)
{
  if (text.find("__TIMESTAMP__") != std::string_view::npos) {
    return "uses __TIMESTAMP__";
  }
  // The time of the compile itself: a compile now gives another object, as one after a touch.
  if (text.find("__TIME__") != std::string_view::npos) {
    return "uses __TIME__";
  }
  if (text.find("__DATE__") != std::string_view::npos) {
    return "uses __DATE__";
  }
  if (has_dependency_pragma(text)) {
    return "has a GCC dependency pragma";
  }
  return {};
}

std::string mtime_dependence_of(const Record& record)
{
  std::vector<std::string> found;
  for (const auto& arg : record.signature_args) {
    if (std::string_view why = mtime_dependence(arg); !why.empty()) {
      found.push_back(fmt::format("the argument {} {}", arg, why));
    }
  }
  for (const auto& [name, value] : record.env) {
    if (std::string_view why = mtime_dependence(value); !why.empty()) {
      found.push_back(fmt::format("{} {}", name, why));
    }
  }
  for (const auto& input : record.inputs) {
    if (std::find(std::begin(k_searched_roles), std::end(k_searched_roles), input.role) ==
        std::end(k_searched_roles)) {
      continue;
    }
    if (std::string_view why = file_mtime_dependence(input.file.path); !why.empty()) {
      found.push_back(fmt::format("{} {}", input.file.path, why));
    }
  }
  if (found.empty()) {
    if (std::string held = timestamp_in_object(record); !held.empty()) {
      found.push_back(std::move(held));
    }
  }
  return joined_mtime_reasons(found);
}

Outcome record_compile(const FinishedCompile& compile, Record* recorded)
{
  const CompilePlan& plan = compile.plan;
  auto nvcc_depfile = read_nvcc_depfile(plan);
  FileHasher hasher(plan.hash_cache, FileHasher::k_default_settle_ns, plan.shared_hash_cache);
  Distrust distrust;
  Record record = make_record(compile, nvcc_depfile, hasher, distrust);
  set_console(record, compile.captured, plan.child_env);
  apply_race_guard(record);
  if (!plan.depfile_path.empty()) {
    record.depfile_prerequisites = depfile_prerequisites(record, plan.working_dir, nvcc_depfile);
  }
  save_record(plan.record_file, record);
  if (!record.depfile_prerequisites.empty()) {
    write_build_depfile(plan.depfile_path, plan.depfile_target, record.depfile_prerequisites,
                        compile.request.depfile.phony_targets);
  }
  log::info("recorded {} ({} inputs, {} probes, {})", plan.object, record.inputs.size(),
            probe_count(record.probes), record.trusted ? "trusted" : record.untrusted_reason);
  if (recorded != nullptr) {
    *recorded = record;
  }
  if (!record.trusted) {
    return {OutcomeKind::raced, distrust.cause, record.untrusted_reason};
  }
  return {OutcomeKind::compiled, compile.run.why.cause, compile.run.why.detail};
}

}  // namespace nvfresh

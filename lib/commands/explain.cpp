// nvfresh explain <object or source> [-C build-dir] [--all] [--json]: one object's record compared
// with the disk: every reason it is stale, the inputs that changed (all inputs and arguments with
// --all), the probes that now find a file, the toolchain recorded vs now, where the last compile's
// time went (per pass and arch), the history of its last builds (compiled, skipped, raced,
// marked-stale, with reasons), per arch which steps of its last nvcc run the step cache served and
// which ran (and the nvcc time saved), and the artifacts that contain it.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "proof/linked_artifacts.hpp"
#include "proof/tree_status.hpp"
#include "record/pass_times.hpp"
#include "record/record_root.hpp"
#include "record/step_events.hpp"
#include "report/build_report.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/time_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

// The object or source named `wanted`: by path, by file name, or (a record too damaged to name
// its object) by the record file that path would have.
bool matches(const ObjectStatus& status, const std::string& wanted, const std::string& record_root)
{
  std::string absolute = absolute_path(wanted, current_directory());
  std::string canonical = canonical_object_path(wanted, current_directory());
  if (status.record_file == record_file_for(record_root, canonical)) {
    return true;
  }
  for (const auto& candidate : {status.object, status.source}) {
    if (candidate == absolute || candidate == canonical ||
        (wanted.find('/') == std::string::npos && fs::path(candidate).filename() == wanted)) {
      return true;
    }
  }
  return false;
}

void print_inputs(const Record& record, FileHasher& hasher, bool all)
{
  size_t changed = 0;
  for (const auto& input : record.inputs) {
    bool same = hasher.unchanged(input.file);
    changed += same ? 0 : 1;
    if (all || !same) {
      std::string passes =
        input.passes.empty() ? "-" : fmt::format("{}", fmt::join(input.passes, ","));
      fmt::print("  {:<9} {:<12} {:<24} {}\n", same ? "unchanged" : "CHANGED",
                 role_name(input.role), passes, input.file.path);
    }
  }
  fmt::print("inputs: {} recorded, {} changed{}\n", record.inputs.size(), changed,
             all ? "" : " (--all lists every input)");
}

// The toolchain as recorded. Nothing named in a record is run (a record is data): a replaced nvcc
// or tool shows up as a changed tool input above.
void print_toolchain(const Record& record)
{
  fmt::print("compiler  {} ({})\n", record.compiler, record.nvcc_version);
  size_t tools = std::count_if(record.inputs.begin(), record.inputs.end(),
                               [](const RecordedInput& i) { return i.role == InputRole::tool; });
  fmt::print(
    "  {} tool binaries recorded (nvcc, cicc, ptxas, host compiler, ...); a replaced one is "
    "listed above as 'tool ... changed'\n",
    tools);
}

void print_artifacts(const ObjectStatus& status, const ProvenTree& tree)
{
  auto edges = tree.graph.containing(status.object);
  fmt::print("artifacts {} containing it{}\n", edges.size(),
             tree.graph.generator.empty() ? " (no build graph or link record found)" : "");
  for (const auto* edge : edges) {
    const ArtifactStatus* artifact = tree.artifacts.find(edge->artifact);
    bool fresh = artifact == nullptr || artifact->fresh();
    fmt::print("  {:<15} {} ({}; proof: {})\n", artifact_kind_name(edge->kind), edge->artifact,
               fresh ? "linked after this version" : "RELINK PENDING",
               artifact ? artifact->proof : "none");
  }
}

double seconds(std::int64_t ns)
{
  return static_cast<double>(ns) / 1e9;
}

// "1.23 s", "served" (every run of it served by the step cache), "1.23 s + 2 served".
std::string row_time(const PassSplitRow& row)
{
  if (row.runs == 0) {
    return row.served == 1 ? "served" : fmt::format("served ({} steps)", row.served);
  }
  std::string text = fmt::format("{:.2f} s", seconds(row.ns));
  if (row.served > 0) {
    text += fmt::format(" + {} served", row.served);
  }
  return text;
}

// Where the last compile's time went: host, each arch, the link steps.
void print_pass_split(const Record& record)
{
  if (record.pass_times.empty()) {
    fmt::print("passes    no per-pass times recorded (not traced, or compiled by an older "
               "nvfresh: the next compile records them)\n");
    return;
  }
  const PassSplit split = split_pass_times(record.pass_times);
  fmt::print("passes    where the last compile's {:.2f} s went (nvcc ran {:.2f} s; wall time of "
             "each kind of program, overlaps counted once):\n",
             seconds(record.end_ns - record.start_ns), seconds(split.nvcc_ns));
  for (const auto& row : split.rows) {
    fmt::print("  {:<9} {:<14} {}\n", row.part, row.kind, row_time(row));
  }
}

nlohmann::json pass_split_json(const Record& record)
{
  const PassSplit split = split_pass_times(record.pass_times);
  nlohmann::json rows = pass_split_rows_json(split);
  nlohmann::json programs = nlohmann::json::array();
  for (const auto& time : record.pass_times) {
    programs.push_back({{"kind", time.kind},
                        {"pass", time.pass},
                        {"start_ns", time.start_ns},
                        {"end_ns", time.end_ns},
                        {"served", time.served}});
  }
  return {{"nvcc_seconds", seconds(split.nvcc_ns)}, {"split", rows}, {"programs", programs}};
}

// The steps of the object's last nvcc run that the step cache stood in front of: how many it
// served and how much nvcc time that saved.
struct LastRunSteps {
  std::vector<StepEvent> steps;
  size_t served = 0;
  std::int64_t saved_ns = 0;
};

LastRunSteps last_run_steps_of(const Record& record, const std::vector<StepEvent>& events)
{
  LastRunSteps last{last_run_steps(events, record.object)};
  for (const auto& step : last.steps) {
    if (step.outcome.kind == OutcomeKind::served) {
      ++last.served;
      last.saved_ns += step.duration_ns;
    }
  }
  return last;
}

// Per arch, which steps of the object's last nvcc run were served and which ran.
void print_steps(const Record& record, const std::vector<StepEvent>& events)
{
  const LastRunSteps last = last_run_steps_of(record, events);
  if (last.steps.empty()) {
    fmt::print("steps     none through the step cache in the steps log\n");
    return;
  }
  fmt::print("steps     of its last nvcc run ({}): {} served, {} ran; nvcc time saved {:.1f} s\n",
             format_local_time(last.steps.back().time_ns, true), last.served,
             last.steps.size() - last.served, seconds(last.saved_ns));
  for (const auto& step : last.steps) {
    fmt::print("  arch {:<6} {:<6} {:<12} {:>6.1f} s {}  {}{}{}\n", arch_of_pass(step.pass),
               step.tool, outcome_name(step.outcome.kind), seconds(step.duration_ns),
               step.outcome.kind == OutcomeKind::served ? "saved" : "ran  ",
               cause_name(step.outcome.cause), step.outcome.detail.empty() ? "" : ": ",
               step.outcome.detail);
  }
}

// The same as JSON: {"served", "ran", "saved_seconds", "time_ns", "steps": [{"arch", "pass",
// "tool", "outcome", "cause", "detail", "seconds"}]}; the counts 0 and no steps when none.
nlohmann::json steps_json(const Record& record, const std::vector<StepEvent>& events)
{
  const LastRunSteps last = last_run_steps_of(record, events);
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& step : last.steps) {
    steps.push_back({{"arch", arch_of_pass(step.pass)},
                     {"pass", step.pass},
                     {"tool", step.tool},
                     {"outcome", outcome_name(step.outcome.kind)},
                     {"cause", cause_name(step.outcome.cause)},
                     {"detail", step.outcome.detail},
                     {"seconds", seconds(step.duration_ns)}});
  }
  return {{"served", last.served},
          {"ran", last.steps.size() - last.served},
          {"saved_seconds", seconds(last.saved_ns)},
          {"time_ns", last.steps.empty() ? 0 : last.steps.back().time_ns},
          {"steps", steps}};
}

nlohmann::json record_json(const ObjectStatus& status, const std::vector<StepEvent>& events)
{
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& reason : status.verdict.reasons) {
    reasons.push_back(reason.describe());
  }
  nlohmann::json out = {{"object", status.object},
                        {"record", status.record_file},
                        {"fresh", status.verdict.fresh()},
                        {"reasons", reasons}};
  if (status.record) {
    const Record& record = *status.record;
    out["source"] = record.source;
    out["built_ns"] = record.end_ns;
    out["wall_seconds"] = seconds(record.end_ns - record.start_ns);
    out["passes"] = pass_split_json(record);
    out["steps"] = steps_json(record, events);
  }
  return out;
}

// An object nvfresh has no usable record of: which record, and what the next build does.
void print_unusable_record(const ObjectStatus& status)
{
  fmt::print("object    {}\nverdict   STALE\n",
             status.object.empty() ? "(unknown)" : status.object);
  for (const auto& reason : status.verdict.reasons) {
    fmt::print("  - {}\n", reason.describe());
  }
  fmt::print("record    {}: the next build compiles the object again and writes a new one\n",
             status.record_file);
}

void print_record(const ObjectStatus& status, bool all)
{
  const Record& record = *status.record;
  fmt::print("object    {}\nsource    {}\n", record.object, record.source);
  fmt::print("verdict   {}\n", status.verdict.fresh() ? "fresh" : "STALE");
  for (const auto& reason : status.verdict.reasons) {
    fmt::print("  - {}\n", reason.describe());
  }
  print_toolchain(record);
  fmt::print("built     {} in {:.1f} s; inputs from {}; {}\n",
             format_local_time(record.end_ns, true),
             static_cast<double>(record.end_ns - record.start_ns) / 1e9,
             record.inputs_from_trace ? "every pass (traced)" : "nvcc's depfile only",
             record.trusted ? "trusted" : "NOT trusted: " + record.untrusted_reason);
  if (!record.mtime_dependent.empty()) {
    fmt::print("mtimes    the output depends on its inputs' mtimes ({}): a touch recompiles it, "
               "and the cache does not keep it\n",
               record.mtime_dependent);
  }
  print_pass_split(record);
  fmt::print("signature {} ({} arguments, {} environment variables); the next compile compares its "
             "command line with it, an environment difference is listed above\n",
             record.signature.short_hex(), record.signature_args.size(), record.env.size());
  for (const auto& arg : record.signature_args) {
    if (all) {
      fmt::print("  arg {}\n", arg);
    }
  }
  for (const auto& [name, value] : record.env) {
    fmt::print("  env {}={}\n", name, value);
  }
  fmt::print("output    {} bytes, {}; normalized digests (compare across builds with "
             "'nvfresh compare'):\n",
             record.output.size, record.output.hash.short_hex());
  for (const auto& [component, digest] : record.components) {
    fmt::print("  {:<22} {}\n", component, digest.to_hex());
  }
  FileHasher hasher;
  print_inputs(record, hasher, all);
  fmt::print("probes: {} lookups that found nothing are watched\n", probe_count(record.probes));
  fmt::print("history (last {} builds: compiled, skipped, raced, marked-stale):\n",
             record.history.size());
  for (const auto& entry : record.history) {
    fmt::print("  {}  {:<13} {}\n", format_local_time(entry.time_ns, true), entry.event,
               entry.reason);
  }
}

// The build tree an object or source named by path belongs to, when -C was not given: the
// nearest directory above it that is a build tree (or NVFRESH_RECORD_DIR's), else the working dir.
std::string tree_of(const std::string& wanted)
{
  std::string cwd = current_directory();
  if (wanted.find('/') == std::string::npos) {
    return cwd;
  }
  const std::string dir = fs::path(canonical_object_path(wanted, cwd)).parent_path().string();
  if (auto tree = find_build_tree(dir)) {
    return *tree;
  }
  return cwd;
}

}  // namespace

int run_explain(const std::vector<std::string>& args)
{
  SubcommandOptions cli("explain");
  std::string build_dir;
  std::string wanted;
  bool all = false;
  bool json = false;
  cli.app().add_option("target", wanted, "the object or source file").required();
  cli.add_build_dir(build_dir);
  cli.app().add_flag("--all", all, "list every input, not only the changed ones");
  cli.app().add_flag("--json", json,
                     "the verdict, where the last compile's time went and its steps, as JSON");
  if (auto status = cli.parse(args)) {
    return *status;
  }
  const Environment env = current_environment();
  if (build_dir.empty()) {
    build_dir = tree_of(wanted);
  }
  ProvenTree tree = prove_tree(build_dir, env, {}, TreeRecords::every_record);  // it prints them
  const std::string& root = tree.record_root;
  const std::vector<StepEvent> step_events = read_step_events(root);
  int found = 0;
  nlohmann::json objects = nlohmann::json::array();
  for (const auto& status : tree.objects) {
    if (!matches(status, wanted, root)) {
      continue;
    }
    if (json) {
      ++found;
      objects.push_back(record_json(status, step_events));
      continue;
    }
    if (found++ > 0) {
      fmt::print("\n");
    }
    if (status.record) {
      print_record(status, all);
      print_steps(*status.record, step_events);
      print_artifacts(status, tree);
    } else {
      print_unusable_record(status);
    }
  }
  if (found == 0) {
    fmt::print(stderr, "nvfresh explain: no record for {} under {}\n", wanted, root);
    return 2;
  }
  if (json) {
    print_json({{"objects", objects}});
  }
  return 0;
}

}  // namespace nvfresh

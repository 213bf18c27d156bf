// nvfresh explain <object or source> [-C build-dir] [--all]: one object's record compared with the
// disk: every reason it is stale, the inputs that changed (all inputs and arguments with --all),
// the probes that now find a file, the toolchain recorded vs now, the history of its last builds
// (compiled, skipped, raced, marked-stale, with reasons) and the artifacts that contain it.
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "proof/linked_artifacts.hpp"
#include "proof/tree_status.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/time_format.hpp"

#include <CLI/CLI.hpp>
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
  cli.app().add_option("target", wanted, "the object or source file")->required();
  cli.add_build_dir(build_dir);
  cli.app().add_flag("--all", all, "list every input, not only the changed ones");
  if (auto status = cli.parse(args)) {
    return *status;
  }
  const Environment env = current_environment();
  if (build_dir.empty()) {
    build_dir = tree_of(wanted);
  }
  ProvenTree tree = prove_tree(build_dir, env, {}, TreeRecords::every_record);  // it prints them
  const std::string& root = tree.record_root;
  int found = 0;
  for (const auto& status : tree.objects) {
    if (!matches(status, wanted, root)) {
      continue;
    }
    if (found++ > 0) {
      fmt::print("\n");
    }
    if (status.record) {
      print_record(status, all);
      print_artifacts(status, tree);
    } else {
      print_unusable_record(status);
    }
  }
  if (found == 0) {
    fmt::print(stderr, "nvfresh explain: no record for {} under {}\n", wanted, root);
    return 2;
  }
  return 0;
}

}  // namespace nvfresh

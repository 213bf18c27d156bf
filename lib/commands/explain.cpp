// nvfresh explain <object or source> [-C build-dir] [--all]: one object's record compared with the
// disk: every reason it is stale, the inputs that changed (all inputs and arguments with --all),
// the probes that now find a file, the toolchain recorded vs now, the history of its last builds
// (compiled, skipped, raced, marked-stale, with reasons) and the artifacts that contain it.
#include "commands/commands.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "nvcc/nvcc_version.hpp"
#include "proof/artifacts.hpp"
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

bool matches(const ObjectStatus& status, const std::string& wanted)
{
  std::string absolute = absolute_path(wanted, current_directory());
  std::string canonical = canonical_object_path(wanted, current_directory());
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

// The nvcc version text now, when the recorded compiler still runs ("" otherwise).
void print_toolchain(const Record& record)
{
  std::string now = query_nvcc_version(record.compiler, current_environment());
  fmt::print("compiler  {} ({})\n", record.compiler, record.nvcc_version);
  if (now.empty()) {
    fmt::print("  now: {} does not run or does not say its version\n", record.compiler);
  } else if (now != record.nvcc_version) {
    fmt::print("  now: {} (CHANGED)\n", now);
  }
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
  fmt::print("probes: {} lookups that found nothing are watched\n", record.missing.size());
  fmt::print("history (last {} builds: compiled, skipped, raced, marked-stale):\n",
             record.history.size());
  for (const auto& entry : record.history) {
    fmt::print("  {}  {:<13} {}\n", format_local_time(entry.time_ns, true), entry.event,
               entry.reason);
  }
}

}  // namespace

int run_explain(const std::vector<std::string>& args)
{
  CLI::App app{"Show why one object is fresh or stale", "nvfresh explain"};
  std::string build_dir = ".";
  std::string wanted;
  bool all = false;
  app.add_option("target", wanted, "the object or source file")->required();
  app.add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
  app.add_flag("--all", all, "list every input, not only the changed ones");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  ProvenTree tree = prove_tree(build_dir, current_environment());
  const std::string& root = tree.record_root;
  int found = 0;
  for (const auto& status : tree.objects) {
    if (!matches(status, wanted)) {
      continue;
    }
    if (found++ > 0) {
      fmt::print("\n");
    }
    if (status.record) {
      print_record(status, all);
      print_artifacts(status, tree);
    } else {
      fmt::print("object    {}\nverdict   STALE\n  - {}\n", status.object,
                 status.verdict.reasons.front().describe());
    }
  }
  if (found == 0) {
    fmt::print(stderr, "nvfresh explain: no record for {} under {}\n", wanted, root);
    return 2;
  }
  return 0;
}

}  // namespace nvfresh

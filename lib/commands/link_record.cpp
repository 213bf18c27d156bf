// nvfresh link-record [-C build-dir] -- <link or archive command...>: the link launcher (wired by
// cmake/nvfresh.cmake through RULE_LAUNCH_LINK, and by the Python package's nvfresh.torch around
// setuptools' link of a PyTorch extension). Runs the command unchanged, with inherited
// stdout/stderr, and ends with its exit status. When it succeeded, writes a link record
// (record/link_record.hpp): the artifact's fingerprint and the content hash of every object and
// library the command read, hashed before it ran and checked unchanged after. "ranlib <archive>" refreshes
// the archive's fingerprint in its record; a command that links nothing (a compile: -c) just runs.
// Bookkeeping never changes the link's outcome or output: a failure to record goes to the debug log
// (NVFRESH_LOG_FILE) only.
//
// nvfresh link-record [-C build-dir] --copied <source> <copy>: runs nothing; records that <copy>,
// which has <source>'s content, holds what <source> was linked from (setuptools' --inplace copies
// the extension .so next to the sources, and that copy is what Python imports). Recorded only when
// <source>'s link record still describes <source> and the two files' contents are equal.
//
// The record root: that of -C's build directory (NVFRESH_RECORD_DIR when set, else
// <build-dir>/.nvfresh), else the one found from the working directory (record_root.hpp).
#include "record/link_record.hpp"
#include "commands/commands.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "proof/link_command.hpp"
#include "record/record_root.hpp"
#include "space/activity.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

bool recordable(const std::string& path)
{
  return path.find_first_of("\t\n") == std::string::npos;
}

struct LinkOptions {
  std::string build_dir;             // -C: "" means "found from the working directory"
  std::vector<std::string> copied;   // --copied <source> <copy>
  std::vector<std::string> command;  // the link command
  bool help = false;
  std::string error;
};

constexpr std::string_view k_usage =
  "usage: nvfresh link-record [-C build-dir] -- <link command...>\n"
  "       nvfresh link-record [-C build-dir] --copied <source> <copy>\n"
  "  runs a link (or archive) command unchanged, then records the content of every object and\n"
  "  library it read, so that 'nvfresh check' can tell which artifact holds which object version;\n"
  "  --copied records a copy of a linked artifact (e.g. setuptools' --inplace .so) instead\n"
  "  -C: the build directory whose records these are (default: found from the working directory)\n";

// Parsed by hand, not through SubcommandOptions: this is a launcher, and the link command that
// follows (with or without "--") must reach the linker untouched, whatever options it holds.
LinkOptions parse_link_options(const std::vector<std::string>& args)
{
  LinkOptions options;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if ((arg == "-C" || arg == "--build-dir") && i + 1 < args.size()) {
      options.build_dir = args[++i];
    } else if (arg == "--copied" && i + 2 < args.size()) {
      options.copied = {args[i + 1], args[i + 2]};
      i += 2;
    } else if (arg == "-C" || arg == "--build-dir" || arg == "--copied") {
      options.error =
        fmt::format("{} needs {}", arg, arg == "--copied" ? "two files" : "a directory");
    } else {
      break;  // the command itself, given without "--"
    }
  }
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return options;
}

std::string record_root_for(const LinkOptions& options, const std::string& cwd)
{
  std::string configured = load_config(current_environment()).record_dir;
  return options.build_dir.empty() ? find_record_root(configured, cwd)
                                   : record_root_of_build_dir(configured, options.build_dir);
}

struct PendingLink {
  LinkRecord record;
  std::string record_root;
};

// "ar q lib.a more.o" (CMake's ARCHIVE_APPEND, e.g. cmake_device_link.o after "ar qc lib.a
// <objects>") adds to the archive: what the archive already held stays read, when its link record
// still describes the archive on disk (else nvfresh cannot say what is in it, and the record lists
// only what this command adds).
std::vector<FileFingerprint> reads_kept_by_append(const std::string& record_root,
                                                  const std::string& archive, FileHasher& hasher)
{
  auto previous = load_link_record(record_root, archive);
  if (!previous || !hasher.unchanged(previous->output)) {
    return {};
  }
  return previous->reads;
}

std::optional<PendingLink> prepare_link(const LinkOptions& options, FileHasher& hasher)
{
  std::string cwd = current_directory();
  auto edge = describe_link_command(expand_response_files(options.command, cwd), cwd);
  if (!edge || !recordable(edge->artifact)) {
    return std::nullopt;
  }
  PendingLink pending;
  pending.record_root = record_root_for(options, cwd);
  pending.record.artifact = edge->artifact;
  pending.record.kind = edge->kind;
  pending.record.working_dir = cwd;
  if (edge->appends) {
    pending.record.reads = reads_kept_by_append(pending.record_root, edge->artifact, hasher);
  }
  for (const auto* paths : {&edge->objects, &edge->libraries}) {
    for (const auto& given : *paths) {
      // Records name objects with symlinks in their directory resolved: so do link records.
      std::string path = canonical_object_path(given, cwd);
      auto result = hasher.fingerprint(path);
      if (result.fingerprint && recordable(path)) {
        std::erase_if(pending.record.reads,
                      [&](const FileFingerprint& r) { return r.path == path; });
        pending.record.reads.push_back(*result.fingerprint);
      }
    }
  }
  pending.record.start_ns = now_ns();
  return pending;
}

void finish_link(PendingLink& pending)
{
  LinkRecord& record = pending.record;
  record.end_ns = now_ns();
  for (const auto& read : record.reads) {
    if (!read.same_stamp_as(stat_file(read.path))) {
      record.trusted = false;
      record.untrusted_reason = fmt::format("{} changed while the link ran", read.path);
    }
  }
  FileHasher after;
  auto output = after.fingerprint(record.artifact);
  if (!output.fingerprint) {
    return;
  }
  record.output = *output.fingerprint;
  save_link_record(pending.record_root, record);
}

// "ranlib <archive>" rewrites an archive that "ar" just wrote: keep its record's fingerprint current.
void refresh_after_ranlib(const LinkOptions& options)
{
  const std::vector<std::string>& command = options.command;
  if (command.size() != 2 ||
      fs::path(command[0]).filename().string().find("ranlib") == std::string::npos) {
    return;
  }
  std::string cwd = current_directory();
  std::string archive = lexically_normal(absolute_path(command[1], cwd));
  std::string root = record_root_for(options, cwd);
  auto record = load_link_record(root, archive);
  FileHasher hasher;
  auto output = hasher.fingerprint(archive);
  if (record && output.fingerprint) {
    record->output = *output.fingerprint;
    save_link_record(root, *record);
  }
}

// --copied: the copy gets the source's link record, with its own path and fingerprint.
int record_copy(const LinkOptions& options)
{
  std::string cwd = current_directory();
  std::string source = lexically_normal(absolute_path(options.copied[0], cwd));
  std::string copy = lexically_normal(absolute_path(options.copied[1], cwd));
  std::string root = record_root_for(options, cwd);
  auto record = load_link_record(root, source);
  FileHasher hasher;
  auto copied = hasher.fingerprint(copy);
  std::string why;
  if (!record || !hasher.unchanged(record->output)) {
    why = fmt::format("{} has no link record under {} that matches it", source, root);
  } else if (!copied.fingerprint || copied.fingerprint->hash != record->output.hash) {
    why = fmt::format("its content is not that of {}", source);
  } else if (!recordable(copy)) {
    why = "its path holds a TAB or LF";
  }
  if (!why.empty()) {
    fmt::print(stderr, "nvfresh: link-record: the copy {} is not recorded: {}\n", copy, why);
    return 0;
  }
  record->artifact = copy;
  record->working_dir = cwd;
  record->output = *copied.fingerprint;
  record->start_ns = record->end_ns = now_ns();
  save_link_record(root, *record);
  return 0;
}

int run_command_and_record(const LinkOptions& options)
{
  std::optional<PendingLink> pending;
  try {
    FileHasher hasher;
    Config config = load_config(current_environment());
    if (!config.disabled) {
      const std::string cwd = current_directory();
      enter_build_tree(record_root_for(options, cwd),
                       options.build_dir.empty() ? cwd : absolute_path(options.build_dir, cwd),
                       current_environment());
      pending = prepare_link(options, hasher);
    }
  } catch (const std::exception& error) {
    log::info("link-record: not recorded: {}", error.what());
  }
  ProcessResult result;
  try {
    SystemProcessRunner runner;
    result = runner.run(options.command, current_environment());
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh: cannot run {}: {}\n", options.command[0], error.what());
    return 127;
  }
  if (result.succeeded()) {
    try {
      pending ? finish_link(*pending) : refresh_after_ranlib(options);
    } catch (const std::exception& error) {
      log::info("link-record: {} not recorded: {}",
                pending ? pending->record.artifact : options.command[0], error.what());
    }
  }
  exit_like(result);
}

}  // namespace

int run_link_record(const std::vector<std::string>& args)
{
  LinkOptions options = parse_link_options(args);
  if (options.help) {
    fmt::print("{}", k_usage);
    return 0;
  }
  bool copying = !options.copied.empty();
  if (!options.error.empty() || copying == !options.command.empty()) {
    fmt::print(stderr, "{}{}",
               options.error.empty() ? "" : "nvfresh link-record: " + options.error + "\n",
               k_usage);
    return 2;
  }
  if (!copying) {
    return run_command_and_record(options);
  }
  try {
    return load_config(current_environment()).disabled ? 0 : record_copy(options);
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh: link-record: the copy {} is not recorded: {}\n", options.copied[1],
               error.what());
    return 0;
  }
}

}  // namespace nvfresh

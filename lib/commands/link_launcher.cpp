// nvfresh link-record -- <link or archive command...>: the link launcher (wired by
// cmake/nvfresh.cmake through RULE_LAUNCH_LINK). Runs the command unchanged, with inherited
// stdout/stderr, and ends with its exit status. When it succeeded, writes a link record
// (link_record.hpp): the artifact's fingerprint and the content hash of every object and library
// the command read, hashed before it ran and checked unchanged after. "ranlib <archive>" refreshes
// the archive's fingerprint in its record. Bookkeeping never changes the link's outcome or output:
// a failure to record goes to the debug log (NVFRESH_LOG_FILE) only.
#include "commands/commands.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "proof/build_graph.hpp"
#include "record/link_record.hpp"
#include "record/record_root.hpp"
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

std::optional<PendingLink> prepare_link(const std::vector<std::string>& command, FileHasher& hasher)
{
  std::string cwd = current_directory();
  auto edge = describe_link_command(expand_response_files(command, cwd), cwd);
  if (!edge || !recordable(edge->artifact)) {
    return std::nullopt;
  }
  PendingLink pending;
  pending.record_root = find_record_root(load_config(current_environment()).record_dir, cwd);
  pending.record.artifact = edge->artifact;
  pending.record.kind = edge->kind;
  pending.record.working_dir = cwd;
  if (edge->appends) {
    pending.record.reads = reads_kept_by_append(pending.record_root, edge->artifact, hasher);
  }
  for (const auto* paths : {&edge->objects, &edge->libraries}) {
    for (const auto& path : *paths) {
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
    FileStat now = stat_file(read.path);
    if (now.size != read.size || now.mtime_ns != read.mtime_ns || now.ctime_ns != read.ctime_ns ||
        now.inode != read.inode) {
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
void refresh_after_ranlib(const std::vector<std::string>& command)
{
  if (command.size() != 2 ||
      fs::path(command[0]).filename().string().find("ranlib") == std::string::npos) {
    return;
  }
  std::string cwd = current_directory();
  std::string archive = lexically_normal(absolute_path(command[1], cwd));
  std::string root = find_record_root(load_config(current_environment()).record_dir, cwd);
  auto record = load_link_record(root, archive);
  FileHasher hasher;
  auto output = hasher.fingerprint(archive);
  if (record && output.fingerprint) {
    record->output = *output.fingerprint;
    save_link_record(root, *record);
  }
}

}  // namespace

int run_link_record(const std::vector<std::string>& args)
{
  std::vector<std::string> command(args.begin() + (!args.empty() && args[0] == "--" ? 1 : 0),
                                   args.end());
  if (command.empty()) {
    fmt::print(stderr, "usage: nvfresh link-record -- <link command...>\n");
    return 2;
  }
  std::optional<PendingLink> pending;
  try {
    FileHasher hasher;
    pending =
      load_config(current_environment()).disabled ? std::nullopt : prepare_link(command, hasher);
  } catch (const std::exception& error) {
    log::info("link-record: not recorded: {}", error.what());
  }
  ProcessResult result;
  try {
    SystemProcessRunner runner;
    result = runner.run(command, current_environment());
  } catch (const std::exception& error) {
    fmt::print(stderr, "nvfresh: cannot run {}: {}\n", command[0], error.what());
    return 127;
  }
  if (result.succeeded()) {
    try {
      pending ? finish_link(*pending) : refresh_after_ranlib(command);
    } catch (const std::exception& error) {
      log::info("link-record: {} not recorded: {}", pending ? pending->record.artifact : command[0],
                error.what());
    }
  }
  exit_like(result);
}

}  // namespace nvfresh

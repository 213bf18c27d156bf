// Writes a record's text, head and note (the grammar: record_format.hpp).
#include "record/record.hpp"

#include "record/record_format.hpp"
#include "util/line_file.hpp"

#include <string>

namespace nvfresh {

namespace {

using record_format::k_head_magic;
using record_format::k_magic;
using record_format::k_note_magic;

// Tripwire: Record's size changes when a field is added (or one changes type). Then: write and read
// it in the text here (serialize_record, line_handlers), in the image (record_image.cpp), in the
// index where the freshness check needs it (freshness/record_index.cpp), set it in
// tests/unit/freshness/test_record_representations.cpp's every_field_set(), raise
// k_record_format_version if an older reader cannot read it, and update the size below.
constexpr std::size_t k_record_size_when_checked = 912;  // x86-64, libstdc++
static_assert(sizeof(Record) == k_record_size_when_checked,
              "Record has changed: see the tripwire comment above (record_write.cpp)");

void write_fingerprint_line(LineWriter& out, std::string_view key, const FileFingerprint& file)
{
  out.line(key, file.hash, file.size, file.mtime_ns, file.ctime_ns, file.inode, file.path);
}

}  // namespace

std::string serialize_record(const Record& record)
{
  LineWriter out;
  out.line(k_magic, k_record_format_version);
  out.line("object", record.object);
  out.line("source", record.source);
  out.line("cwd", record.working_dir);
  out.line("compiler", record.compiler);
  for (const auto& word : record.launcher_prefix) {
    out.line("launcher", word);
  }
  for (const auto& arg : record.signature_args) {
    out.line("arg", arg);
  }
  for (const auto& [name, value] : record.env) {
    out.line("env", name, value);
  }
  out.line("signature", record.signature);
  out.line("nvcc_version", record.nvcc_version);
  out.line("inputs_from", record.inputs_from_trace ? "trace" : "depfile");
  for (const auto& input : record.inputs) {
    const auto& f = input.file;
    out.line("input", role_name(input.role), f.hash, f.size, f.mtime_ns, f.ctime_ns, f.inode,
             join_passes(input.passes), f.path);
  }
  for (const auto& group : record.probes) {
    out.line("probes", group.dir, group.absent_under, group.names);
  }
  for (const auto& dir : record.probe_dirs) {
    out.line("probe_dir", dir.inode, dir.device, dir.mtime_ns, dir.ctime_ns, dir.path);
  }
  write_fingerprint_line(out, "output", record.output);
  for (const auto& [name, digest] : record.components) {
    out.line("component", name, digest);
  }
  if (record.cache_entry) {
    out.line("cache_entry", *record.cache_entry);
  }
  if (!record.depfile_path.empty()) {
    out.line("depfile", record.depfile_phony, record.depfile_path, record.depfile_target);
  }
  for (const auto& dep : record.depfile_prerequisites) {
    out.line("dep", dep);
  }
  out.line("times", record.start_ns, record.end_ns);
  for (const auto& time : record.pass_times) {
    out.line("pass_time", time.kind, time.pass, time.start_ns, time.end_ns, time.served);
  }
  out.line("trusted", record.trusted, record.untrusted_reason);
  if (!record.mtime_dependent.empty()) {
    out.line("mtime_dependent", record.mtime_dependent);
  }
  out.line("console", record.console_mode, record.console_out, record.console_err);
  if (!record.console_terminals.empty()) {
    out.line("console_terminals", record.console_terminals);
  }
  for (const auto& [name, value] : record.console_terminal_env) {
    out.line("console_terminal_env", name, value);
  }
  for (const auto& entry : record.history) {
    out.line("history", entry.time_ns, entry.event, entry.reason);
  }
  return out.finish();
}

std::string serialize_record_head(const RecordHead& head)
{
  LineWriter out(k_head_magic, 1);
  out.line("object", head.object);
  out.line("source", head.source);
  return out.finish();
}

std::string serialize_record_note(const RecordNote& note)
{
  LineWriter out;
  out.line(k_note_magic, 1);
  out.line("base", note.base);
  write_fingerprint_line(out, "output", note.output);
  for (const auto& entry : note.history) {
    out.line("history", entry.time_ns, entry.event, entry.reason);
  }
  return out.finish();
}

std::string record_text_checksum(std::string_view text)
{
  constexpr std::string_view k_checksum = "checksum\t";
  if (text.size() < k_checksum.size() + 2 || text.back() != '\n') {
    return {};
  }
  const size_t start = text.rfind('\n', text.size() - 2) + 1;  // npos + 1 == 0
  const std::string_view line = text.substr(start, text.size() - 1 - start);
  return line.starts_with(k_checksum) ? std::string(line.substr(k_checksum.size())) : "";
}

}  // namespace nvfresh

// Link record file format, version 1.
//
// Text lines separated by '\n', fields separated by '\t'; paths containing TAB or LF are never
// recorded (such a link is simply not recorded). Grammar (* = zero or more):
//
//   link     := "nvfresh-link" TAB "1" LF body checksum
//   body     := artifact kind cwd times trusted output read*
//   artifact := "artifact" TAB path LF                    absolute path the link wrote
//   kind     := "kind" TAB kind_name LF                   executable|shared_library|module_library|
//                                                         static_library|unknown
//   cwd      := "cwd" TAB path LF
//   times    := "times" TAB start_ns TAB end_ns LF
//   trusted  := "trusted" TAB ("1"|"0") TAB reason LF
//   output   := "output" TAB fingerprint LF              the artifact after the link
//   read     := "read" TAB fingerprint LF                an object or library the link read
//   fingerprint := hex32 TAB size TAB mtime_ns TAB ctime_ns TAB inode TAB path
//   checksum := "checksum" TAB hex32 LF                  XXH3-128 of every byte before this line
//
// A file that fails the header, version or checksum check is ignored (as if no link was recorded).
#include "record/link_record.hpp"

#include "record/record_root.hpp"
#include "util/compressed_file.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_magic = "nvfresh-link";

std::string fingerprint_fields(const FileFingerprint& f)
{
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}", f.hash.to_hex(), f.size, f.mtime_ns, f.ctime_ns,
                     f.inode, f.path);
}

std::vector<std::string_view> split_tabs(std::string_view line)
{
  std::vector<std::string_view> fields;
  size_t begin = 0;
  while (begin <= line.size()) {
    size_t end = std::min(line.find('\t', begin), line.size());
    fields.push_back(line.substr(begin, end - begin));
    begin = end + 1;
  }
  return fields;
}

std::optional<FileFingerprint> to_fingerprint(const std::vector<std::string_view>& f)
{
  FileFingerprint file;
  auto hash = f.size() == 7 ? Digest::from_hex(std::string(f[1])) : std::nullopt;
  if (!hash || !parse_number(f[2], file.size) || !parse_number(f[3], file.mtime_ns) ||
      !parse_number(f[4], file.ctime_ns) || !parse_number(f[5], file.inode)) {
    return std::nullopt;
  }
  file.hash = *hash;
  file.path = std::string(f[6]);
  return file;
}

using Fields = std::vector<std::string_view>;

struct LineRule {
  std::string_view key;
  size_t fields;  // including the key
  bool (*apply)(const Fields&, LinkRecord&);
};

bool apply_fingerprint(const Fields& f, FileFingerprint& target)
{
  auto file = to_fingerprint(f);
  if (file) {
    target = *file;
  }
  return file.has_value();
}

constexpr LineRule k_line_rules[] = {
  {"artifact", 2,
   [](const Fields& f, LinkRecord& r) {
     r.artifact = f[1];
     return true;
   }},
  {"kind", 2,
   [](const Fields& f, LinkRecord& r) {
     r.kind = artifact_kind_from_name(f[1]);
     return true;
   }},
  {"cwd", 2,
   [](const Fields& f, LinkRecord& r) {
     r.working_dir = f[1];
     return true;
   }},
  {"times", 3,
   [](const Fields& f, LinkRecord& r) {
     return parse_number(f[1], r.start_ns) && parse_number(f[2], r.end_ns);
   }},
  {"trusted", 3,
   [](const Fields& f, LinkRecord& r) {
     r.trusted = f[1] == "1";
     r.untrusted_reason = f[2];
     return true;
   }},
  {"output", 7, [](const Fields& f, LinkRecord& r) { return apply_fingerprint(f, r.output); }},
  {"read", 7,
   [](const Fields& f, LinkRecord& r) { return apply_fingerprint(f, r.reads.emplace_back()); }},
};

bool apply_line(const Fields& f, LinkRecord& r)
{
  for (const auto& rule : k_line_rules) {
    if (rule.key == f[0]) {
      return f.size() == rule.fields && rule.apply(f, r);
    }
  }
  return false;
}

}  // namespace

const FileFingerprint* LinkRecord::read_of(const std::string& path) const
{
  for (const auto& read : reads) {
    if (read.path == path) {
      return &read;
    }
  }
  return nullptr;
}

std::string serialize_link_record(const LinkRecord& r)
{
  std::string text = fmt::format("{}\t{}\n", k_magic, k_link_record_format_version);
  text += fmt::format("artifact\t{}\nkind\t{}\ncwd\t{}\n", r.artifact, artifact_kind_name(r.kind),
                      r.working_dir);
  text += fmt::format("times\t{}\t{}\ntrusted\t{}\t{}\n", r.start_ns, r.end_ns, r.trusted ? 1 : 0,
                      r.untrusted_reason);
  text += fmt::format("output\t{}\n", fingerprint_fields(r.output));
  for (const auto& read : r.reads) {
    text += fmt::format("read\t{}\n", fingerprint_fields(read));
  }
  text += fmt::format("checksum\t{}\n", hash_bytes(text).to_hex());
  return text;
}

std::optional<LinkRecord> parse_link_record(const std::string& text, std::string* error)
{
  auto fail = [&](std::string message) {
    if (error != nullptr) {
      *error = std::move(message);
    }
    return std::nullopt;
  };
  std::string header = fmt::format("{}\t{}\n", k_magic, k_link_record_format_version);
  if (text.rfind(header, 0) != 0 || text.empty() || text.back() != '\n') {
    return fail("not a link record of format version 1");
  }
  size_t checksum_at = text.rfind('\n', text.size() - 2) + 1;
  if (text.substr(checksum_at) !=
      fmt::format("checksum\t{}\n",
                  hash_bytes(std::string_view(text).substr(0, checksum_at)).to_hex())) {
    return fail("checksum mismatch");
  }
  LinkRecord record;
  std::string_view body = std::string_view(text).substr(header.size(), checksum_at - header.size());
  while (!body.empty()) {
    size_t end = body.find('\n');
    if (!apply_line(split_tabs(body.substr(0, end)), record)) {
      return fail(fmt::format("bad line '{}'", body.substr(0, end)));
    }
    body.remove_prefix(end + 1);
  }
  return record;
}

std::string link_record_file_for(const std::string& record_root, const std::string& artifact)
{
  std::string name = fs::path(artifact).filename().string();
  return links_dir(record_root) + "/" + name + "-" + hash_bytes(artifact).to_hex().substr(0, 16) +
         ".link";
}

namespace {

// A link record file that is missing, unreadable or malformed is as if the link was never
// recorded: the artifact's mtime decides then.
std::optional<LinkRecord> read_link_record_file(const std::string& file)
{
  try {
    auto text = try_read_compressed_file(file);
    return text ? parse_link_record(*text) : std::nullopt;
  } catch (const CompressedFileError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<LinkRecord> load_link_record(const std::string& record_root,
                                           const std::string& artifact)
{
  return read_link_record_file(link_record_file_for(record_root, artifact));
}

std::vector<LinkRecord> load_all_link_records(const std::string& record_root)
{
  std::vector<LinkRecord> records;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(links_dir(record_root), error)) {
    if (auto record = read_link_record_file(entry.path().string())) {
      records.push_back(std::move(*record));
    }
  }
  return records;
}

void save_link_record(const std::string& record_root, const LinkRecord& record)
{
  write_record_file(link_record_file_for(record_root, record.artifact),
                    serialize_link_record(record));
}

}  // namespace nvfresh

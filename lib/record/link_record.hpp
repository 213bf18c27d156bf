// What one link step read and wrote, recorded by the link launcher (`nvfresh link-record -- <cmd>`,
// wired by cmake/nvfresh.cmake through RULE_LAUNCH_LINK): the artifact's fingerprint after the
// link and the content hash of every object and library it read. This is the proof "libx.so was
// linked from attention.cu.o version 3f2a…". The on-disk grammar is at the top of link_record.cpp.
// Records live in "<record root>/links/<artifact basename>-<hash of its path>.link".
#pragma once

#include "record/artifact_kind.hpp"
#include "record/record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct LinkRecord {
  std::string artifact;  // absolute
  ArtifactKind kind = ArtifactKind::unknown;
  std::string working_dir;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool trusted = true;  // false when an input changed while the link ran
  std::string untrusted_reason;
  FileFingerprint output;              // the artifact as the link (and a following ranlib) left it
  std::vector<FileFingerprint> reads;  // objects and libraries of this link, at link time
  bool operator==(const LinkRecord&) const = default;

  const FileFingerprint* read_of(const std::string& path) const;
};

constexpr int k_link_record_format_version = 1;

std::string serialize_link_record(const LinkRecord& record);
std::optional<LinkRecord> parse_link_record(const std::string& text, std::string* error = nullptr);

std::string link_record_file_for(const std::string& record_root, const std::string& artifact);
std::optional<LinkRecord> load_link_record(const std::string& record_root,
                                           const std::string& artifact);
std::vector<LinkRecord> load_all_link_records(const std::string& record_root);
void save_link_record(const std::string& record_root, const LinkRecord& record);  // atomic; throws

}  // namespace nvfresh

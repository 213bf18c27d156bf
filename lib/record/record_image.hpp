// A record's image: the whole Record in binary, stored in the record file next to its text
// (record_root.cpp, record_container.hpp), so that the unchanged path reads a record without
// decompressing and parsing it. A CUTLASS TU's record is 358 KB of text: its zstd frames and
// their parse were 1.8 ms of a 5.5 ms skip on the GPU machine; its image is read in a fraction of
// that. The text stays the record (`zstd -dc` prints it; readers without images parse it): an
// image is only used while the file's text frames are byte for byte the ones it was made with.
//
// Layout (little-endian; every count, length, size and inode a LEB128 varint, an input's times the
// zigzag varint of their difference from the previous input's, other times fixed 8 bytes, digests
// their 16 raw bytes):
//   "nvfresh-record-image" version(=4; 3 is read too: it ends before mtime_dependent) text_checksum
//   object source cwd compiler launcher[] arg[] env[] signature nvcc_version inputs_from_trace
//   probe_section_size, then the probe section (its own bytes, so that it can be decoded on a
//   thread of its own while the rest is):
//     name[]              every distinct probe name
//     probe_group[]       dir(front-coded) absent_under name_number[]
//     probe_dir[]         inode device mtime ctime path(front-coded)
//   pass_lists[]          every distinct list of passes, each a string[]
//   input[]               role pass_list hash size mtime(delta) ctime(delta) inode path(front-coded)
//   output component[] cache_entry? depfile_phony depfile_path depfile_target
//   dep[]                 0 + string(front-coded), or 1 + n: the path of input n
//   start end trusted untrusted_reason history[] console_mode console_out console_err
//   console_terminals console_terminal_env[] pass_time[] mtime_dependent
// Front-coded: the length of the prefix shared with the previous path of the same list, then the
// rest. The image has no checksum of its own: the frame that holds it does (record_container.cpp).
#pragma once

#include "record/record.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

struct RecordImage {
  Record record;
  std::string text_checksum;  // the checksum line of the text it was made with (the note's base)
};

// The image of `record`, whose text (serialize_record) ends in `text_checksum`. "" for a record
// whose text does not read back as itself (a probe group without names): such a record has no
// image, and its readers parse the text, as they did.
std::string serialize_record_image(const Record& record, std::string_view text_checksum);

// The record an image holds; nullopt when the bytes are not a complete image of this version or
// the one before (an older image: its record is read from the text). Never throws; every length is
// checked against the bytes left. threads > 1: the probe section is decoded on a second thread (the
// skip's load).
std::optional<RecordImage> parse_record_image(std::string_view bytes, std::size_t threads = 1);

}  // namespace nvfresh

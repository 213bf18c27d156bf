// The file a record (and a link record) is stored in: its text as zstd frames
// (util/compressed_file.hpp) with what is not the text around them, each in a zstd skippable frame
// of its own that `zstd -dc` passes over:
//
//   file  := head? text-frame+ image? note?
//   head  := skippable frame 0x184D2A50, stored as it is    which object (record.hpp: RecordHead)
//   image := skippable frame 0x184D2A52                     the record in binary (record_image.hpp)
//   note  := skippable frame 0x184D2A51, stored as it is    what later skips changed (RecordNote)
//
// Plain-text files, as earlier nvfresh versions wrote them, are read as they are.
#pragma once

#include "util/compressed_file.hpp"
#include "util/file_io.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

// Compresses `text` and writes it atomically (write_file_atomically). Throws on failure. A non-empty
// `head` goes before the compressed frame, in a zstd skippable frame of its own, uncompressed: the
// first bytes of the file, readable with read_record_container_head when the rest is torn.
// frames > 1: a text of 128 KB and more is cut into up to that many frames (compress_text). A
// non-empty `image` (a binary form of the text that a reader loads faster: record_image.hpp) goes
// after the frames, in a skippable frame of its own with the XXH3-64 of the frames' bytes and of
// itself, LZ4-compressed (an image of up to 256 MB; a bigger one is not written).
void write_record_container(const std::string& path, std::string_view text,
                            std::string_view head = {}, std::size_t frames = 1,
                            std::string_view image = {}, Compression effort = Compression::smaller);

// The image written with the file's text; nullopt when it has none, or when the image or the text
// frames are not byte for byte the ones it was written with (a text changed or damaged since is
// read from its frames, as without an image). Bytes after the image that are no whole note (one
// torn while it was written in place) do not count against it.
std::optional<std::string> record_container_image(std::string_view bytes);

// The head written with the file (nullopt when the file has none or cannot be read); reads only the
// file's first bytes.
std::optional<std::string> read_record_container_head(const std::string& path);

// The text of a container's bytes, its head skipped (decompress_if_compressed), or of a plain-text
// file. Throws CompressedFileError when it has a head but no text, or a frame that does not decode.
std::string record_container_text(std::string bytes, const std::string& what,
                                  unsigned long long max_text = k_default_max_text,
                                  std::size_t threads = 1);

// A note: a small text after the compressed frame, in a skippable frame of its own (uncompressed),
// that a reader applies to the text (records: what a skip changed). Rewriting it leaves the head,
// the compressed frames and the image byte for byte as they were, so a large text is neither serialized nor
// compressed again. Readers that know no note skip it, as zstd does.
//
// Whether `bytes` hold a compressed text frame (after any head): a file a note can be added to.
bool has_record_container_text(std::string_view bytes);

// The note of a file's bytes; nullopt when there is none (or the bytes are no compressed file).
std::optional<std::string> record_container_note(std::string_view bytes);

// Puts `note` in place of any note of the file at `path`, whose bytes were `stored` (a file written
// by write_record_container) when it was read as `read_from`. While that file is still there (same
// inode, one link, not shorter), only the note's bytes are written, over the old note: what comes
// before it never changes in a file, so nothing else needs writing (a CUTLASS record: 1.6 KB of
// 100 KB). A reader that meets the note half written finds no note, which only loses what the note
// said (the record then reads as it was written: its object's stamp is checked by content again).
// Otherwise (the file was replaced, `path` is a symlink, or read_from has no inode) `stored` is
// written back atomically with the note, as a file of its own at `path` (a symlinked record is never
// written through: the link's target stays as it was). Throws on failure, and when `stored` is not such a file.
void write_record_container_note(const std::string& path, std::string_view stored,
                                 std::string_view note, const FileStat& read_from);

}  // namespace nvfresh

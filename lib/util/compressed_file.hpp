// Files nvfresh keeps for itself (records, link records), stored as zstd frames (one, or one per
// piece of a big text): a CUTLASS TU's record is 358 KB of text and about a sixth of that
// compressed. Plain-text files, as earlier
// nvfresh versions wrote them, are read as they are.
#pragma once

#include "util/file_io.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nvfresh {

class CompressedFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Compresses `text` and writes it atomically (write_file_atomically). Throws on failure. A non-empty
// `head` goes before the compressed frame, in a zstd skippable frame of its own, uncompressed: the
// first bytes of the file, readable with read_compressed_file_head when the rest is torn.
// frames > 1: a text of 128 KB and more is cut at line ends into up to that many pieces (64 KB at
// least), one zstd frame each, which a reader decompresses on as many threads; `zstd -dc` gives
// the text whole, as from one frame. A non-empty `image` (a binary form of the text that a reader
// loads faster: record/record_image.hpp) goes after the frames, in a skippable frame of its own with
// the XXH3-64 of the frames' bytes and of itself, LZ4-compressed (an image of up to 256 MB; a
// bigger one is not written).
void write_compressed_file(const std::string& path, std::string_view text,
                           std::string_view head = {}, std::size_t frames = 1,
                           std::string_view image = {});

// The image written with the file's text; nullopt when it has none, or when the image or the text
// frames are not byte for byte the ones it was written with (a text changed or damaged since is
// read from its frames, as without an image). Bytes after the image that are no whole note (one
// torn while it was written in place) do not count against it.
std::optional<std::string> compressed_file_image(std::string_view bytes);

// The head written with the file (nullopt when the file has none or cannot be read); reads only the
// file's first bytes.
std::optional<std::string> read_compressed_file_head(const std::string& path);

// The text of a file written by write_compressed_file (its head skipped), or of a plain-text file;
// std::nullopt when the file cannot be read. Throws CompressedFileError when it is a zstd frame that
// does not decode.
// max_text bounds the decompressed text (a corrupt frame may claim anything).
inline constexpr unsigned long long k_default_max_text = 256ULL << 20;  // a CUTLASS record: 0.6 MB
std::optional<std::string> try_read_compressed_file(
  const std::string& path, unsigned long long max_text = k_default_max_text);

// The same for bytes already in memory. A text in several frames (each stating its size) is
// decompressed on up to `threads` threads.
std::string decompress_if_compressed(std::string bytes, const std::string& what,
                                     unsigned long long max_text = k_default_max_text,
                                     std::size_t threads = 1);

// A note: a small text after the compressed frame, in a skippable frame of its own (uncompressed),
// that a reader applies to the text (records: what a skip changed). Rewriting it leaves the head,
// the compressed frames and the image byte for byte as they were, so a large text is neither serialized nor
// compressed again. Readers that know no note skip it, as zstd does.
//
// Whether `bytes` hold a compressed text frame (after any head): a file a note can be added to.
bool has_compressed_text(std::string_view bytes);

// The note of a file's bytes; nullopt when there is none (or the bytes are no compressed file).
std::optional<std::string> compressed_file_note(std::string_view bytes);

// Puts `note` in place of any note of the file at `path`, whose bytes were `stored` (a file written
// by write_compressed_file) when it was read as `read_from`. While that file is still there (same
// inode, one link, not shorter), only the note's bytes are written, over the old note: what comes
// before it never changes in a file, so nothing else needs writing (a CUTLASS record: 1.6 KB of
// 100 KB). A reader that meets the note half written finds no note, which only loses what the note
// said (the record then reads as it was written: its object's stamp is checked by content again).
// Otherwise (the file was replaced, `path` is a symlink, or read_from has no inode) `stored` is
// written back atomically with the note, as a file of its own at `path` (a symlinked record is never
// written through: the link's target stays as it was). Throws on failure, and when `stored` is not such a file.
void write_compressed_file_note(const std::string& path, std::string_view stored,
                                std::string_view note, const FileStat& read_from);

}  // namespace nvfresh

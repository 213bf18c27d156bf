// zstd files and the frames they are made of, as nvfresh stores its texts (records: through
// record/record_container.hpp; cache entries and manifests: write_compressed_file): a CUTLASS TU's
// record is 358 KB of text and about a sixth of that compressed. Plain-text files, as earlier
// nvfresh versions wrote them, are read as they are.
#pragma once

#include "util/file_io.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nvfresh {

class CompressedFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// How hard compress_text works. smaller: zstd level 1, a record's text 6x smaller. faster: a
// negative level, about twice as fast and a record's text 4x smaller, for a file written on a path
// whose time counts more than its size (a record written on a cache hit in a fresh build dir).
enum class Compression { smaller, faster };

// The zstd frames of `text`: one, or (frames > 1) for a text of 128 KB and more up to that many,
// cut at line ends into pieces of 64 KB at least, which a reader decompresses on as many threads;
// `zstd -dc` gives the text whole, as from one frame. Throws (naming `what`) on failure.
std::string compress_text(std::string_view text, std::size_t frames, const std::string& what,
                          Compression effort = Compression::smaller);

// Compresses `text` into one frame and writes it atomically (write_file_atomically). Throws on
// failure.
void write_compressed_file(const std::string& path, std::string_view text);

// zstd's skippable frames (magic, u32 content size, content), which zstd and nvfresh's readers
// pass over: nvfresh keeps what is not the text in them (record_container.hpp).
inline constexpr std::size_t k_skippable_frame_header = 8;
void append_skippable_frame(std::string& out, std::uint32_t magic, std::string_view content);
// The content of the skippable frame with `magic` at `at` in `bytes` (bounded by `max`), or nullopt.
std::optional<std::string_view> skippable_frame_at(std::string_view bytes, std::size_t at,
                                                   std::uint32_t magic, std::uint32_t max);

// Whether `bytes` begin with a zstd frame's magic.
bool starts_with_zstd_frame(std::string_view bytes);

// Where the complete zstd frames that follow one another from `start` end; nullopt when there is
// none there.
std::optional<std::size_t> zstd_frames_end(std::string_view bytes, std::size_t start);

// The text of a file written by write_compressed_file, or of a plain-text file; std::nullopt when
// the file cannot be read. Throws CompressedFileError when it is a zstd frame that does not decode.
// max_text bounds the decompressed text (a corrupt frame may claim anything).
inline constexpr unsigned long long k_default_max_text = 256ULL << 20;  // a CUTLASS record: 0.6 MB
std::optional<std::string> try_read_compressed_file(
  const std::string& path, unsigned long long max_text = k_default_max_text);

// The same for bytes already in memory, the text starting at `start` (what comes before it is no
// part of it: a record's head). A text in several frames (each stating its size) is decompressed
// on up to `threads` threads; skippable frames after the text are passed over.
std::string decompress_if_compressed(std::string bytes, const std::string& what,
                                     unsigned long long max_text = k_default_max_text,
                                     std::size_t threads = 1, std::size_t start = 0);

}  // namespace nvfresh

#include "util/compressed_file.hpp"

#include "util/file_io.hpp"
#include "util/parallel.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

namespace nvfresh {

namespace {

constexpr int k_level = 1;  // fast, and 7x smaller on records (level 3: 2% smaller, 1.5x slower)
// Compression::faster: zstd's --fast=2; on a record of 900 inputs twice level 1's speed, with
// 64 KB of 275 KB left instead of 45 KB (--fast=5 and above gain little more speed).
constexpr int k_faster_level = -2;
constexpr unsigned char k_zstd_magic[] = {0x28, 0xB5, 0x2F, 0xFD};
// zstd's largest block: each block of a frame (3 bytes of header, 1 of content at least)
// decompresses to this much at most, which bounds what a frame of n bytes can hold.
constexpr unsigned long long k_zstd_block_max = 128ULL * 1024;

std::uint32_t load_u32(std::string_view bytes, std::size_t at)
{
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);  // little-endian, as zstd writes it
  return value;
}

// A text cut into at most `frames` pieces of about the same size, each ending at a line end where
// there is one, none below k_min_frame_text (one piece for a small text, or an empty one).
constexpr std::size_t k_min_frame_text = std::size_t{64} * 1024;

std::vector<std::string_view> text_pieces(std::string_view text, std::size_t frames)
{
  const std::size_t count =
    std::clamp<std::size_t>(text.size() / k_min_frame_text, 1, std::max<std::size_t>(frames, 1));
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= count && begin < text.size(); ++i) {
    std::size_t end = text.size();
    if (i < count) {
      const std::size_t newline = text.find('\n', std::max(begin, text.size() / count * i));
      end = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  if (pieces.empty()) {
    pieces.emplace_back();  // an empty text is one empty frame
  }
  return pieces;
}

bool starts_with_zstd_magic(std::string_view bytes)
{
  return bytes.size() >= sizeof k_zstd_magic &&
         std::memcmp(bytes.data(), k_zstd_magic, sizeof k_zstd_magic) == 0;
}

// One zstd frame of a file's text.
struct TextFrame {
  std::size_t offset = 0;  // in the file's bytes
  std::size_t size = 0;    // compressed
  unsigned long long content = ZSTD_CONTENTSIZE_UNKNOWN;
};

// The complete zstd frames that follow one another from `start` (a text written in several frames
// has one per piece); it stops at the first that is not one (a note, the end, a torn frame).
std::vector<TextFrame> text_frames(std::string_view bytes, std::size_t start)
{
  std::vector<TextFrame> frames;
  while (starts_with_zstd_magic(bytes.substr(start))) {
    const std::size_t size =
      ZSTD_findFrameCompressedSize(bytes.data() + start, bytes.size() - start);
    if (ZSTD_isError(size) != 0) {
      break;
    }
    frames.push_back({start, size, ZSTD_getFrameContentSize(bytes.data() + start, size)});
    start += size;
  }
  return frames;
}

ZSTD_DCtx& thread_context()
{
  // One context per thread: check loads thousands of records on several threads.
  thread_local std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(),
                                                                            &ZSTD_freeDCtx);
  if (!context) {
    throw std::bad_alloc();
  }
  return *context;
}

// A text of several frames whose sizes they all state, each decompressed into its place of one
// buffer, on up to `threads` threads. What follows the frames must be skippable frames (a note).
std::string decompress_frames(std::string_view bytes, const std::vector<TextFrame>& frames,
                              const std::string& what, unsigned long long max_text,
                              std::size_t threads)
{
  std::vector<std::size_t> offsets;
  unsigned long long total = 0;
  for (const TextFrame& frame : frames) {
    offsets.push_back(static_cast<std::size_t>(total));
    total += frame.content;
    if (total > max_text) {
      throw CompressedFileError(fmt::format("{} claims {} bytes of text: corrupt", what, total));
    }
  }
  std::size_t rest = frames.back().offset + frames.back().size;
  while (rest < bytes.size()) {
    const std::size_t size = ZSTD_findFrameCompressedSize(bytes.data() + rest, bytes.size() - rest);
    if (starts_with_zstd_magic(bytes.substr(rest))) {
      throw CompressedFileError(
        fmt::format("{} does not decompress (a frame is torn): truncated or corrupt", what));
    }
    if (ZSTD_isError(size) != 0) {
      throw CompressedFileError(fmt::format("{} has bytes after its text: corrupt", what));
    }
    rest += size;
  }
  std::string text(static_cast<std::size_t>(total), '\0');
  std::vector<std::size_t> results(frames.size(), 0);
  for_each_index_on_threads(frames.size(), 1, threads, [&](std::size_t i) {
    const std::size_t capacity = static_cast<std::size_t>(frames[i].content);
    results[i] = ZSTD_decompressDCtx(&thread_context(), text.data() + offsets[i], capacity,
                                     bytes.data() + frames[i].offset, frames[i].size);
  });
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (ZSTD_isError(results[i]) != 0 || results[i] != frames[i].content) {
      throw CompressedFileError(
        fmt::format("{} does not decompress ({}): truncated or corrupt", what,
                    ZSTD_isError(results[i]) != 0 ? ZSTD_getErrorName(results[i]) : "short"));
    }
  }
  return text;
}

}  // namespace

std::string compress_text(std::string_view text, std::size_t frames, const std::string& what,
                          Compression effort)
{
  const int level = effort == Compression::faster ? k_faster_level : k_level;
  std::string packed;
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!context) {
    throw std::bad_alloc();
  }
  for (std::string_view piece : text_pieces(text, frames)) {
    const std::size_t start = packed.size();
    packed.resize(start + ZSTD_compressBound(piece.size()));
    const size_t size = ZSTD_compressCCtx(context.get(), packed.data() + start,
                                          packed.size() - start, piece.data(), piece.size(), level);
    if (ZSTD_isError(size) != 0) {
      throw std::runtime_error(
        fmt::format("cannot compress {}: {}", what, ZSTD_getErrorName(size)));
    }
    packed.resize(start + size);
  }
  return packed;
}

void write_compressed_file(const std::string& path, std::string_view text)
{
  write_file_atomically(path, compress_text(text, 1, path));
}

void append_skippable_frame(std::string& out, std::uint32_t magic, std::string_view content)
{
  const auto size = static_cast<std::uint32_t>(content.size());
  out.append(reinterpret_cast<const char*>(&magic), 4);
  out.append(reinterpret_cast<const char*>(&size), 4);
  out.append(content);
}

std::optional<std::string_view> skippable_frame_at(std::string_view bytes, std::size_t at,
                                                   std::uint32_t magic, std::uint32_t max)
{
  const std::string_view rest = bytes.substr(std::min(at, bytes.size()));
  if (rest.size() < k_skippable_frame_header || load_u32(rest, 0) != magic) {
    return std::nullopt;
  }
  const std::uint32_t size = load_u32(rest, 4);
  if (size > max || rest.size() - k_skippable_frame_header < size) {
    return std::nullopt;
  }
  return rest.substr(k_skippable_frame_header, size);
}

bool starts_with_zstd_frame(std::string_view bytes)
{
  return starts_with_zstd_magic(bytes);
}

std::optional<std::size_t> zstd_frames_end(std::string_view bytes, std::size_t start)
{
  const auto frames = text_frames(bytes, start);
  if (frames.empty()) {
    return std::nullopt;
  }
  return frames.back().offset + frames.back().size;
}

std::string decompress_if_compressed(std::string bytes, const std::string& what,
                                     unsigned long long max_text, std::size_t threads,
                                     std::size_t start)
{
  if (!starts_with_zstd_magic(std::string_view(bytes).substr(std::min(start, bytes.size())))) {
    bytes.erase(0, std::min(start, bytes.size()));
    return bytes;
  }
  const std::vector<TextFrame> frames = text_frames(bytes, start);
  const bool sizes_known =
    !frames.empty() && std::all_of(frames.begin(), frames.end(), [](const TextFrame& frame) {
      return frame.content != ZSTD_CONTENTSIZE_UNKNOWN && frame.content != ZSTD_CONTENTSIZE_ERROR;
    });
  // A damaged frame may claim gigabytes; what its blocks cannot hold is not allocated.
  for (const TextFrame& frame : frames) {
    if (sizes_known && frame.content > (frame.size / 4 + 1) * k_zstd_block_max) {
      throw CompressedFileError(fmt::format("{} claims {} bytes of text in a frame of {}: corrupt",
                                            what, frame.content, frame.size));
    }
  }
  if (frames.size() > 1 && sizes_known) {
    return decompress_frames(bytes, frames, what, max_text, threads);
  }
  bytes.erase(0, start);
  ZSTD_DCtx* context = &thread_context();
  const unsigned long long size = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR && size > max_text) {
    throw CompressedFileError(fmt::format("{} claims {} bytes of text: corrupt", what, size));
  }
  if (frames.size() == 1 && sizes_known) {
    std::string text(size, '\0');  // the frames nvfresh writes: their size is known, one pass
    const size_t got =
      ZSTD_decompressDCtx(context, text.data(), text.size(), bytes.data(), bytes.size());
    if (ZSTD_isError(got) != 0 || got != size) {
      throw CompressedFileError(
        fmt::format("{} does not decompress ({}): truncated or corrupt", what,
                    ZSTD_isError(got) != 0 ? ZSTD_getErrorName(got) : "short"));
    }
    return text;
  }
  // Streamed, frame after frame (and past a note, a skippable frame), so that a frame without its
  // content size (the zstd tool writing from a pipe) reads as well as the ones nvfresh writes, and
  // a torn one costs only what really decompresses.
  ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
  std::string text;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  size_t remaining = 0;
  bool output_full = false;  // then the decoder may hold more to flush, with no input left
  while (in.pos < in.size || output_full) {
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    remaining = ZSTD_decompressStream(context, &out, &in);
    if (ZSTD_isError(remaining) != 0) {
      throw CompressedFileError(fmt::format("{} does not decompress ({}): truncated or corrupt",
                                            what, ZSTD_getErrorName(remaining)));
    }
    text.append(chunk.data(), out.pos);
    if (text.size() > max_text) {
      throw CompressedFileError(
        fmt::format("{} decompresses to more than {} bytes: corrupt", what, max_text));
    }
    output_full = out.pos == out.size;
  }
  if (remaining != 0) {
    throw CompressedFileError(
      fmt::format("{} ends inside a zstd frame: truncated or corrupt", what));
  }
  return text;
}

std::optional<std::string> try_read_compressed_file(const std::string& path,
                                                    unsigned long long max_text)
{
  auto bytes = try_read_file(path, max_text);
  if (!bytes) {
    return std::nullopt;
  }
  return decompress_if_compressed(std::move(*bytes), path, max_text, 1);
}

}  // namespace nvfresh

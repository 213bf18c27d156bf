#include "util/compressed_file.hpp"

#include "util/file_io.hpp"
#include "util/parallel.hpp"

#include <fmt/format.h>
#include <lz4.h>
#include <xxhash.h>
#include <zstd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
constexpr unsigned char k_zstd_magic[] = {0x28, 0xB5, 0x2F, 0xFD};
constexpr std::uint32_t k_skippable_magic = 0x184D2A50;  // the first of zstd's 16 skippable magics
constexpr std::size_t k_skippable_header = 8;            // magic, u32 content size
constexpr std::uint32_t k_max_head = 60 * 1024;
constexpr std::uint32_t k_note_magic = 0x184D2A51;  // the second skippable magic
constexpr std::uint32_t k_max_note = 1024 * 1024;
constexpr std::uint32_t k_image_magic = 0x184D2A52;  // the third skippable magic
// An image's frame: the XXH3-64 of the text frames' bytes it was made with, then of the rest: the
// image's size (u32) and the image as one LZ4 block (a CUTLASS TU's: 94 KB, 58 KB as LZ4, read
// back at 8 GB/s).
constexpr std::size_t k_image_hashes = 16;
constexpr std::size_t k_image_prefix = k_image_hashes + 4;
constexpr std::uint32_t k_max_image = 256U << 20;
// zstd's largest block: each block of a frame (3 bytes of header, 1 of content at least)
// decompresses to this much at most, which bounds what a frame of n bytes can hold.
constexpr unsigned long long k_zstd_block_max = 128ULL * 1024;

std::uint32_t load_u32(std::string_view bytes, std::size_t at)
{
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);  // little-endian, as zstd writes it
  return value;
}

// The content of the skippable frame with `magic` at `at` in `bytes` (bounded by `max`), or nullopt.
std::optional<std::string_view> skippable_at(std::string_view bytes, std::size_t at,
                                             std::uint32_t magic, std::uint32_t max)
{
  const std::string_view rest = bytes.substr(std::min(at, bytes.size()));
  if (rest.size() < k_skippable_header || load_u32(rest, 0) != magic) {
    return std::nullopt;
  }
  const std::uint32_t size = load_u32(rest, 4);
  if (size > max || rest.size() - k_skippable_header < size) {
    return std::nullopt;
  }
  return rest.substr(k_skippable_header, size);
}

// The head's bytes when `bytes` starts with nvfresh's skippable frame, else nullopt.
std::optional<std::string_view> head_frame(std::string_view bytes)
{
  return skippable_at(bytes, 0, k_skippable_magic, k_max_head);
}

void append_skippable(std::string& out, std::uint32_t magic, std::string_view content)
{
  const auto size = static_cast<std::uint32_t>(content.size());
  out.append(reinterpret_cast<const char*>(&magic), 4);
  out.append(reinterpret_cast<const char*>(&size), 4);
  out.append(content);
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

// Where the text starts: after the head, when there is one.
std::size_t text_start(std::string_view bytes)
{
  auto head = head_frame(bytes);
  return head ? k_skippable_header + head->size() : 0;
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

// Where the compressed text of `bytes` ends (after the head); nullopt when there is none.
std::optional<std::size_t> text_frame_end(std::string_view bytes)
{
  const auto frames = text_frames(bytes, text_start(bytes));
  if (frames.empty()) {
    return std::nullopt;
  }
  return frames.back().offset + frames.back().size;
}

// What follows a file's text frames: the image frame right after them, if there is one, and where
// a note goes (after the image).
struct TextTail {
  std::size_t text_end = 0;
  std::optional<std::string_view> image_frame;  // its content
  std::size_t note_start = 0;
};

// nullopt when `bytes` have no compressed text.
std::optional<TextTail> text_tail(std::string_view bytes)
{
  const auto end = text_frame_end(bytes);
  if (!end) {
    return std::nullopt;
  }
  TextTail tail{*end, skippable_at(bytes, *end, k_image_magic, UINT32_MAX), *end};
  if (tail.image_frame) {
    tail.note_start += k_skippable_header + tail.image_frame->size();
  }
  return tail;
}

// The note that ends `bytes` at `at` (nullopt when other bytes are there, or none).
std::optional<std::string_view> note_frame(std::string_view bytes, std::size_t at)
{
  const auto note = skippable_at(bytes, at, k_note_magic, k_max_note);
  if (!note || at + k_skippable_header + note->size() != bytes.size()) {
    return std::nullopt;
  }
  return note;
}

// Whether `rest` (not empty) starts with the note's magic, or with as much of it as it holds.
bool begins_as_note(std::string_view rest)
{
  const std::uint32_t magic = k_note_magic;
  const std::size_t compared = std::min<std::size_t>(rest.size(), sizeof magic);
  return std::memcmp(rest.data(), &magic, compared) == 0;
}

std::uint64_t load_u64(std::string_view bytes, std::size_t at)
{
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
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

// The note frame written over the old one at `note_start`, the file cut after it: true when done,
// false (nothing written) when `path` is no longer the file `read_from` describes, or is a symlink
// (O_NOFOLLOW: a note is never written into a file outside the tree through a link; the caller
// then writes the whole file anew at `path`, which replaces the link). Throws when a write fails
// (the note may then be torn: readers find none).
bool overwrite_note(const std::string& path, const FileStat& read_from, std::size_t note_start,
                    std::string_view frame)
{
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return false;
  }
  struct stat st {};
  const bool same_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
                         static_cast<std::uint64_t>(st.st_ino) == read_from.inode &&
                         static_cast<std::uint64_t>(st.st_dev) == read_from.device &&
                         static_cast<std::uint64_t>(st.st_size) >= note_start;
  if (!same_file) {
    ::close(fd);
    return false;
  }
  const std::size_t end = note_start + frame.size();
  const bool written =
    pwrite_all(fd, frame, note_start) && (static_cast<std::uint64_t>(st.st_size) <= end ||
                                          ::ftruncate(fd, static_cast<off_t>(end)) == 0);
  const int error = errno;
  if (::close(fd) != 0 || !written) {
    throw FileWriteError(path, written ? errno : error);
  }
  return true;
}

}  // namespace

bool has_compressed_text(std::string_view bytes)
{
  return text_frame_end(bytes).has_value();
}

std::optional<std::string> compressed_file_note(std::string_view bytes)
{
  const auto tail = text_tail(bytes);
  if (!tail) {
    return std::nullopt;
  }
  const auto note = note_frame(bytes, tail->note_start);
  return note ? std::optional<std::string>(std::string(*note)) : std::nullopt;
}

void write_compressed_file_note(const std::string& path, std::string_view stored,
                                std::string_view note, const FileStat& read_from)
{
  const auto tail = text_tail(stored);
  if (!tail || note.size() > k_max_note) {
    throw std::runtime_error(fmt::format("cannot add a note to {}: not a compressed file", path));
  }
  std::string frame;
  append_skippable(frame, k_note_magic, note);
  if (read_from.inode != 0 && overwrite_note(path, read_from, tail->note_start, frame)) {
    return;
  }
  std::string packed(stored.substr(0, tail->note_start));
  packed += frame;
  write_file_atomically(path, packed);
}

std::optional<std::string> compressed_file_image(std::string_view bytes)
{
  const auto tail = text_tail(bytes);
  if (!tail || !tail->image_frame || tail->image_frame->size() < k_image_prefix) {
    return std::nullopt;
  }
  // Bytes after it that begin as a note does but are no whole note are one torn while it was
  // written over the old one (write_compressed_file_note): the image stands, without a note
  // (compressed_file_note: none). Other bytes there: read as the text is (unreadable).
  if (tail->note_start != bytes.size() && !note_frame(bytes, tail->note_start) &&
      !begins_as_note(bytes.substr(tail->note_start))) {
    return std::nullopt;
  }
  const std::string_view frame = *tail->image_frame;
  const std::size_t start = text_start(bytes);
  const std::string_view hashed = frame.substr(k_image_hashes);
  if (load_u64(frame, 0) != XXH3_64bits(bytes.data() + start, tail->text_end - start) ||
      load_u64(frame, 8) != XXH3_64bits(hashed.data(), hashed.size())) {
    return std::nullopt;
  }
  const std::uint32_t size = load_u32(frame, k_image_hashes);
  const std::string_view block = frame.substr(k_image_prefix);
  if (size > k_max_image || block.size() > static_cast<std::size_t>(INT32_MAX)) {
    return std::nullopt;
  }
  std::string image(size, '\0');
  const int got = LZ4_decompress_safe(block.data(), image.data(), static_cast<int>(block.size()),
                                      static_cast<int>(size));
  if (got < 0 || static_cast<std::uint32_t>(got) != size) {
    return std::nullopt;
  }
  return image;
}

void write_compressed_file(const std::string& path, std::string_view text, std::string_view head,
                           std::size_t frames, std::string_view image)
{
  std::string packed;
  if (!head.empty()) {
    append_skippable(packed, k_skippable_magic, head.substr(0, k_max_head));
  }
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!context) {
    throw std::bad_alloc();
  }
  for (std::string_view piece : text_pieces(text, frames)) {
    const std::size_t start = packed.size();
    packed.resize(start + ZSTD_compressBound(piece.size()));
    const size_t size =
      ZSTD_compressCCtx(context.get(), packed.data() + start, packed.size() - start, piece.data(),
                        piece.size(), k_level);
    if (ZSTD_isError(size) != 0) {
      throw std::runtime_error(
        fmt::format("cannot compress {}: {}", path, ZSTD_getErrorName(size)));
    }
    packed.resize(start + size);
  }
  if (!image.empty() && image.size() <= k_max_image) {
    std::string content(k_image_prefix, '\0');
    const auto size = static_cast<std::uint32_t>(image.size());
    std::memcpy(content.data() + k_image_hashes, &size, sizeof size);
    content.resize(k_image_prefix +
                   static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(size))));
    const int packed_size =
      LZ4_compress_default(image.data(), content.data() + k_image_prefix, static_cast<int>(size),
                           static_cast<int>(content.size() - k_image_prefix));
    if (packed_size > 0) {
      content.resize(k_image_prefix + static_cast<std::size_t>(packed_size));
      const std::size_t start = text_start(packed);
      const std::uint64_t hashes[] = {
        XXH3_64bits(packed.data() + start, packed.size() - start),
        XXH3_64bits(content.data() + k_image_hashes, content.size() - k_image_hashes)};
      std::memcpy(content.data(), hashes, sizeof hashes);
      append_skippable(packed, k_image_magic, content);
    }
  }
  write_file_atomically(path, packed);
}

std::optional<std::string> read_compressed_file_head(const std::string& path)
{
  auto bytes = try_read_file_prefix(path, k_skippable_header + k_max_head);
  if (!bytes) {
    return std::nullopt;
  }
  auto head = head_frame(*bytes);
  return head ? std::optional<std::string>(std::string(*head)) : std::nullopt;
}

std::string decompress_if_compressed(std::string bytes, const std::string& what,
                                     unsigned long long max_text, std::size_t threads)
{
  const std::size_t start = text_start(bytes);
  if (start > 0 && !starts_with_zstd_magic(std::string_view(bytes).substr(start))) {
    throw CompressedFileError(fmt::format("{} has a head but no compressed text: truncated", what));
  }
  if (!starts_with_zstd_magic(std::string_view(bytes).substr(start))) {
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

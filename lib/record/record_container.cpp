#include "record/record_container.hpp"

#include "util/compressed_file.hpp"
#include "util/file_io.hpp"

#include <fmt/format.h>
#include <lz4.h>
#include <xxhash.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace nvfresh {

namespace {

constexpr std::uint32_t k_skippable_magic = 0x184D2A50;  // the first of zstd's 16 skippable magics
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

std::uint32_t load_u32(std::string_view bytes, std::size_t at)
{
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);  // little-endian, as zstd writes it
  return value;
}

// The head's bytes when `bytes` starts with nvfresh's skippable frame, else nullopt.
std::optional<std::string_view> head_frame(std::string_view bytes)
{
  return skippable_frame_at(bytes, 0, k_skippable_magic, k_max_head);
}

// Where the text starts: after the head, when there is one.
std::size_t text_start(std::string_view bytes)
{
  auto head = head_frame(bytes);
  return head ? k_skippable_frame_header + head->size() : 0;
}

// Where the compressed text of `bytes` ends (after the head); nullopt when there is none.
std::optional<std::size_t> text_frame_end(std::string_view bytes)
{
  return zstd_frames_end(bytes, text_start(bytes));
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
  TextTail tail{*end, skippable_frame_at(bytes, *end, k_image_magic, UINT32_MAX), *end};
  if (tail.image_frame) {
    tail.note_start += k_skippable_frame_header + tail.image_frame->size();
  }
  return tail;
}

// The note that ends `bytes` at `at` (nullopt when other bytes are there, or none).
std::optional<std::string_view> note_frame(std::string_view bytes, std::size_t at)
{
  const auto note = skippable_frame_at(bytes, at, k_note_magic, k_max_note);
  if (!note || at + k_skippable_frame_header + note->size() != bytes.size()) {
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

bool has_record_container_text(std::string_view bytes)
{
  return text_frame_end(bytes).has_value();
}

std::optional<std::string> record_container_note(std::string_view bytes)
{
  const auto tail = text_tail(bytes);
  if (!tail) {
    return std::nullopt;
  }
  const auto note = note_frame(bytes, tail->note_start);
  return note ? std::optional<std::string>(std::string(*note)) : std::nullopt;
}

void write_record_container_note(const std::string& path, std::string_view stored,
                                 std::string_view note, const FileStat& read_from)
{
  const auto tail = text_tail(stored);
  if (!tail || note.size() > k_max_note) {
    throw std::runtime_error(fmt::format("cannot add a note to {}: not a compressed file", path));
  }
  std::string frame;
  append_skippable_frame(frame, k_note_magic, note);
  if (read_from.inode != 0 && overwrite_note(path, read_from, tail->note_start, frame)) {
    return;
  }
  std::string packed(stored.substr(0, tail->note_start));
  packed += frame;
  write_file_atomically(path, packed);
}

std::optional<std::string> record_container_image(std::string_view bytes)
{
  const auto tail = text_tail(bytes);
  if (!tail || !tail->image_frame || tail->image_frame->size() < k_image_prefix) {
    return std::nullopt;
  }
  // Bytes after it that begin as a note does but are no whole note are one torn while it was
  // written over the old one (write_record_container_note): the image stands, without a note
  // (record_container_note: none). Other bytes there: read as the text is (unreadable).
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

void write_record_container(const std::string& path, std::string_view text, std::string_view head,
                            std::size_t frames, std::string_view image, Compression effort)
{
  std::string packed;
  if (!head.empty()) {
    append_skippable_frame(packed, k_skippable_magic, head.substr(0, k_max_head));
  }
  packed += compress_text(text, frames, path, effort);
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
      append_skippable_frame(packed, k_image_magic, content);
    }
  }
  write_file_atomically(path, packed);
}

std::optional<std::string> read_record_container_head(const std::string& path)
{
  auto bytes = try_read_file_prefix(path, k_skippable_frame_header + k_max_head);
  if (!bytes) {
    return std::nullopt;
  }
  auto head = head_frame(*bytes);
  return head ? std::optional<std::string>(std::string(*head)) : std::nullopt;
}

std::string record_container_text(std::string bytes, const std::string& what,
                                  unsigned long long max_text, std::size_t threads)
{
  const std::size_t start = text_start(bytes);
  if (start > 0 && !starts_with_zstd_frame(std::string_view(bytes).substr(start))) {
    throw CompressedFileError(fmt::format("{} has a head but no compressed text: truncated", what));
  }
  return decompress_if_compressed(std::move(bytes), what, max_text, threads, start);
}

}  // namespace nvfresh

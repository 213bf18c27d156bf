#include "util/compressed_file.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <new>

namespace nvfresh {

namespace {

constexpr int k_level = 3;  // fast, and 7x smaller on records
constexpr unsigned char k_zstd_magic[] = {0x28, 0xB5, 0x2F, 0xFD};
constexpr unsigned long long k_max_text =
  256ULL << 20;  // 256 MiB: far beyond any record (a CUTLASS one is 0.6 MB)

bool is_zstd_frame(const std::string& bytes)
{
  return bytes.size() >= sizeof k_zstd_magic &&
         std::memcmp(bytes.data(), k_zstd_magic, sizeof k_zstd_magic) == 0;
}

}  // namespace

void write_compressed_file(const std::string& path, std::string_view text)
{
  std::string packed(ZSTD_compressBound(text.size()), '\0');
  const size_t size =
    ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), k_level);
  if (ZSTD_isError(size) != 0) {
    throw std::runtime_error(fmt::format("cannot compress {}: {}", path, ZSTD_getErrorName(size)));
  }
  packed.resize(size);
  write_file_atomically(path, packed);
}

std::string decompress_if_compressed(std::string bytes, const std::string& what)
{
  if (!is_zstd_frame(bytes)) {
    return bytes;
  }
  // One context per thread: check loads thousands of records on several threads.
  thread_local std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(),
                                                                            &ZSTD_freeDCtx);
  if (!context) {
    throw std::bad_alloc();
  }
  const unsigned long long size = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR && size > k_max_text) {
    throw CompressedFileError(fmt::format("{} claims {} bytes of text: corrupt", what, size));
  }
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR) {
    std::string text(size, '\0');  // the frames nvfresh writes: their size is known, one pass
    const size_t got =
      ZSTD_decompressDCtx(context.get(), text.data(), text.size(), bytes.data(), bytes.size());
    if (ZSTD_isError(got) != 0 || got != size) {
      throw CompressedFileError(
        fmt::format("{} does not decompress ({}): truncated or corrupt", what,
                    ZSTD_isError(got) != 0 ? ZSTD_getErrorName(got) : "short"));
    }
    return text;
  }
  // Streamed, so that a frame without its content size (the zstd tool writing from a pipe) reads
  // as well as the ones nvfresh writes.
  ZSTD_DCtx_reset(context.get(), ZSTD_reset_session_only);
  std::string text;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  size_t remaining = 1;
  while (in.pos < in.size && remaining != 0) {
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    remaining = ZSTD_decompressStream(context.get(), &out, &in);
    if (ZSTD_isError(remaining) != 0) {
      throw CompressedFileError(fmt::format("{} does not decompress ({}): truncated or corrupt",
                                            what, ZSTD_getErrorName(remaining)));
    }
    text.append(chunk.data(), out.pos);
    if (text.size() > k_max_text) {
      throw CompressedFileError(fmt::format("{} decompresses to more than 256 MiB: corrupt", what));
    }
  }
  if (remaining != 0 || in.pos != in.size) {
    throw CompressedFileError(
      fmt::format("{} is not one complete zstd frame: truncated or corrupt", what));
  }
  return text;
}

std::optional<std::string> try_read_compressed_file(const std::string& path)
{
  auto bytes = try_read_file(path);
  if (!bytes) {
    return std::nullopt;
  }
  return decompress_if_compressed(std::move(*bytes), path);
}

}  // namespace nvfresh

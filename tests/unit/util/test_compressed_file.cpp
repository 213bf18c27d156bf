#include "util/compressed_file.hpp"

#include <catch2/catch.hpp>

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>

using namespace nvfresh;

TEST_CASE("a zstd frame without its content size (the zstd tool on a pipe) reads as well",
          "[compressed_file]")
{
  const std::string text(100000, 'r');
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 0);
  std::string packed(ZSTD_compressBound(text.size()), '\0');
  const size_t size =
    ZSTD_compress2(context.get(), packed.data(), packed.size(), text.data(), text.size());
  REQUIRE(ZSTD_isError(size) == 0);
  packed.resize(size);
  REQUIRE(ZSTD_getFrameContentSize(packed.data(), packed.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  CHECK(decompress_if_compressed(packed, "piped.rec") == text);
  CHECK_THROWS_AS(decompress_if_compressed(packed.substr(0, size - 3), "piped.rec"),
                  CompressedFileError);
}

TEST_CASE("frames without their sizes, a note after them: streamed frame after frame",
          "[compressed_file]")
{
  // What the zstd tool writes from a pipe (no content size), twice, then a skippable frame.
  auto unsized_frame = [](const std::string& text) {
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
    ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 0);
    std::string out(ZSTD_compressBound(text.size()) + 64, '\0');
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    ZSTD_inBuffer input{text.data(), text.size(), 0};
    REQUIRE(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_end) == 0);
    out.resize(output.pos);
    REQUIRE(ZSTD_getFrameContentSize(out.data(), out.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
    return out;
  };
  std::string first(300 * 1024, 'a');
  std::string second = "second piece\n";
  const std::string note = std::string("\x51\x2A\x4D\x18\x03\x00\x00\x00", 8) + "abc";
  const std::string bytes = unsized_frame(first) + unsized_frame(second) + note;
  CHECK(decompress_if_compressed(bytes, "x") == first + second);
  CHECK_THROWS_AS(decompress_if_compressed(bytes.substr(0, bytes.size() - note.size() - 3), "x"),
                  CompressedFileError);
  CHECK_THROWS_AS(decompress_if_compressed(bytes + "junk", "x"), CompressedFileError);
  // a bound on the text holds while streaming
  CHECK_THROWS_AS(decompress_if_compressed(bytes, "x", 100 * 1024), CompressedFileError);
}

TEST_CASE("a frame that claims more than its blocks can hold is corrupt, not allocated",
          "[compressed_file]")
{
  // "abc" in a frame whose header then claims 3 GB (an 8-byte size field in place of its 1-byte
  // one): its one block decompresses to 128 KB at most.
  std::string frame(ZSTD_compressBound(3), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), "abc", 3, 1));
  REQUIRE(static_cast<unsigned char>(frame[4]) == 0x20);  // single segment, 1-byte size
  std::string claimed = frame.substr(0, 4) + '\xE0';      // single segment, 8-byte size
  const std::uint64_t size = 3'000'000'000ULL;
  claimed.append(reinterpret_cast<const char*>(&size), sizeof size);
  claimed += frame.substr(6);
  REQUIRE(ZSTD_getFrameContentSize(claimed.data(), claimed.size()) == size);
  CHECK_THROWS_WITH(decompress_if_compressed(claimed, "x", 8ULL << 30),
                    Catch::Contains("claims 3000000000 bytes"));
  CHECK(decompress_if_compressed(frame, "x") == "abc");
}

TEST_CASE("a big text is cut at line ends into frames that read back whole", "[compressed_file]")
{
  std::string text;
  for (int i = 0; text.size() < 400 * 1024; ++i) {
    text += "line " + std::to_string(i) + "\n";
  }
  const std::string one = compress_text(text, 1, "x");
  const std::string four = compress_text(text, 4, "x");
  CHECK(zstd_frames_end(one, 0) == one.size());
  CHECK(zstd_frames_end(four, 0) == four.size());
  std::size_t frames = 0;
  for (std::size_t at = 0; at < four.size(); ++frames) {
    at += ZSTD_findFrameCompressedSize(four.data() + at, four.size() - at);
  }
  CHECK(frames == 4);
  CHECK(decompress_if_compressed(four, "x", k_default_max_text, 4) == text);
  CHECK(decompress_if_compressed(one, "x") == text);
  CHECK(compress_text("short\n", 4, "x").size() < 64);  // a small text: one frame
  CHECK_FALSE(zstd_frames_end("plain text", 0));
}

TEST_CASE("the faster compression reads back whole, in frames as the smaller one",
          "[compressed_file]")
{
  std::string text;
  for (int i = 0; text.size() < 300 * 1024; ++i) {
    text += "input\theader\t" + std::to_string(i * 7919) + "\t/usr/include/path/" +
            std::to_string(i) + ".h\n";
  }
  const std::string smaller = compress_text(text, 4, "x", Compression::smaller);
  const std::string faster = compress_text(text, 4, "x", Compression::faster);
  CHECK(faster != smaller);  // another level, not the same frames
  CHECK(faster.size() < text.size() / 2);
  CHECK(zstd_frames_end(faster, 0) == faster.size());
  CHECK(decompress_if_compressed(faster, "x", k_default_max_text, 4) == text);
  CHECK(decompress_if_compressed(faster, "x") == text);
}

TEST_CASE("skippable frames are found by their magic and passed over before and after a text",
          "[compressed_file]")
{
  const std::uint32_t magic = 0x184D2A5F;
  std::string bytes;
  append_skippable_frame(bytes, magic, "before");
  const std::size_t start = bytes.size();
  bytes += compress_text("the text\n", 1, "x");
  const std::size_t end = *zstd_frames_end(bytes, start);
  append_skippable_frame(bytes, magic, "after");
  CHECK(skippable_frame_at(bytes, 0, magic, 64) == "before");
  CHECK_FALSE(skippable_frame_at(bytes, 0, magic, 5));       // bigger than allowed
  CHECK_FALSE(skippable_frame_at(bytes, 0, magic + 1, 64));  // another magic
  CHECK(skippable_frame_at(bytes, end, magic, 64) == "after");
  CHECK_FALSE(skippable_frame_at(bytes.substr(0, bytes.size() - 1), end, magic, 64));  // torn
  CHECK(starts_with_zstd_frame(std::string_view(bytes).substr(start)));
  CHECK(decompress_if_compressed(bytes, "x", k_default_max_text, 1, start) == "the text\n");
}

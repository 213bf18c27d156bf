// libFuzzer target for lib/record/link_record.cpp: a link record file (zstd frame or plain text).
// parse_link_record must never crash or throw, and a link record it accepts must survive
// serialize_link_record -> parse_link_record unchanged. The input is parsed as it is, and once
// more sealed with its checksum (fuzz_support.hpp), so that mutations reach the lines behind it.
// Seeds: tests/fuzz/corpus/link_record (link records of real CMake builds, decompressed).
#include "fuzz_support.hpp"
#include "record/link_record.hpp"
#include "util/compressed_file.hpp"

#include <optional>
#include <string>

namespace {

void check_round_trip(const std::string& text)
{
  const std::optional<nvfresh::LinkRecord> record = nvfresh::parse_link_record(text);
  if (!record) {
    return;
  }
  const std::string written = nvfresh::serialize_link_record(*record);
  std::string error;
  const std::optional<nvfresh::LinkRecord> again = nvfresh::parse_link_record(written, &error);
  if (!again) {
    std::fprintf(stderr, "re-parse failed: %s\n", error.c_str());
    nvfresh::fuzz::fail("an accepted link record, serialized again, must parse");
  }
  if (!(*again == *record)) {
    nvfresh::fuzz::fail("parse(serialize(link record)) must equal the link record");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::string text;
  try {
    text = nvfresh::decompress_if_compressed(std::string(nvfresh::fuzz::as_text(data, size)),
                                             "fuzz input");
  } catch (const nvfresh::CompressedFileError&) {
    return 0;
  }
  check_round_trip(text);
  check_round_trip(nvfresh::fuzz::sealed(text));
  return 0;
}

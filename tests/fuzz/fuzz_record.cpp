// libFuzzer target for lib/record/record_parse.cpp, record_image.cpp and the record loader
// (record/record_root.cpp): a record file as `check` and the next compile read it (a head frame,
// zstd frames and an image, or plain text), and the same bytes as an image.
// load_record must never crash or throw; a record it accepts must survive serialize_record ->
// parse_record (the second parse succeeds and serializes to the same text) and its image must read
// back as itself, and so must a head it reads. An image parse_record_image accepts must too. Plain text is also parsed once more sealed with its checksum (fuzz_support.hpp), so that
// mutations reach the lines behind the checksum.
// Seeds: tests/fuzz/corpus/record (record bodies of nvcc 13.0 compiles, and whole record files).
#include "fuzz_support.hpp"
#include "record/record.hpp"
#include "record/record_image.hpp"
#include "record/record_root.hpp"

#include <optional>
#include <string>

namespace {

void check_round_trip(const std::string& text)
{
  const std::optional<nvfresh::Record> record = nvfresh::parse_record(text);
  if (!record) {
    return;
  }
  const std::string written = nvfresh::serialize_record(*record);
  std::string error;
  const std::optional<nvfresh::Record> again = nvfresh::parse_record(written, &error);
  if (!again) {
    std::fprintf(stderr, "re-parse failed: %s\n", error.c_str());
    nvfresh::fuzz::fail("an accepted record, serialized again, must parse");
  }
  if (nvfresh::serialize_record(*again) != written) {
    nvfresh::fuzz::fail("serialize(parse(serialize(record))) must equal serialize(record)");
  }
}

void check_image(const nvfresh::Record& record, std::string_view text_checksum)
{
  const std::string image = nvfresh::serialize_record_image(record, text_checksum);
  if (image.empty()) {
    return;  // a record whose text does not read back as itself has none
  }
  const auto read = nvfresh::parse_record_image(image);
  if (!read || read->record != record || read->text_checksum != text_checksum) {
    nvfresh::fuzz::fail("parse_record_image(serialize_record_image(record)) must be the record");
  }
}

void check_head(const std::optional<nvfresh::RecordHead>& head)
{
  if (head && nvfresh::parse_record_head(nvfresh::serialize_record_head(*head)) != head) {
    nvfresh::fuzz::fail("parse_record_head(serialize_record_head(head)) must equal the head");
  }
}

bool is_plain_text(std::string_view bytes)
{
  const bool zstd = bytes.starts_with("\x28\xB5\x2F\xFD");
  const bool skippable = bytes.size() >= 4 &&
                         (static_cast<unsigned char>(bytes[0]) & 0xF0) == 0x50 &&
                         bytes.substr(1, 3) == "\x2A\x4D\x18";  // the head's frame
  return !zstd && !skippable;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view bytes = nvfresh::fuzz::as_text(data, size);
  const std::string file = nvfresh::fuzz::ScratchDir::get().write("object.o-fuzz.rec", bytes);
  const nvfresh::LoadedRecord loaded = nvfresh::load_record(file);
  if (loaded.record) {
    const std::string text = nvfresh::serialize_record(*loaded.record);
    check_round_trip(text);
    check_image(*loaded.record, nvfresh::record_text_checksum(text));
  }
  if (const auto image = nvfresh::parse_record_image(bytes)) {
    check_image(image->record, image->text_checksum);
  }
  check_head(loaded.head);
  if (is_plain_text(bytes)) {
    check_round_trip(nvfresh::fuzz::sealed(bytes));
  }
  return 0;
}

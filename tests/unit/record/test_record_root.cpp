#include "record/record_container.hpp"
#include "record/record_image.hpp"
#include "record/record_root.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>

#include <sys/stat.h>

#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <memory>

using namespace nvfresh;

TEST_CASE("the record root is found from the build tree", "[record_root]")
{
  test::TempDir dir;
  dir.write("build/CMakeCache.txt", "");
  std::filesystem::create_directories(dir.path("build/sub/dir"));
  REQUIRE(find_record_root("", dir.path("build/sub/dir")) == dir.path("build/.nvfresh"));
  REQUIRE(find_record_root("", dir.path("build")) == dir.path("build/.nvfresh"));
  REQUIRE(find_record_root("/records", dir.path("build")) == "/records");
  REQUIRE(find_record_root("rel", dir.path("build")) == dir.path("build/rel"));
  REQUIRE(record_root_of_build_dir("", dir.path("build")) == dir.path("build/.nvfresh"));
}

TEST_CASE("record files are keyed by the canonical object path", "[record_root]")
{
  test::TempDir dir;
  std::filesystem::create_directories(dir.path("real/obj"));
  std::filesystem::create_directory_symlink(dir.path("real"), dir.path("link"));
  std::string via_link = canonical_object_path("obj/a.o", dir.path("link"));
  std::string via_real = canonical_object_path("obj/a.o", dir.path("real"));
  REQUIRE(via_link == via_real);
  std::string file = record_file_for("/state", via_real);
  REQUIRE(file.rfind("/state/records/a.o-", 0) == 0);
  REQUIRE(file.size() > std::string("/state/records/a.o-.rec").size());
  REQUIRE(record_file_for("/state", "/x/a.o") != record_file_for("/state", "/y/a.o"));
}

TEST_CASE("records are saved, listed, loaded and removed", "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/a.o";
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  REQUIRE(list_record_files(dir.path(".nvfresh")) == std::vector<std::string>{file});
  auto loaded = load_record(file);
  REQUIRE(loaded.record);
  REQUIRE(loaded.record->object == "/build/a.o");
  remove_record(file);
  REQUIRE(load_record(file).error == "missing");
  REQUIRE(list_record_files(dir.path("nowhere")).empty());
}

TEST_CASE("records are stored compressed; plain-text records of earlier versions still load",
          "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/big.o";
  for (int i = 0; i < 400; ++i) {
    record.depfile_prerequisites.push_back(
      "/usr/local/cuda/include/some/long/include/directory/header_" + std::to_string(i) + ".h");
  }
  const std::string text = serialize_record(record);
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string stored = nvfresh::read_file(file);
  CHECK(stored.size() * 4 < text.size());
  CHECK(stored.compare(0, 4, "\x50\x2A\x4D\x18") == 0);         // the head, a zstd skippable frame
  CHECK(stored.find("\x28\xB5\x2F\xFD") != std::string::npos);  // then one zstd frame
  REQUIRE(load_record(file).record);
  CHECK(load_record(file).record->depfile_prerequisites.size() == 400);

  nvfresh::write_file_atomically(file, text);  // as nvfresh 0.1 wrote it
  REQUIRE(load_record(file).record);
  CHECK(load_record(file).record->object == "/build/big.o");
}

TEST_CASE("a record saved with the faster compression loads as the same record, image and all",
          "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/hit.o";
  for (int i = 0; i < 400; ++i) {
    RecordedInput input;
    input.file = {"/src/include/header_" + std::to_string(i) + ".h",
                  hash_bytes(std::to_string(i)),
                  std::uint64_t(100 + i),
                  1000 + i,
                  2000 + i,
                  std::uint64_t(3000 + i)};
    record.inputs.push_back(input);
  }
  const std::string smaller_file = record_file_for(dir.path(".nvfresh"), "/build/smaller.o");
  const std::string faster_file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(smaller_file, record);
  save_record(faster_file, record, Compression::faster);
  const std::string faster = nvfresh::read_file(faster_file);
  CHECK(faster != nvfresh::read_file(smaller_file));
  CHECK(record_container_image(faster));  // the image is written, and matches the frames
  auto loaded = load_record(faster_file, true);
  REQUIRE(loaded.record);
  CHECK(serialize_record(*loaded.record) == serialize_record(record));
  CHECK(record_container_text(faster, faster_file) == serialize_record(record));
}

TEST_CASE("a truncated compressed record is unreadable, with a reason", "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/a.o";
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string stored = nvfresh::read_file(file);
  nvfresh::write_file_atomically(file, stored.substr(0, stored.size() / 2));
  auto loaded = load_record(file);
  CHECK_FALSE(loaded.record);
  CHECK_THAT(loaded.error, Catch::Contains("truncated or corrupt"));
  CHECK_THROWS_AS(record_container_text(read_file(file), file), CompressedFileError);
  CHECK(record_container_text("plain text", "x") == "plain text");
}

TEST_CASE("a torn record still names its object through its head; a forged head names nothing",
          "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/CMakeFiles/t.dir/src/tu2.cu.o";
  record.source = "/src/tu2.cu";
  for (int i = 0; i < 50; ++i) {
    record.depfile_prerequisites.push_back("/usr/include/h" + std::to_string(i) + ".h");
  }
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string stored = nvfresh::read_file(file);
  nvfresh::write_file_atomically(file, stored.substr(0, stored.size() - 40));
  auto torn = load_record(file);
  REQUIRE_FALSE(torn.record);
  REQUIRE(torn.head);
  CHECK(torn.head->object == record.object);
  CHECK(torn.head->source == record.source);

  std::string forged = stored;
  forged.replace(forged.find("tu2.cu.o"), 8, "tu9.cu.o");  // the head's checksum no longer holds
  nvfresh::write_file_atomically(file, forged.substr(0, forged.size() - 40));
  CHECK_FALSE(load_record(file).head);
  nvfresh::write_file_atomically(file, "x");
  CHECK_FALSE(load_record(file).head);
}

TEST_CASE("a record that is a FIFO, a directory or a dangling link is unreadable, never read",
          "[record_root]")
{
  test::TempDir dir;
  const std::string file = dir.path("r.rec");
  REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
  CHECK(load_record(file).error == "not a regular file");  // and it does not block
  std::filesystem::remove(file);
  std::filesystem::create_directory(file);
  CHECK(load_record(file).error == "not a regular file");
  std::filesystem::remove(file);
  std::filesystem::create_symlink(dir.path("nowhere"), file);
  CHECK(load_record(file).error == "a symbolic link to nothing");
  CHECK(load_record(dir.path("absent.rec")).error == "missing");
}

TEST_CASE("a skip's note changes the output stamp and the history, nothing else", "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/a.o";
  record.depfile_prerequisites = std::vector<std::string>(300, "/src/include/cfg.h");
  record.output = {record.object, hash_bytes("obj"), 100, 11, 12, 13};
  record.history = {{1, "compiled", "nvcc ran"}};
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string text_before = record_container_text(read_file(file), file);

  LoadedRecord loaded = load_record(file, /*keep_stored=*/true);
  REQUIRE(loaded.record);
  FileFingerprint output = record.output;
  output.mtime_ns = 77;
  std::vector<HistoryEntry> history = {{1, "compiled", "nvcc ran"}, {2, "skipped", "unchanged"}};
  save_record_note(loaded, output, history);

  // the text is not written again
  CHECK(record_container_text(read_file(file), file) == text_before);
  Record expected = record;
  expected.output = output;
  expected.history = history;
  REQUIRE(load_record(file).record == expected);

  SECTION("a second skip replaces the note")
  {
    history.push_back({3, "skipped", "unchanged"});
    save_record_note(load_record(file, true), output, history);
    CHECK(load_record(file).record->history.size() == 3);
  }
  SECTION("a whole save drops the note")
  {
    save_record(file, record);
    CHECK(load_record(file).record == record);
  }
  SECTION("a note that fails its checksum is ignored")
  {
    std::string bytes = *try_read_file(file);
    bytes[bytes.size() - 40] ^= 1;
    write_file_atomically(file, bytes);
    CHECK(load_record(file).record == record);
  }
  SECTION("a note for another text is ignored")
  {
    Record other = record;
    other.object = "/build/b.o";
    save_record(file, other);
    const LoadedRecord other_loaded = load_record(file, true);
    write_record_container_note(file, other_loaded.stored,
                                serialize_record_note({loaded.text_checksum, output, history}),
                                other_loaded.stored_from);
    CHECK(load_record(file).record == other);
  }
}

TEST_CASE("a skip's note is written over the old one, in the file it was loaded from",
          "[record_root]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/a.o";
  record.depfile_prerequisites = std::vector<std::string>(300, "/src/include/cfg.h");
  record.output = {record.object, hash_bytes("obj"), 100, 11, 12, 13};
  record.history = {{1, "compiled", std::string(600, 'n')}};
  const std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string written = *try_read_file(file);
  const FileStat before = stat_file(file);
  FileFingerprint output = record.output;
  output.mtime_ns = 77;

  SECTION("the same inode, its bytes before the note untouched, a shorter note cuts the file")
  {
    std::vector<HistoryEntry> history = {{1, "compiled", std::string(600, 'n')},
                                         {2, "skipped", "x"}};
    save_record_note(load_record(file, true), output, history);
    const std::string long_note = *try_read_file(file);
    CHECK(stat_file(file).inode == before.inode);
    CHECK(long_note.compare(0, written.size() - 8, written, 0, written.size() - 8) == 0);
    history = {{2, "skipped", "x"}};
    save_record_note(load_record(file, true), output, history);
    CHECK(stat_file(file).inode == before.inode);
    CHECK(stat_file(file).size < long_note.size());
    Record expected = record;
    expected.output = output;
    expected.history = history;
    CHECK(load_record(file).record == expected);
  }
  SECTION("a record replaced since it was loaded is not written into: the loaded one is saved")
  {
    const LoadedRecord loaded = load_record(file, true);
    Record other = record;
    other.object = "/build/other.o";
    save_record(file, other);
    const FileStat replaced = stat_file(file);
    save_record_note(loaded, output, {{2, "skipped", "x"}});
    CHECK(stat_file(file).inode != replaced.inode);
    REQUIRE(load_record(file).record);
    CHECK(load_record(file).record->object == record.object);
    CHECK(load_record(file).record->output == output);
  }
  SECTION("a symlinked record is not written through: the link becomes the tree's own file")
  {
    const std::string elsewhere = dir.path("elsewhere.rec");
    std::filesystem::rename(file, elsewhere);
    std::filesystem::create_symlink(elsewhere, file);
    save_record_note(load_record(file, true), output, {{2, "skipped", "x"}});
    CHECK(*try_read_file(elsewhere) == written);
    CHECK_FALSE(std::filesystem::is_symlink(file));
    REQUIRE(load_record(file).record);
    CHECK(load_record(file).record->output == output);
  }
  SECTION("a record with a second name (a hard link) is not written through it")
  {
    const std::string twin = dir.path("twin.rec");
    REQUIRE(::link(file.c_str(), twin.c_str()) == 0);
    save_record_note(load_record(file, true), output, {{2, "skipped", "x"}});
    CHECK(*try_read_file(twin) == written);
    CHECK(load_record(file).record->output == output);
  }
  SECTION("a note cut at any byte, or written over a longer one, is no note: the record reads as "
          "it was written")
  {
    FileFingerprint long_output = output;
    long_output.mtime_ns = 66;
    save_record_note(load_record(file, true), long_output,
                     {{1, "compiled", std::string(600, 'n')}, {2, "skipped", "x"}});
    const std::string long_note = *try_read_file(file);
    save_record_note(load_record(file, true), output, {{2, "skipped", "x"}});
    const std::string noted = *try_read_file(file);
    REQUIRE(noted.size() > written.size());
    for (size_t cut = written.size(); cut < noted.size(); cut += 7) {
      write_file_atomically(file, noted.substr(0, cut));
      const LoadedRecord reread = load_record(file);
      REQUIRE(reread.record);
      CHECK(reread.record->output == record.output);
    }
    for (size_t cut = written.size(); cut <= noted.size(); cut += 7) {
      std::string torn = noted.substr(0, cut) + long_note.substr(cut);  // not cut short yet
      write_file_atomically(file, torn);
      const LoadedRecord reread = load_record(file);
      REQUIRE(reread.record);
      const std::int64_t mtime = reread.record->output.mtime_ns;
      CHECK((mtime == record.output.mtime_ns || (cut == written.size() && mtime == 66)));
    }
  }
}

TEST_CASE("record notes parse only when intact", "[record]")
{
  RecordNote note{"00112233445566778899aabbccddeeff", {"/b/a.o", hash_bytes("o"), 1, 2, 3, 4}, {}};
  note.history = {{5, "skipped", "no input changed"}};
  const std::string text = serialize_record_note(note);
  CHECK(parse_record_note(text) == note);
  CHECK_FALSE(parse_record_note(text.substr(0, text.size() - 3)));
  std::string changed = text;
  changed[text.find("skipped")] = 'S';
  CHECK_FALSE(parse_record_note(changed));
}

namespace {

// A record of about 400 KB of text: written as several zstd frames.
Record big_record()
{
  Record record;
  record.object = "/build/CMakeFiles/fmha.dir/fmha.cu.o";
  record.source = "/src/fmha.cu";
  record.output = {record.object, hash_bytes("obj"), 100, 11, 12, 13};
  for (int i = 0; i < 4000; ++i) {
    record.depfile_prerequisites.push_back(
      "/usr/local/cuda/include/cutlass/gemm/warp/long/directory/header_" + std::to_string(i) +
      ".h");
  }
  return record;
}

// Where a record file's head frame ends: magic, then its size (< 64 KB: two bytes of it).
size_t head_end_of(const std::string& stored)
{
  return 8 + static_cast<unsigned char>(stored[4]) + (static_cast<unsigned char>(stored[5]) << 8);
}

struct TextFrames {
  size_t count = 0;
  size_t end = 0;  // where the last one ends
};

// The zstd frames of a record file (after its head), as libzstd walks them.
TextFrames text_frames_of(const std::string& stored)
{
  TextFrames frames;
  size_t at = head_end_of(stored);
  for (; at < stored.size() && stored.compare(at, 4, "\x28\xB5\x2F\xFD") == 0; ++frames.count) {
    const size_t size = ZSTD_findFrameCompressedSize(stored.data() + at, stored.size() - at);
    REQUIRE_FALSE(ZSTD_isError(size));
    at += size;
  }
  frames.end = at;
  return frames;
}

size_t zstd_frames_of(const std::string& stored)
{
  return text_frames_of(stored).count;
}

}  // namespace

TEST_CASE("a big record is several zstd frames, read whole by zstd and on threads by nvfresh",
          "[record_root]")
{
  test::TempDir dir;
  const Record record = big_record();
  const std::string text = serialize_record(record);
  REQUIRE(text.size() > 4 * 64 * 1024);
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string stored = nvfresh::read_file(file);
  CHECK(zstd_frames_of(stored) == 4);

  // libzstd (and with it `zstd -dc`) gives the text of the frames one after the other: the text.
  const size_t head =
    8 + static_cast<unsigned char>(stored[4]) + (static_cast<unsigned char>(stored[5]) << 8);
  std::string whole(text.size() + 16, '\0');
  const size_t got =
    ZSTD_decompress(whole.data(), whole.size(), stored.data() + head, stored.size() - head);
  REQUIRE_FALSE(ZSTD_isError(got));
  whole.resize(got);
  CHECK(whole == text);

  for (size_t threads : {size_t{1}, size_t{4}}) {
    CHECK(record_container_text(stored, file, k_default_max_text, threads) == text);
    CHECK(load_record(file, false, threads).record == record);
  }

  SECTION("a note after the frames applies")
  {
    LoadedRecord loaded = load_record(file, /*keep_stored=*/true, 4);
    FileFingerprint output = record.output;
    output.mtime_ns = 77;
    save_record_note(loaded, output, {{2, "skipped", "unchanged"}});
    CHECK(record_container_text(read_file(file), file) == text);
    auto noted = load_record(file, false, 4);
    REQUIRE(noted.record);
    CHECK(noted.record->output.mtime_ns == 77);
  }
  SECTION("torn in its last frame: unreadable, its head still names the object")
  {
    write_file_atomically(file, stored.substr(0, text_frames_of(stored).end - 100));
    auto torn = load_record(file, false, 4);
    CHECK_FALSE(torn.record);
    CHECK_THAT(torn.error, Catch::Contains("truncated or corrupt"));
    REQUIRE(torn.head);
    CHECK(torn.head->object == record.object);
  }
  SECTION("bytes after the frames that are no frame: unreadable")
  {
    write_file_atomically(file, stored + "garbage!");
    CHECK_FALSE(load_record(file, false, 4).record);
    CHECK_FALSE(load_record(file, false, 1).record);
  }
  SECTION("a frame damaged inside: unreadable, although its image is intact")
  {
    std::string damaged = stored;
    damaged[(head_end_of(stored) + text_frames_of(stored).end) / 2] ^= 0x55;
    write_file_atomically(file, damaged);
    CHECK_FALSE(load_record(file, false, 4).record);
  }
}

TEST_CASE("a record file holds its image after the text, read in place of the text",
          "[record_root]")
{
  test::TempDir dir;
  const Record record = big_record();
  const std::string text = serialize_record(record);
  const std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  const std::string stored = nvfresh::read_file(file);
  const TextFrames frames = text_frames_of(stored);
  REQUIRE(frames.end < stored.size());  // the image's frame follows the text's
  const auto image = record_container_image(stored);
  REQUIRE(image);
  CHECK(*image == serialize_record_image(record, record_text_checksum(text)));
  // zstd -dc: the text, as without an image
  CHECK(record_container_text(read_file(file), file) == text);

  // What the loader returns comes from the image: written with another record's image, the file
  // reads as that record (nvfresh writes both from one Record; this only shows which is read).
  Record other = record;
  other.object = "/elsewhere/other.o";
  write_record_container(file, text, serialize_record_head({record.object, record.source}), 4,
                         serialize_record_image(other, record_text_checksum(text)));
  CHECK(load_record(file).record == other);

  SECTION("an image damaged in one byte is not used: the text is read")
  {
    std::string damaged = stored;
    damaged[(frames.end + stored.size()) / 2] ^= 0x55;
    CHECK_FALSE(record_container_image(damaged));
    write_file_atomically(file, damaged);
    CHECK(load_record(file).record == record);
  }
  SECTION("text frames other than those the image was made with: the image is not used")
  {
    Record changed = record;
    changed.working_dir = "/changed";
    save_record(file, changed);
    std::string rewritten = read_file(file);
    // the changed text's frames, then the image of the original record
    rewritten = rewritten.substr(0, text_frames_of(rewritten).end) + stored.substr(frames.end);
    CHECK_FALSE(record_container_image(rewritten));
    write_file_atomically(file, rewritten);
    CHECK(load_record(file).record == changed);
  }
  SECTION("a note after the image applies to the record read from the image; the image stays")
  {
    LoadedRecord loaded = load_record(file, /*keep_stored=*/true);
    REQUIRE(loaded.record == other);
    CHECK(loaded.text_checksum == record_text_checksum(text));
    FileFingerprint output = other.output;
    output.mtime_ns = 99;
    save_record_note(loaded, output, {{3, "skipped", "unchanged"}});
    const std::string noted = read_file(file);
    CHECK(record_container_image(noted));
    CHECK(record_container_text(read_file(file), file) == text);
    auto again = load_record(file);
    REQUIRE(again.record);
    CHECK(again.record->object == other.object);
    CHECK(again.record->output.mtime_ns == 99);
    CHECK(again.record->history == std::vector<HistoryEntry>{{3, "skipped", "unchanged"}});
  }
  SECTION("a small record has an image too")
  {
    Record small;
    small.object = "/b/a.o";
    save_record(file, small);
    CHECK(record_container_image(read_file(file)));
    CHECK(load_record(file).record == small);
  }
}

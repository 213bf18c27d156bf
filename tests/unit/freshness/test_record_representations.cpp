// One Record with every field set, through each way nvfresh stores it: the text (record_write.cpp,
// record_parse.cpp), the binary image (record_image.cpp), and the record index (record_index.cpp),
// which keeps what the freshness check needs. record_write.cpp's tripwire (sizeof(Record)) fails
// the build when a field is added, until the field is set here and every representation carries it.
#include "freshness/record_index.hpp"
#include "record/record.hpp"
#include "record/record_image.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;

// Every field of Record with a value that is not its default (the order of record.hpp).
Record every_field_set(const test::TempDir& dir)
{
  Record r;
  r.object = dir.path("build/k.o");
  r.source = dir.path("src/k.cu");
  r.working_dir = dir.path("build");
  r.compiler = "/usr/local/cuda/bin/nvcc";
  r.launcher_prefix = {"ccache"};
  r.signature_args = {"-x=cu", "-arch=sm_80", "-DTAB=a\tb"};
  r.env = {{"NVCC_APPEND_FLAGS", "-O2"}, {"PATH", "/usr/bin"}};
  r.signature = hash_bytes("signature");
  r.nvcc_version = "Cuda compilation tools, release 13.0, V13.0.88";
  r.inputs = {{{dir.path("src/k.cu"), hash_bytes("src"), 10, 1, 2, 3}, InputRole::source, {}},
              {{dir.path("src/k.h"), hash_bytes("h"), 20, 4, 5, 6}, InputRole::header, {"host"}},
              {{dir.path("opts.rsp"), hash_bytes("o"), 5, 7, 8, 9}, InputRole::options_file, {}},
              {{"/usr/bin/cicc", hash_bytes("cicc"), 30, 10, 11, 12}, InputRole::tool, {}}};
  r.probes = group_probes(
    {dir.path("src/first/cfg.h"), dir.path("src/gone/cfg.h"), dir.path("src/here/cfg.h")});
  r.probes.back().absent_under = dir.path("src");
  r.probe_dirs = {{dir.path("src/first"), 77, 2049, 13, 14}};
  r.inputs_from_trace = false;
  r.output = {r.object, hash_bytes("obj"), 100, 15, 16, 17};
  r.depfile_path = dir.path("build/k.o.d");
  r.depfile_target = "k.o";
  r.depfile_phony = true;
  r.start_ns = 1000;
  r.end_ns = 2000;
  r.pass_times = {{"cicc", "compute_80", 10, 900, false}, {"ptxas", "sm_80", 910, 990, true}};
  r.trusted = false;
  r.untrusted_reason = "k.h changed while the object compiled";
  r.history = {{2000, "raced", "k.h changed"}};
  r.console_mode = "separate";
  r.console_out = "out\n";
  r.console_err = "warning: x\n";
  r.console_terminals = "stderr";
  r.console_terminal_env = {{"TERM", "xterm"}};
  r.depfile_prerequisites = {"../src/k.cu", "../src/k.h"};
  r.components = {{"host code", hash_bytes("host")}};
  r.cache_entry = hash_bytes("entry");
  r.mtime_dependent = dir.path("src/k.cu") + " uses __TIMESTAMP__";
  return r;
}

}  // namespace

TEST_CASE("every field of a record is set by the test's record", "[record]")
{
  // Each field differs from a default Record's, so a representation that drops one is caught.
  test::TempDir dir;
  const Record r = every_field_set(dir);
  const Record d;
  CHECK(r.object != d.object);
  CHECK(r.source != d.source);
  CHECK(r.working_dir != d.working_dir);
  CHECK(r.compiler != d.compiler);
  CHECK(r.launcher_prefix != d.launcher_prefix);
  CHECK(r.signature_args != d.signature_args);
  CHECK(r.env != d.env);
  CHECK(r.signature != d.signature);
  CHECK(r.nvcc_version != d.nvcc_version);
  CHECK(r.inputs != d.inputs);
  CHECK(r.probes != d.probes);
  CHECK(r.probe_dirs != d.probe_dirs);
  CHECK(r.inputs_from_trace != d.inputs_from_trace);
  CHECK(r.output != d.output);
  CHECK(r.depfile_path != d.depfile_path);
  CHECK(r.depfile_target != d.depfile_target);
  CHECK(r.depfile_phony != d.depfile_phony);
  CHECK(r.start_ns != d.start_ns);
  CHECK(r.end_ns != d.end_ns);
  CHECK(r.pass_times != d.pass_times);
  CHECK(r.trusted != d.trusted);
  CHECK(r.untrusted_reason != d.untrusted_reason);
  CHECK(r.history != d.history);
  CHECK(r.console_mode != d.console_mode);
  CHECK(r.console_out != d.console_out);
  CHECK(r.console_err != d.console_err);
  CHECK(r.console_terminals != d.console_terminals);
  CHECK(r.console_terminal_env != d.console_terminal_env);
  CHECK(r.depfile_prerequisites != d.depfile_prerequisites);
  CHECK(r.components != d.components);
  CHECK(r.cache_entry != d.cache_entry);
  CHECK(r.mtime_dependent != d.mtime_dependent);
}

TEST_CASE("text, image and index each carry every field they hold", "[record]")
{
  test::TempDir dir;
  const Record record = every_field_set(dir);

  const std::string text = serialize_record(record);
  std::string error;
  const std::optional<Record> from_text = parse_record(text, &error);
  INFO(error);
  REQUIRE(from_text);
  CHECK(*from_text == record);

  const std::optional<RecordImage> from_image =
    parse_record_image(serialize_record_image(record, record_text_checksum(text)));
  REQUIRE(from_image);
  CHECK(from_image->record == record);
  CHECK(from_image->record == *from_text);

  // The index keeps only records judged fresh: trusted and traced ones.
  Record indexable = record;
  indexable.trusted = true;
  indexable.untrusted_reason.clear();
  indexable.inputs_from_trace = true;
  const std::string record_file = dir.write("build/.nvfresh/records/k.o-1.rec", "record text");
  std::filesystem::create_directories(dir.path("src/here"));  // exists, and no stamp vouches
  RecordIndex written;
  REQUIRE(written.add(record_file, stat_file(record_file), indexable, now_ns() + 10 * k_second,
                      2 * k_second));
  const std::string index_file = dir.path("build/.nvfresh/records.index");
  written.write(index_file, dir.path("build"));
  const RecordIndex index = RecordIndex::read(index_file, dir.path("build"));
  const IndexedRecord* entry = index.find(record_file, stat_file(record_file));
  REQUIRE(entry != nullptr);
  CHECK(index.path(entry->object) == record.object);
  CHECK(index.path(entry->source) == record.source);
  CHECK(entry->output_hash == record.output.hash);
  CHECK(entry->output_stamp.size == record.output.size);
  CHECK(entry->output_stamp.mtime_ns == record.output.mtime_ns);
  CHECK(entry->output_stamp.ctime_ns == record.output.ctime_ns);
  CHECK(entry->output_stamp.inode == record.output.inode);
  CHECK(entry->environment == environment_digest(record.env));
  REQUIRE(entry->inputs.size() == record.inputs.size());
  for (size_t i = 0; i < record.inputs.size(); ++i) {
    const IndexedStamp& stamp = index.stamp(entry->inputs[i]);
    const FileFingerprint& file = record.inputs[i].file;
    CHECK(index.path(stamp.path) == file.path);
    CHECK(stamp.size == file.size);
    CHECK(stamp.mtime_ns == file.mtime_ns);
    CHECK(stamp.ctime_ns == file.ctime_ns);
    CHECK(stamp.inode == file.inode);
  }
  // A stamped directory vouches with its stamp, one that does not exist with its absence; the
  // probes of one that exists unstamped are kept one by one.
  REQUIRE(entry->directories.size() == 2);
  const IndexedDirectory& stamped = index.directory(entry->directories[0]);
  CHECK(stamped.stamped);
  CHECK(index.path(stamped.path) == record.probe_dirs[0].path);
  CHECK(stamped.inode == record.probe_dirs[0].inode);
  CHECK(stamped.device == record.probe_dirs[0].device);
  CHECK(stamped.mtime_ns == record.probe_dirs[0].mtime_ns);
  CHECK(stamped.ctime_ns == record.probe_dirs[0].ctime_ns);
  const IndexedDirectory& gone = index.directory(entry->directories[1]);
  CHECK_FALSE(gone.stamped);
  CHECK(index.path(gone.path) == dir.path("src/gone"));
  REQUIRE(entry->absent.size() == 1);
  CHECK(index.path(entry->absent[0]) == dir.path("src/here/cfg.h"));
}

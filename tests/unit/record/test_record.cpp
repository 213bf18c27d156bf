#include "record/record.hpp"
#include "record/record_image.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>

using namespace nvfresh;

namespace {

Record sample_record()
{
  Record record;
  record.object = "/build/CMakeFiles/fmha.dir/fmha_sm80.cu.o";
  record.source = "/src/fmha sm80.cu";
  record.working_dir = "/build";
  record.compiler = "/usr/local/cuda/bin/nvcc";
  record.launcher_prefix = {"ccache"};
  record.signature_args = {"-x=cu", "-arch=sm_80", "-DNAME=a\tb", "--weird=line\nbreak\\"};
  record.env = {{"NVCC_APPEND_FLAGS", "-DX=1"}};
  record.signature = hash_bytes("signature");
  record.nvcc_version = "Cuda compilation tools, release 13.0, V13.0.88";
  record.inputs.push_back(
    {{"/src/fmha sm80.cu", hash_bytes("src"), 10, 1, 2, 3}, InputRole::source, {}});
  record.inputs.push_back({{"/src/kernel_forward.h", hash_bytes("h"), 20, 4, 5, 6},
                           InputRole::header,
                           {"compute_80", "host"}});
  record.inputs.push_back(
    {{"/cuda/nvvm/bin/cicc", hash_bytes("cicc"), 30, 7, 8, 9}, InputRole::tool, {}});
  record.probes = group_probes({"/src/include/cfg.h", "/src/include/has\ttab.h", "/root.h",
                                "relative/cfg.h", "/src/include/bits/x.h"});
  record.probes.back().absent_under = "/src/include";
  record.probe_dirs = {
    {"/src/include", 77, 2049, 1'700'000'000'000'000'000, 1'700'000'000'100'000'000}};
  record.output = {record.object, hash_bytes("obj"), 100, 11, 12, 13};
  record.depfile_path = "/build/fmha.d";
  record.depfile_target = "CMakeFiles/fmha.dir/fmha_sm80.cu.o";
  record.depfile_phony = true;
  record.start_ns = 1000;
  record.end_ns = 2000;
  record.trusted = false;
  record.untrusted_reason = "kernel_forward.h changed while the object compiled";
  record.history = {{2000, "raced", "kernel_forward.h changed"}};
  record.components = {{"host code", hash_bytes("host")}, {"sm_80 cubin", hash_bytes("cubin")}};
  record.cache_entry = hash_bytes("entry");
  record.console_mode = "combined";
  record.console_out = std::string("warning: x\r\n\tindented\0binary", 28);
  record.console_terminals = "stdout,stderr";
  record.console_terminal_env = {{"TERM", "xterm-256color"},
                                 {"GCC_COLORS", "error=01;31\twarning"}};
  record.depfile_prerequisites = {"fmha sm80.cu",
                                  "/usr/local/cuda/bin/../targets/x/cuda_runtime.h"};
  record.mtime_dependent = "/src/fmha sm80.cu uses __TIMESTAMP__\tand a tab";
  return record;
}

// The record text with another version in its header, its checksum line made anew.
std::string with_version(const std::string& text, const std::string& version)
{
  std::string changed = fmt::format("nvfresh-record\t{}", version) + text.substr(text.find('\n'));
  const size_t checksum_at = changed.rfind("checksum\t");
  changed.resize(checksum_at);
  return changed + fmt::format("checksum\t{}\n", hash_bytes(changed).to_hex());
}

}  // namespace

TEST_CASE("a record survives serialization unchanged", "[record]")
{
  Record record = sample_record();
  std::string text = serialize_record(record);
  std::string error;
  auto parsed = parse_record(text, &error);
  INFO(error);
  REQUIRE(parsed.has_value());
  REQUIRE(*parsed == record);
  REQUIRE(text.rfind(fmt::format("nvfresh-record\t{}\n", k_record_format_version), 0) == 0);
  CHECK(text.find("\nmtime_dependent\t/src/fmha sm80.cu uses __TIMESTAMP__\\tand a tab\n") !=
        std::string::npos);
  CHECK(serialize_record(Record{}).find("mtime_dependent") == std::string::npos);  // optional
}

TEST_CASE("probes are kept by the directory they were looked up in", "[record]")
{
  const std::vector<std::string> paths = {"/a/b/y.h", "rel/x.h", "/a/b/x.h", "/top.h",
                                          "/a/b.h",   "/a/b/",   "/a//c.h"};
  auto groups = group_probes(paths);
  REQUIRE(groups.size() == 5);
  CHECK(groups[0] == ProbeGroup{"", {"rel/x.h", "/a/b/"}, ""});  // not below a directory
  CHECK(groups[1] == ProbeGroup{"/", {"top.h"}, ""});
  CHECK(groups[2] == ProbeGroup{"/a", {"b.h"}, ""});
  CHECK(groups[3] == ProbeGroup{"/a/", {"c.h"}, ""});
  CHECK(groups[4] == ProbeGroup{"/a/b", {"y.h", "x.h"}, ""});  // in the order they came
  CHECK(probe_count(groups) == paths.size());
  std::vector<std::string> back = probe_paths(groups);
  std::vector<std::string> sorted_paths = paths;
  std::sort(back.begin(), back.end());
  std::sort(sorted_paths.begin(), sorted_paths.end());
  CHECK(back == sorted_paths);  // every path spelled as it was
}

TEST_CASE("a record written with one missing line per probe reads as probe groups", "[record]")
{
  Record record = sample_record();
  record.probes = group_probes({"/src/include/cfg.h", "/src/include/b.h", "/usr/include/c.h"});
  std::string text = serialize_record(record);
  const size_t start = text.find("probes\t");
  const size_t end = text.find("probe_dir\t");
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string old_text = text.substr(0, start) +
                         "missing\t/src/include/cfg.h\nmissing\t/src/include/b.h\n"
                         "missing\t/usr/include/c.h\n" +
                         text.substr(end, text.rfind("checksum\t") - end);
  old_text += "checksum\t" + hash_bytes(old_text).to_hex() + "\n";
  std::string error;
  auto parsed = parse_record(old_text, &error);
  INFO(error);
  REQUIRE(parsed);
  CHECK(*parsed == record);
}

namespace {

// The record's text with `probes_lines` in place of its probes lines, checksummed again.
std::string with_probes_lines(const Record& record, const std::string& probes_lines)
{
  std::string text = serialize_record(record);
  const size_t start = text.find("probes\t");
  const size_t end = text.find("probe_dir\t");
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string edited =
    text.substr(0, start) + probes_lines + text.substr(end, text.rfind("checksum\t") - end);
  edited += "checksum\t" + hash_bytes(edited).to_hex() + "\n";
  return edited;
}

}  // namespace

TEST_CASE("a probes line keeps every field it has, an empty last name too", "[record]")
{
  struct Case {
    std::string line;
    ProbeGroup group;
  };
  const std::vector<Case> cases = {
    {"probes\t/inc\t/\ta.h\t\n", {"/inc", {"a.h", ""}, "/"}},
    {"probes\t/inc\t\t\n", {"/inc", {""}, ""}},
    {"probes\t/inc\t\tb\\th\tc.h\n", {"/inc", {"b\th", "c.h"}, ""}},
  };
  Record record = sample_record();
  record.probes = group_probes({"/src/include/cfg.h"});
  for (const auto& [line, group] : cases) {
    std::string error;
    auto parsed = parse_record(with_probes_lines(record, line), &error);
    INFO(line << error);
    REQUIRE(parsed);
    CHECK(parsed->probes == std::vector<ProbeGroup>{group});
  }
}

TEST_CASE("a probes line without a name does not parse", "[record]")
{
  Record record = sample_record();
  record.probes = group_probes({"/src/include/cfg.h"});
  for (const char* line : {"probes\t/inc\t\n", "probes\t/inc\n", "probes\t/inc\tb\\x\ta.h\n"}) {
    std::string error;
    INFO(line);
    CHECK_FALSE(parse_record(with_probes_lines(record, line), &error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("an input line's numbers read back at their limits, and nothing else does", "[record]")
{
  Record record = sample_record();
  constexpr auto k_min = std::numeric_limits<std::int64_t>::min();
  constexpr auto k_max = std::numeric_limits<std::int64_t>::max();
  constexpr auto k_umax = std::numeric_limits<std::uint64_t>::max();
  record.inputs[0].file.size = k_umax;     // 20 digits
  record.inputs[0].file.mtime_ns = k_min;  // '-' and 19 digits
  record.inputs[0].file.ctime_ns = -1;     // the short way, negative
  record.inputs[0].file.inode =
    9'999'999'999'999'999'999ULL;          // 19 digits, the most it sums unchecked
  record.inputs[1].file.mtime_ns = k_max;  // 19 digits at the signed limit
  record.inputs[1].file.ctime_ns = 0;
  auto parsed = parse_record(serialize_record(record));
  REQUIRE(parsed);
  CHECK(*parsed == record);

  const std::string text = serialize_record(sample_record());
  const std::string line = "\t10\t1\t2\t3\t";  // the first input's size, mtime, ctime, inode
  REQUIRE(text.find(line) != std::string::npos);
  for (const char* fields :
       {"\t-10\t1\t2\t3\t", "\t+10\t1\t2\t3\t", "\t10\t1x\t2\t3\t", "\t10\t--1\t2\t3\t",
        "\t10\t-\t2\t3\t", "\t\t1\t2\t3\t", "\t10\t1\t2\t18446744073709551616\t",
        "\t10\t9223372036854775808\t2\t3\t"}) {
    std::string edited = text;
    edited.replace(edited.find(line), line.size(), fields);
    const size_t checksum = edited.rfind("checksum\t");
    edited = edited.substr(0, checksum);
    edited += "checksum\t" + hash_bytes(edited).to_hex() + "\n";
    INFO(fields);
    CHECK_FALSE(parse_record(edited));
  }
}

TEST_CASE("history keeps the newest entries up to the limit", "[record]")
{
  Record record;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(k_record_history_limit) + 5; ++i) {
    add_history(record, {i, "compiled", "nvcc ran"});
  }
  REQUIRE(record.history.size() == k_record_history_limit);
  REQUIRE(record.history.front().time_ns == 5);
  REQUIRE(record.history.back().time_ns == static_cast<std::int64_t>(k_record_history_limit) + 4);
}

TEST_CASE("an empty record round trips", "[record]")
{
  Record record;
  auto parsed = parse_record(serialize_record(record));
  REQUIRE(parsed.has_value());
  REQUIRE(*parsed == record);
}

TEST_CASE("damaged records are unreadable, never an exception", "[record]")
{
  std::string text = serialize_record(sample_record());
  std::string error;

  SECTION("truncated")
  {
    for (size_t length : {size_t(0), size_t(5), text.size() / 2, text.size() - 1}) {
      REQUIRE_FALSE(parse_record(text.substr(0, length), &error).has_value());
    }
  }
  SECTION("one byte flipped")
  {
    for (size_t at = 0; at < text.size(); at += 7) {
      std::string damaged = text;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
      REQUIRE_FALSE(parse_record(damaged, &error).has_value());
    }
  }
  SECTION("a version before the first or after this reader's, even resealed")
  {
    for (const char* version : {"0", "8", "99", "5x", ""}) {
      INFO(version);
      const std::string other = with_version(text, version);
      REQUIRE_FALSE(parse_record(other, &error).has_value());
      REQUIRE(error.find(fmt::format("format version {}", version)) != std::string::npos);
    }
  }
  SECTION("every version from the first on reads")
  {
    for (int version = k_oldest_readable_record_format_version; version <= k_record_format_version;
         ++version) {
      INFO(version);
      REQUIRE(parse_record(with_version(text, std::to_string(version)), &error).has_value());
    }
  }
  SECTION("appended garbage")
  {
    REQUIRE_FALSE(parse_record(text + "input\tjunk\n", &error).has_value());
  }
  SECTION("not a record")
  {
    REQUIRE_FALSE(parse_record("hello\n", &error).has_value());
    REQUIRE(error == "not an nvfresh record");
  }
}

namespace {

// A record the size of a CUTLASS TU's (1600 inputs, 400 probe groups, 1600 deps: over 300 KB of
// text), so that a parse on threads cuts it into several pieces.
Record big_record()
{
  Record record = sample_record();
  std::vector<std::string> probes;
  for (int i = 0; i < 1600; ++i) {
    record.inputs.push_back(
      {{fmt::format("/src/include/cutlass/gemm/warp/header_{:04}.h", i),
        hash_bytes(std::to_string(i)), 1000U + i, 2000 + i, 3000 + i, 4000U + i},
       InputRole::header,
       {"compute_80", "host", "sm_80"}});
    record.depfile_prerequisites.push_back(
      fmt::format("/src/include/cutlass/gemm/warp/header_{:04}.h", i));
    probes.push_back(fmt::format("/src/include/dir_{:03}/name_{:04}.h", i % 400, i));
  }
  record.probes = group_probes(probes);
  return record;
}

// `text` with `line` put in place of the line that starts at `at`, checksummed again.
std::string with_line_replaced(const std::string& text, size_t at, const std::string& line)
{
  const size_t end = text.find('\n', at) + 1;
  std::string edited = text.substr(0, at) + line + text.substr(end, text.rfind("checksum\t") - end);
  edited += "checksum\t" + hash_bytes(edited).to_hex() + "\n";
  return edited;
}

}  // namespace

TEST_CASE("a big record parsed on threads is the record parsed on one", "[record]")
{
  const Record record = big_record();
  const std::string text = serialize_record(record);
  REQUIRE(text.size() > 4 * 64 * 1024);  // four pieces and more
  for (size_t threads : {size_t{1}, size_t{2}, size_t{4}, size_t{16}}) {
    std::string error;
    auto parsed = parse_record(text, &error, threads);
    INFO(threads << " " << error);
    REQUIRE(parsed);
    CHECK(*parsed == record);
  }
}

TEST_CASE("a big record's first bad line is the error named, on threads as on one", "[record]")
{
  const std::string text = serialize_record(big_record());
  const size_t late_input = text.rfind("input\t");
  const size_t late_dep = text.rfind("dep\t");
  const size_t early_probes = text.find("probes\t");
  const size_t times = text.find("times\t");
  const size_t cwd = text.find("cwd\t");  // before the inputs
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
    // a bulky line in a late piece, and an other line after it: the bulky one is named
    {with_line_replaced(with_line_replaced(text, times, "times\tx\t1\n"), late_dep, "dep\ta\tb\n"),
     "'dep' has too many fields"},
    // an other line before a bad bulky line of a later piece: the other one is named
    {with_line_replaced(with_line_replaced(text, late_input, "input\tjunk\n"), cwd, "cwd\ta\tb\n"),
     "'cwd' has 2 fields, expected 1"},
    {with_line_replaced(text, early_probes, "probes\t/dir\n"), "'probes' has no name"},
    {with_line_replaced(text, times, "unknown_key\t1\n"), "unknown line 'unknown_key'"},
  };
  for (const auto& [damaged, expected] : cases) {
    std::string one_thread_error;
    REQUIRE_FALSE(parse_record(damaged, &one_thread_error, 1));
    for (size_t threads : {size_t{2}, size_t{4}}) {
      std::string error;
      REQUIRE_FALSE(parse_record(damaged, &error, threads));
      CHECK(error == one_thread_error);
    }
    INFO(one_thread_error);
    CHECK(one_thread_error.find(expected) != std::string::npos);
  }
}

TEST_CASE("a record's image reads back as the record, with the checksum of its text", "[record]")
{
  for (const Record& record : {sample_record(), big_record(), Record{}}) {
    const std::string text = serialize_record(record);
    const std::string image = serialize_record_image(record, record_text_checksum(text));
    REQUIRE_FALSE(image.empty());
    for (size_t threads : {1, 4}) {  // the probes decoded on a thread of their own, or not
      auto read = parse_record_image(image, threads);
      REQUIRE(read);
      CHECK(read->record == record);
      CHECK(read->text_checksum == record_text_checksum(text));
      CHECK(read->record == *parse_record(text));  // the image and the text say the same
    }
  }
}

TEST_CASE("an image keeps every number at its limits", "[record]")
{
  constexpr auto k_min = std::numeric_limits<std::int64_t>::min();
  constexpr auto k_max = std::numeric_limits<std::int64_t>::max();
  constexpr auto k_umax = std::numeric_limits<std::uint64_t>::max();
  Record record = sample_record();
  // times that jump between the limits from one input to the next, sizes and inodes at theirs
  for (std::int64_t time : {k_min, k_max, std::int64_t{0}, k_min, std::int64_t{-1}, k_max}) {
    record.inputs.push_back(
      {{"/i/" + std::to_string(time), hash_bytes("x"), k_umax, time, -time - 1, k_umax},
       InputRole::header,
       {}});
  }
  record.start_ns = k_min;
  record.end_ns = k_max;
  auto read = parse_record_image(serialize_record_image(record, "x"));
  REQUIRE(read);
  CHECK(read->record == record);
}

TEST_CASE("an image is much smaller than the text, its paths written once", "[record]")
{
  const Record record = big_record();
  const std::string text = serialize_record(record);
  // every dep is an input's path: written as the input's number
  CHECK(serialize_record_image(record, "x").size() * 2 < text.size());
}

TEST_CASE("what the text drops, the image drops: it reads back as the text does", "[record]")
{
  Record record = sample_record();
  record.depfile_path.clear();  // no depfile line: its target and -MP are not kept either
  const std::string text = serialize_record(record);
  auto read = parse_record_image(serialize_record_image(record, record_text_checksum(text)));
  REQUIRE(read);
  CHECK(read->record == *parse_record(text));
  CHECK(read->record.depfile_target.empty());
  CHECK_FALSE(read->record.depfile_phony);

  // A probe group without names has no text line that parses: such a record has no image.
  record.probes.push_back(ProbeGroup{"/empty", {}, ""});
  CHECK(serialize_record_image(record, "x").empty());
}

TEST_CASE("an image of the version before mtime_dependent reads as a record without it", "[record]")
{
  // The skip of a record written before version 4 of the image reads that image, not the text.
  Record record = sample_record();
  record.mtime_dependent.clear();
  std::string image = serialize_record_image(record, "checksum");
  REQUIRE(image.back() == '\0');  // version 3 ended before this: mtime_dependent's length, 0
  image.pop_back();
  image[image.find("image") + 5] = 3;
  auto read = parse_record_image(image);
  REQUIRE(read);
  CHECK(read->record == record);
  CHECK_FALSE(parse_record_image(image + std::string(1, '\0')));  // nothing follows in version 3
}

TEST_CASE("a damaged image is not an image, never an exception", "[record]")
{
  const std::string image = serialize_record_image(sample_record(), "checksum");
  for (size_t length = 0; length < image.size(); ++length) {
    INFO(length);
    REQUIRE_FALSE(parse_record_image(std::string_view(image).substr(0, length)));
  }
  CHECK_FALSE(parse_record_image(image + "x"));
  for (char version : {2, 5}) {  // the version after the magic: an older image, or a newer one
    std::string other_version = image;
    other_version[image.find("image") + 5] = version;
    CHECK_FALSE(parse_record_image(other_version));
  }
  // Flipped bytes give another record or none, never a crash (the frame's checksum catches them),
  // with the probes decoded on a thread of their own too.
  const std::string big = serialize_record_image(big_record(), "checksum");
  for (const std::string* bytes : {&image, &big}) {
    for (size_t at = 0; at < bytes->size(); at += bytes == &big ? 61 : 1) {
      std::string damaged = *bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ 0xFF);
      (void)parse_record_image(damaged);
      (void)parse_record_image(damaged, 4);
    }
    for (size_t length = 0; length < bytes->size(); length += bytes == &big ? 97 : 1) {
      REQUIRE_FALSE(parse_record_image(std::string_view(*bytes).substr(0, length), 4));
    }
  }
}

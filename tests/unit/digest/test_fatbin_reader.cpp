#include "digest/elf_reader.hpp"
#include "digest/fatbin_reader.hpp"
#include "digest_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using nvfresh::ElfReader;
using nvfresh::FatbinCompression;
using nvfresh::FatbinEntry;
using nvfresh::FatbinError;
using nvfresh::FatbinKind;
using nvfresh::read_fatbin;
using nvfresh::test::put_le;

namespace {

std::string fatbin_of(const std::string& object_name)
{
  const std::string bytes = nvfresh::test::load_object(object_name);
  const ElfReader elf(bytes, object_name);
  const auto sections = nvfresh::find_fatbin_sections(elf, object_name);
  REQUIRE(sections.size() == 1);
  return std::string(sections.front());
}

// A one-entry fatbin holding `payload` as plain PTX for compute_<arch>.
std::string synthetic_fatbin(const std::string& payload, std::uint32_t arch)
{
  const std::size_t padded = (payload.size() + 7) / 8 * 8;
  std::string bytes(16 + 64 + padded, '\0');
  put_le(bytes, 0, 0xBA55ED50, 4);
  put_le(bytes, 4, 1, 2);
  put_le(bytes, 6, 16, 2);
  put_le(bytes, 8, 64 + padded, 8);
  put_le(bytes, 16 + 0, 1, 2);       // kind: PTX
  put_le(bytes, 16 + 4, 64, 4);      // header size
  put_le(bytes, 16 + 8, padded, 8);  // payload size
  put_le(bytes, 16 + 28, arch, 4);
  put_le(bytes, 16 + 40, 0x11, 8);
  bytes.replace(16 + 64, payload.size(), payload);
  return bytes;
}

std::string error_of(const std::string& bytes)
{
  try {
    (void)read_fatbin(bytes, "test.fatbin");
  } catch (const FatbinError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fatbin_reader splits a real object's fatbin into a cubin and zstd PTX")
{
  const auto entries = read_fatbin(fatbin_of("k_sm80.o"), "k_sm80.o");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].key() == "sm_80 cubin");
  CHECK(entries[0].compression == FatbinCompression::none);
  CHECK(ElfReader::looks_like_elf(entries[0].payload));
  CHECK(entries[1].key() == "compute_80 ptx");
  CHECK(entries[1].compression == FatbinCompression::zstd);
  CHECK(entries[1].payload.find(".target sm_80") != std::string::npos);
  CHECK(entries[1].payload.back() != '\0');
  CHECK(entries[0].payload == nvfresh::test::load_object("k_sm80.cubin"));
}

TEST_CASE("fatbin_reader decompresses LZ4 payloads to the same PTX")
{
  const auto zstd_entries = read_fatbin(fatbin_of("k_sm80.o"), "k_sm80.o");
  const auto lz4_entries = read_fatbin(fatbin_of("k_sm80_lz4.o"), "k_sm80_lz4.o");
  REQUIRE(lz4_entries.size() == 2);
  CHECK(lz4_entries[1].compression == FatbinCompression::lz4);
  CHECK(lz4_entries[1].payload == zstd_entries[1].payload);
}

TEST_CASE("fatbin_reader finds the -rdc fatbin in __nv_relfatbin and its ptxas options")
{
  const auto entries = read_fatbin(fatbin_of("k_sm80_rdc.o"), "k_sm80_rdc.o");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].compression == FatbinCompression::zstd);
  CHECK(ElfReader::looks_like_elf(entries[0].payload));
  CHECK_THAT(entries[1].ptxas_options, Catch::Contains("--compile-only"));
}

TEST_CASE("fatbin_reader reads synthetic entries and tolerates trailing zero padding")
{
  const std::string ptx = ".version 9.0\n.target sm_90\n";
  auto entries = read_fatbin(synthetic_fatbin(ptx, 90), "test.fatbin");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].key() == "compute_90 ptx");
  CHECK(entries[0].payload == ptx);
  entries = read_fatbin(synthetic_fatbin(ptx, 90) + std::string(24, '\0'), "test.fatbin");
  CHECK(entries.size() == 1);
  CHECK(read_fatbin(synthetic_fatbin(ptx, 90) + synthetic_fatbin(ptx, 80), "x").size() == 2);
}

TEST_CASE("fatbin_reader rejects malformed fatbins with a clear message")
{
  const std::string good = synthetic_fatbin(".version 9.0\n.target sm_90\n", 90);
  CHECK_THAT(error_of(""), Catch::Contains("fatbin header is truncated"));
  CHECK_THAT(error_of(std::string(32, 'x')), Catch::Contains("is not 0xba55ed50"));
  CHECK_THAT(error_of(good.substr(0, good.size() - 1)),
             Catch::Contains("runs past the end of the data"));
  CHECK_THAT(error_of(good + "garbage!"), Catch::Contains("at offset 0x"));

  std::string short_header = good;
  put_le(short_header, 16 + 4, 8, 4);
  CHECK_THAT(error_of(short_header), Catch::Contains("runs past the end of the fatbin"));

  std::string both = good;
  put_le(both, 16 + 40, 0xA011, 8);
  CHECK_THAT(error_of(both), Catch::Contains("more than one compression"));

  std::string zstd_garbage = good;
  put_le(zstd_garbage, 16 + 40, 0x8011, 8);
  put_le(zstd_garbage, 16 + 16, 8, 4);
  put_le(zstd_garbage, 16 + 56, 100, 8);
  CHECK_THAT(error_of(zstd_garbage), Catch::Contains("zstd payload does not decompress"));

  std::string too_big = zstd_garbage;
  put_le(too_big, 16 + 56, 1ULL << 40, 8);
  CHECK_THAT(error_of(too_big), Catch::Contains("implausible"));

  std::string lz4_garbage = zstd_garbage;
  put_le(lz4_garbage, 16 + 40, 0x2011, 8);
  CHECK_THAT(error_of(lz4_garbage), Catch::Contains("LZ4 payload does not decompress"));

  std::string compressed_too_long = zstd_garbage;
  put_le(compressed_too_long, 16 + 16, 4096, 4);
  CHECK_THAT(error_of(compressed_too_long), Catch::Contains("exceeds the payload size"));
}

TEST_CASE("fatbin_reader never crashes on corrupted fatbins")
{
  const std::string originals[] = {fatbin_of("k_sm80.o"), fatbin_of("k_sm80_lz4.o"),
                                   fatbin_of("k_sm80_rdc.o")};
  nvfresh::test::Corrupter corrupter(0x5EED0002);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    try {
      (void)read_fatbin(corrupter.mutate(originals[i % 3]), "corrupt.fatbin");
    } catch (const FatbinError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("fatbin_reader reads LTO-IR entries (-dlto) and names them lto_<arch>")
{
  const auto entries = read_fatbin(fatbin_of("k_sm80_dlto.o"), "k_sm80_dlto.o");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].key() == "compute_80 ptx");
  CHECK(entries[1].kind == FatbinKind::ltoir);
  CHECK(entries[1].raw_kind == 8);
  CHECK(entries[1].key() == "lto_80 ltoir");
  CHECK_FALSE(entries[1].payload.empty());  // kept as stored: no public tool reads it
}

TEST_CASE("fatbin_reader names arch-specific entries sm_90a and compute_90a")
{
  const auto entries = read_fatbin(fatbin_of("k_sm90a.o"), "k_sm90a.o");
  std::vector<std::string> keys;
  for (const auto& entry : entries) {
    keys.push_back(entry.key());
  }
  CHECK(std::find(keys.begin(), keys.end(), "sm_90a cubin") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "compute_90a ptx") != keys.end());
}

TEST_CASE("fatbin_reader reads an entry of an unknown kind as opaque bytes, not as corrupt")
{
  std::string bytes = synthetic_fatbin(".version 8.0\n.target sm_80\n", 80);
  put_le(bytes, 16 + 0, 4, 2);  // kind 4: not one nvcc writes today
  const auto entries = read_fatbin(bytes, "test.fatbin");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].kind == FatbinKind::other);
  CHECK(entries[0].key() == "arch_80 entry kind 4");
}

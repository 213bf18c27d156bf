#include "digest/compare.hpp"
#include "digest/dwarf_info.hpp"
#include "digest/elf_reader.hpp"
#include "digest/normalize.hpp"
#include "digest/object_digest.hpp"
#include "digest_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using nvfresh::compare_digests;
using nvfresh::ComponentKind;
using nvfresh::digest_bytes;
using nvfresh::DigestError;
using nvfresh::ObjectDigests;
using nvfresh::Verdict;

namespace {

std::vector<std::string> keys_of(const ObjectDigests& digests)
{
  std::vector<std::string> keys;
  for (const auto& component : digests.components) {
    keys.push_back(component.key);
  }
  return keys;
}

// Replaces every occurrence of `from` with the same-length `to`.
std::string replace_all(std::string bytes, const std::string& from, const std::string& to)
{
  REQUIRE(from.size() == to.size());
  std::size_t count = 0;
  for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + 1)) {
    bytes.replace(at, from.size(), to);
    ++count;
  }
  REQUIRE(count > 0);
  return bytes;
}

std::string error_of(const std::string& bytes)
{
  try {
    (void)digest_bytes(bytes, "test.o");
  } catch (const DigestError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("object_digest splits a host object into host, cubin and PTX components")
{
  const auto digests = digest_bytes(nvfresh::test::load_object("k_sm80.o"), "k_sm80.o");
  CHECK(digests.format == "host object");
  CHECK(keys_of(digests) == std::vector<std::string>{"host code", "sm_80 cubin",
                                                     "sm_80 cubin debug", "compute_80 ptx"});
  const auto* cubin = digests.find("sm_80 cubin");
  REQUIRE(cubin != nullptr);
  REQUIRE(cubin->kernels.size() == 2);
  const auto kernel = std::find_if(cubin->kernels.begin(), cubin->kernels.end(),
                                   [](const auto& k) { return k.name == "_Z7add_onePi"; });
  REQUIRE(kernel != cubin->kernels.end());
  CHECK(kernel->is_entry);
  CHECK(kernel->code_size == 384);
  CHECK(kernel->instruction_count == 24);
  CHECK(kernel->register_count == 8u);  // EIATTR_REGCOUNT, matches sh_info >> 24 in this cubin
  CHECK(digests.find("compute_80 ptx")->ptx_text.find(".entry _Z7add_onePi") != std::string::npos);
}

TEST_CASE("object_digest: the same cubin digests alike inside an object and standalone")
{
  const auto object = digest_bytes(nvfresh::test::load_object("k_sm80.o"), "k_sm80.o");
  const auto cubin = digest_bytes(nvfresh::test::load_object("k_sm80.cubin"), "k_sm80.cubin");
  CHECK(cubin.format == "cubin");
  REQUIRE(cubin.find("sm_80 cubin") != nullptr);
  CHECK(cubin.find("sm_80 cubin")->digest == object.find("sm_80 cubin")->digest);
}

TEST_CASE("object_digest: compression does not change digests")
{
  const auto zstd = digest_bytes(nvfresh::test::load_object("k_sm80.o"), "k_sm80.o");
  const auto lz4 = digest_bytes(nvfresh::test::load_object("k_sm80_lz4.o"), "k_sm80_lz4.o");
  CHECK(compare_digests(zstd, lz4).same());
}

TEST_CASE("object_digest normalizes the tmpxft stem of another run")
{
  const std::string original = nvfresh::test::load_object("k_sm80.o");
  const std::string other_run = replace_all(original, "tmpxft_000012e9", "tmpxft_0000abcd");
  CHECK(other_run != original);
  CHECK(compare_digests(digest_bytes(original, "a.o"), digest_bytes(other_run, "b.o")).same());
}

TEST_CASE("object_digest: -g -G compiles whose fatbins compress to different sizes digest alike")
{
  // Two identical nvcc -g -G compiles; their zstd fatbins differ in size by one word, so fatbin.c
  // declared fatbinData[492] and fatbinData[491], and the declarations after the data moved a line.
  const std::string a = nvfresh::test::load_compressed_object("k_sm80_gG_a.o.zst");
  const std::string b = nvfresh::test::load_compressed_object("k_sm80_gG_b.o.zst");
  const nvfresh::ElfReader elf_a(a, "a.o");
  const nvfresh::ElfReader elf_b(b, "b.o");
  REQUIRE(elf_a.find_section(".nv_fatbin")->size != elf_b.find_section(".nv_fatbin")->size);
  const auto digests_a = digest_bytes(a, "a.o");
  const auto comparison = compare_digests(digests_a, digest_bytes(b, "b.o"));
  CHECK(comparison.same());
  CHECK(digests_a.find("host debug") != nullptr);
}

TEST_CASE("object_digest: a moved declaration outside fatbin.c still changes host debug")
{
  const std::string a = nvfresh::test::load_compressed_object("k_sm80_gG_a.o.zst");
  const nvfresh::ElfReader elf(a, "a.o");
  const nvfresh::ElfSection* info = elf.find_section(".debug_info");
  REQUIRE(info != nullptr);
  // `readelf --debug-dump=info`: host_fn's DW_AT_decl_line (k.cu line 3, DW_FORM_data1) is at 0x2af3.
  constexpr std::size_t k_host_fn_decl_line = 0x2af3;
  const std::size_t at =
    static_cast<std::size_t>(info->data.data() - a.data()) + k_host_fn_decl_line;
  REQUIRE(a[at] == '\x03');
  std::string moved = a;
  moved[at] = '\x04';
  const auto before = digest_bytes(a, "a.o");
  const auto after = digest_bytes(moved, "b.o");
  CHECK(before.find("host debug")->digest != after.find("host debug")->digest);
}

TEST_CASE("dwarf_info: the fatbinData bound and the fatbin.c declaration lines become zeros")
{
  const std::string a = nvfresh::test::load_compressed_object("k_sm80_gG_a.o.zst");
  const nvfresh::ElfReader elf(a, "a.o");
  std::string info(elf.find_section(".debug_info")->data);
  const std::string original = info;
  nvfresh::DebugInfoRelocations relocations;
  // Without relocations the names (DW_FORM_strp) are unknown: nothing is rewritten.
  CHECK(nvfresh::normalize_generated_declaration(info, elf.find_section(".debug_abbrev")->data,
                                                 relocations, "fatbinData") == 0);
  CHECK(info == original);
}

TEST_CASE("object_digest normalizes the module id's source path hash (-rdc=true)")
{
  const std::string original = nvfresh::test::load_object("k_sm80_rdc.o");
  const std::string moved = replace_all(original, "_b132155e_", "_37a667f0_");
  CHECK(compare_digests(digest_bytes(original, "a.o"), digest_bytes(moved, "b.o")).same());
  // The rest of the id is kept: a different name part is a real difference.
  const std::string renamed = replace_all(original, "_4_k_cu_b8ce1b4e", "_4_k_cu_b8ce1b4f");
  CHECK_FALSE(compare_digests(digest_bytes(original, "a.o"), digest_bytes(renamed, "b.o")).same());
}

TEST_CASE("object_digest: a changed kernel instruction changes only that cubin and kernel")
{
  const std::string original = nvfresh::test::load_object("k_sm80.o");
  const std::string cubin = nvfresh::test::load_object("k_sm80.cubin");
  const nvfresh::ElfReader reader(cubin, "k_sm80.cubin");
  const auto* text = reader.find_section(".text._Z5scalePff");
  REQUIRE(text != nullptr);
  const std::size_t cubin_at = original.find(cubin);
  REQUIRE(cubin_at != std::string::npos);
  std::string edited = original;
  edited[cubin_at + text->offset + 20] ^= 0x01;
  const auto comparison =
    compare_digests(digest_bytes(original, "a.o"), digest_bytes(edited, "b.o"));
  for (const auto& component : comparison.components) {
    INFO(component.key);
    CHECK((component.verdict == Verdict::different) == (component.key == "sm_80 cubin"));
  }
  const auto& changed = *std::find_if(comparison.components.begin(), comparison.components.end(),
                                      [](const auto& c) { return c.key == "sm_80 cubin"; });
  REQUIRE(changed.kernels.size() == 1);
  CHECK(changed.kernels[0].name == "_Z5scalePff");
  CHECK(changed.kernels[0].a->instruction_count == changed.kernels[0].b->instruction_count);
}

TEST_CASE("object_digest: reports only-in-A and only-in-B components")
{
  const auto object = digest_bytes(nvfresh::test::load_object("k_sm80.o"), "k_sm80.o");
  const auto cubin = digest_bytes(nvfresh::test::load_object("k_sm80.cubin"), "k_sm80.cubin");
  const auto comparison = compare_digests(object, cubin);
  CHECK_FALSE(comparison.same());
  CHECK(comparison.components.front().verdict == Verdict::only_in_a);
  CHECK(comparison.components.front().key == "host code");
}

TEST_CASE("normalize: tmpxft stems, module ids and PTX registers")
{
  std::string text = "x tmpxft_00001a48_00000000-6_k.cpp tmpxft_short tmpxft_0000zzzz_00000000";
  CHECK(nvfresh::normalize_tmpxft_stems(text) == 1);
  CHECK(text == "x tmpxft_00000000_00000000-6_k.cpp tmpxft_short tmpxft_0000zzzz_00000000");
  CHECK(nvfresh::module_id_from_section(std::string("__NV_MODULE_ID\0", 15)).empty());
  CHECK(nvfresh::module_id_from_section(std::string("_b132155e_4_k_cu_b8ce1b4e\0", 26)) ==
        "_b132155e_4_k_cu_b8ce1b4e");
  CHECK(nvfresh::normalized_module_id("_b132155e_4_k_cu_b8ce1b4e") == "_00000000_4_k_cu_b8ce1b4e");
  CHECK(nvfresh::ptx_without_register_numbers("add.s32 %r12, %r3, %rd40; mov %tid.x") ==
        "add.s32 %r#, %r#, %rd#; mov %tid.x");
}

TEST_CASE("normalize: DWARF 2 line-table file mtimes become same-length zeros")
{
  // unit_length, version 2, header_length, min_inst, default_is_stmt, line_base, line_range,
  // opcode_base 2 + one standard opcode length, include dir "/d", then file "k.cu" dir 1 mtime len.
  std::string header("\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x01\x01\xfb\x0e\x02\x00/d\x00\x00"
                     "k.cu\x00\x01\xdb\xdc\xb4\xd8\x06\xa0\x01\x00",
                     33);
  nvfresh::test::put_le(header, 0, header.size() - 4, 4);
  std::string other = header;
  other[26] = '\xdd';  // another mtime, same length
  CHECK(nvfresh::normalize_dwarf_line_mtimes(header) == 1);
  CHECK(nvfresh::normalize_dwarf_line_mtimes(other) == 1);
  CHECK(header == other);
  CHECK(header.substr(26, 5) == std::string("\x80\x80\x80\x80\x00", 5));
  CHECK(header.substr(31, 2) == "\xa0\x01");  // the file length is kept
  std::string truncated = header.substr(0, 28);
  CHECK(nvfresh::normalize_dwarf_line_mtimes(truncated) == 0);
}

TEST_CASE("object_digest: unreadable and unknown inputs give clear errors")
{
  CHECK_THROWS_WITH(nvfresh::digest_artifact("/nonexistent/x.o"),
                    Catch::Contains("cannot read the file"));
  CHECK_THAT(error_of("hello"), Catch::Contains("not a CUDA artifact"));
  const std::string original = nvfresh::test::load_object("k_sm80.o");
  CHECK_THAT(error_of(original.substr(0, original.size() / 2)), Catch::Contains("malformed ELF"));
  const std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n";
  const auto digests = digest_bytes(ptx, "k.ptx");
  CHECK(digests.format == "ptx");
  CHECK(keys_of(digests) == std::vector<std::string>{"sm_90 ptx"});  // labelled by its .target
}

TEST_CASE("object_digest never crashes on truncated or corrupted objects")
{
  const std::string originals[] = {
    nvfresh::test::load_object("k_sm80.o"), nvfresh::test::load_object("k_sm80_lz4.o"),
    nvfresh::test::load_object("k_sm80_rdc.o"), nvfresh::test::load_object("k_sm80.cubin")};
  nvfresh::test::Corrupter corrupter(0x5EED0003);
  int rejected = 0;
  int accepted = 0;
  for (int i = 0; i < 4000; ++i) {
    try {
      (void)digest_bytes(corrupter.mutate(originals[i % 4]), "corrupt.o");
      ++accepted;
    } catch (const DigestError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
  CHECK(accepted > 0);
}

#include "digest/elf_reader.hpp"
#include "digest_test_support.hpp"

#include <catch2/catch.hpp>
#include <elf.h>

#include <algorithm>
#include <cstring>

using nvfresh::ElfError;
using nvfresh::ElfReader;
using nvfresh::test::put_le;

namespace {

// A valid ELF64 header with no sections, to corrupt field by field.
std::string minimal_elf()
{
  std::string bytes(sizeof(Elf64_Ehdr), '\0');
  std::copy_n(ELFMAG, SELFMAG, bytes.begin());
  bytes[EI_CLASS] = ELFCLASS64;
  bytes[EI_DATA] = ELFDATA2LSB;
  bytes[EI_VERSION] = EV_CURRENT;
  put_le(bytes, offsetof(Elf64_Ehdr, e_type), ET_REL, 2);
  put_le(bytes, offsetof(Elf64_Ehdr, e_machine), EM_X86_64, 2);
  put_le(bytes, offsetof(Elf64_Ehdr, e_ehsize), sizeof(Elf64_Ehdr), 2);
  put_le(bytes, offsetof(Elf64_Ehdr, e_shentsize), sizeof(Elf64_Shdr), 2);
  return bytes;
}

std::string error_of(const std::string& bytes)
{
  try {
    ElfReader reader(bytes, "test.o");
  } catch (const ElfError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("elf_reader reads sections and symbols of a real nvcc object")
{
  const std::string bytes = nvfresh::test::load_object("k_sm80.o");
  const ElfReader reader(bytes, "k_sm80.o");
  CHECK(reader.machine() == EM_X86_64);
  REQUIRE(reader.find_section(".nv_fatbin") != nullptr);
  CHECK(reader.find_section(".nv_fatbin")->data.size() == reader.find_section(".nv_fatbin")->size);
  CHECK(reader.find_section("__nv_module_id") != nullptr);
  CHECK(reader.find_section(".no_such_section") == nullptr);
  const auto symbols = reader.symbols();
  const auto file =
    std::find_if(symbols.begin(), symbols.end(), [](const auto& s) { return s.type == STT_FILE; });
  REQUIRE(file != symbols.end());
  CHECK(file->name.starts_with("tmpxft_"));
  CHECK(std::any_of(symbols.begin(), symbols.end(),
                    [](const auto& s) { return s.name == "_Z7add_onePi"; }));
}

TEST_CASE("elf_reader reads a cubin's machine and arch flags")
{
  const std::string bytes = nvfresh::test::load_object("k_sm80.cubin");
  const ElfReader reader(bytes, "k_sm80.cubin");
  CHECK(reader.machine() == 190);
  CHECK(((reader.flags() >> 8) & 0xFF) == 80);
  CHECK(reader.find_section(".text._Z7add_onePi") != nullptr);
}

TEST_CASE("elf_reader rejects malformed headers with a clear message")
{
  CHECK_THAT(error_of(""), Catch::Contains("too short for an ELF64 header"));
  CHECK_THAT(error_of(std::string(64, 'x')), Catch::Contains("no ELF magic"));
  CHECK(error_of(minimal_elf()) == "no error");

  std::string elf32 = minimal_elf();
  elf32[EI_CLASS] = ELFCLASS32;
  CHECK_THAT(error_of(elf32), Catch::Contains("not a 64-bit little-endian ELF"));

  std::string big_endian = minimal_elf();
  big_endian[EI_DATA] = ELFDATA2MSB;
  CHECK_THAT(error_of(big_endian), Catch::Contains("not a 64-bit little-endian ELF"));

  std::string outside = minimal_elf();
  put_le(outside, offsetof(Elf64_Ehdr, e_shoff), 0x1000, 8);
  put_le(outside, offsetof(Elf64_Ehdr, e_shnum), 1, 2);
  CHECK_THAT(error_of(outside), Catch::Contains("section header table starts outside the file"));
  CHECK_THAT(error_of(outside), Catch::Contains("test.o"));

  std::string bad_entry_size = outside;
  put_le(bad_entry_size, offsetof(Elf64_Ehdr, e_shentsize), 40, 2);
  CHECK_THAT(error_of(bad_entry_size), Catch::Contains("section header size 40"));
}

TEST_CASE("elf_reader rejects section data and names outside the file")
{
  const std::string original = nvfresh::test::load_object("k_sm80.o");
  Elf64_Ehdr header;
  std::memcpy(&header, original.data(), sizeof(header));

  std::string too_many = original;
  put_le(too_many, offsetof(Elf64_Ehdr, e_shnum), 0xFFFF, 2);
  CHECK_THAT(error_of(too_many), Catch::Contains("runs past the end of the file"));

  std::string bad_names = original;
  put_le(bad_names, offsetof(Elf64_Ehdr, e_shstrndx), header.e_shnum + 3, 2);
  CHECK_THAT(error_of(bad_names), Catch::Contains("section name table index"));

  std::string bad_data = original;  // section 2 (.text): offset far past the end
  put_le(bad_data, header.e_shoff + 2 * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset),
         0xFFFFFFFFFFFF0000ULL, 8);
  CHECK_THAT(error_of(bad_data), Catch::Contains("section 2 data"));

  std::string bad_name = original;  // section 2's name offset past the name table
  put_le(bad_name, header.e_shoff + 2 * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_name),
         0x7FFFFFFF, 4);
  CHECK_THAT(error_of(bad_name), Catch::Contains("past the end of string table"));
}

TEST_CASE("elf_reader never crashes on truncated or corrupted objects")
{
  const std::string original = nvfresh::test::load_object("k_sm80.o");
  for (std::size_t size = 0; size < original.size(); size += 97) {
    const std::string truncated = original.substr(0, size);
    try {
      const ElfReader reader(truncated, "truncated.o");
      (void)reader.symbols();
    } catch (const ElfError&) {
    }
  }
  nvfresh::test::Corrupter corrupter(0x5EED0001);
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string bytes = corrupter.mutate(original);
    try {
      const ElfReader reader(bytes, "corrupt.o");
      (void)reader.symbols();
    } catch (const ElfError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);  // the loop does reach the error paths
}

TEST_CASE("elf_image_extent is a cubin's own size, without the padding a fatbin stores after it")
{
  const std::string cubin = nvfresh::test::load_object("k_sm80.cubin");
  REQUIRE(nvfresh::elf_image_extent(cubin) == cubin.size());
  CHECK(nvfresh::elf_image_extent(cubin + std::string(4, '\0')) == cubin.size());
  CHECK(nvfresh::elf_image_extent(cubin + std::string(7, '\0')) == cubin.size());
  CHECK_FALSE(nvfresh::elf_image_extent(cubin.substr(0, cubin.size() - 1)).has_value());
  CHECK_FALSE(nvfresh::elf_image_extent("not an ELF image at all, just text").has_value());
  CHECK(nvfresh::elf_image_extent(minimal_elf()) == sizeof(Elf64_Ehdr));
}

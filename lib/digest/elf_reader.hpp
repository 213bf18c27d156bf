// A small, bounds-checked reader for ELF64 little-endian images (host objects and cubins).
// It never owns the bytes: the image passed in must outlive the reader. Every offset and size read
// from the file is range-checked; malformed input throws ElfError naming what is wrong and where.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

class ElfError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct ElfSection {
  std::size_t index = 0;
  std::string name;
  std::uint32_t name_offset = 0;  // sh_name: offset into the section name table
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entry_size = 0;
  std::string_view data;  // the bytes in the image; empty for SHT_NOBITS
};

struct ElfSymbol {
  std::string name;
  std::uint8_t type = 0;     // STT_*
  std::uint8_t binding = 0;  // STB_*
  std::uint8_t other = 0;
  std::uint16_t section_index = 0;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

// The bytes a 64-bit ELF image spans: the end of its header, its section and program header tables,
// and every section and segment with file contents. A cubin stored plainly in a fatbin is followed
// by padding up to 8 bytes, which is not part of the image (cuobjdump extracts it without).
// std::nullopt when the bytes are not such an image or a table lies outside them.
std::optional<std::uint64_t> elf_image_extent(std::string_view bytes);

class ElfReader {
public:
  // `what` names the image in error messages ("k.o", "sm_80 cubin of k.o").
  ElfReader(std::string_view image, std::string what);

  static bool looks_like_elf(std::string_view bytes);

  std::uint16_t file_type() const { return m_file_type; }
  std::uint16_t machine() const { return m_machine; }
  std::uint32_t flags() const { return m_flags; }             // e_flags
  std::uint8_t abi_version() const { return m_abi_version; }  // e_ident[EI_ABIVERSION]
  const std::vector<ElfSection>& sections() const { return m_sections; }
  const ElfSection* find_section(std::string_view name) const;
  std::vector<ElfSymbol> symbols() const;  // from the first SHT_SYMTAB; empty when there is none

private:
  void read_header();
  void read_section_headers(std::uint64_t offset, std::uint64_t count);
  void name_sections(std::size_t string_table_index);
  std::string string_at(const ElfSection& table, std::uint64_t offset) const;
  [[noreturn]] void fail(const std::string& problem, std::uint64_t offset) const;

  std::string_view m_image;
  std::string m_what;
  std::uint16_t m_file_type = 0;
  std::uint16_t m_machine = 0;
  std::uint32_t m_flags = 0;
  std::uint8_t m_abi_version = 0;
  std::vector<ElfSection> m_sections;
};

}  // namespace nvfresh

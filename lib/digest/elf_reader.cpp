#include "digest/elf_reader.hpp"

#include "digest/byte_reader.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace nvfresh {

namespace {

constexpr std::uint64_t k_max_sections =
  1'000'000;  // far above any real object; bounds the allocation

}  // namespace

std::optional<std::uint64_t> elf_image_extent(std::string_view bytes)
{
  if (bytes.size() < sizeof(Elf64_Ehdr) || !ElfReader::looks_like_elf(bytes) ||
      static_cast<unsigned char>(bytes[EI_CLASS]) != ELFCLASS64) {
    return std::nullopt;
  }
  const auto header = load<Elf64_Ehdr>(bytes, 0);
  std::uint64_t extent = sizeof(Elf64_Ehdr);
  auto cover = [&](std::uint64_t offset, std::uint64_t length) {
    if (!in_range(offset, length, bytes.size())) {
      return false;
    }
    extent = std::max(extent, offset + length);
    return true;
  };
  const std::uint64_t section_table = std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
  const std::uint64_t segment_table = std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr);
  if ((header.e_shoff != 0 && !cover(header.e_shoff, section_table)) ||
      (header.e_phoff != 0 && !cover(header.e_phoff, segment_table))) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; header.e_shoff != 0 && i < header.e_shnum; ++i) {
    const auto section = load<Elf64_Shdr>(bytes, header.e_shoff + i * sizeof(Elf64_Shdr));
    if (section.sh_type != SHT_NOBITS && section.sh_type != SHT_NULL &&
        !cover(section.sh_offset, section.sh_size)) {
      return std::nullopt;
    }
  }
  for (std::uint64_t i = 0; header.e_phoff != 0 && i < header.e_phnum; ++i) {
    const auto segment = load<Elf64_Phdr>(bytes, header.e_phoff + i * sizeof(Elf64_Phdr));
    if (!cover(segment.p_offset, segment.p_filesz)) {
      return std::nullopt;
    }
  }
  return extent;
}

ElfReader::ElfReader(std::string_view image, std::string what)
  : m_image(image), m_what(std::move(what))
{
  read_header();
}

bool ElfReader::looks_like_elf(std::string_view bytes)
{
  return bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0;
}

void ElfReader::fail(const std::string& problem, std::uint64_t offset) const
{
  throw ElfError(
    fmt::format("{}: malformed ELF: {} (at offset {:#x}, file size {:#x}); the file is "
                "truncated or corrupt, rebuild it",
                m_what, problem, offset, m_image.size()));
}

void ElfReader::read_header()
{
  if (m_image.size() < sizeof(Elf64_Ehdr)) {
    fail(fmt::format("{} bytes is too short for an ELF64 header ({} bytes)", m_image.size(),
                     sizeof(Elf64_Ehdr)),
         0);
  }
  if (!looks_like_elf(m_image)) {
    fail("no ELF magic", 0);
  }
  const auto header = load<Elf64_Ehdr>(m_image, 0);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    fail("not a 64-bit little-endian ELF", EI_CLASS);
  }
  if (header.e_shoff != 0 && header.e_shentsize != sizeof(Elf64_Shdr)) {
    fail(fmt::format("section header size {} is not {}", header.e_shentsize, sizeof(Elf64_Shdr)),
         offsetof(Elf64_Ehdr, e_shentsize));
  }
  m_file_type = header.e_type;
  m_machine = header.e_machine;
  m_flags = header.e_flags;
  m_abi_version = header.e_ident[EI_ABIVERSION];
  if (header.e_shoff == 0) {
    return;  // no section headers: nothing to read
  }
  if (!in_range(header.e_shoff, sizeof(Elf64_Shdr), m_image.size())) {
    fail("section header table starts outside the file", offsetof(Elf64_Ehdr, e_shoff));
  }
  // Extended numbering: with 0 sections or SHN_XINDEX, the real values sit in section header 0.
  const auto first = load<Elf64_Shdr>(m_image, header.e_shoff);
  const std::uint64_t count = header.e_shnum != 0 ? header.e_shnum : first.sh_size;
  const std::uint64_t names =
    header.e_shstrndx != SHN_XINDEX ? header.e_shstrndx : std::uint64_t{first.sh_link};
  read_section_headers(header.e_shoff, count);
  if (names != SHN_UNDEF) {
    name_sections(names);
  }
}

void ElfReader::read_section_headers(std::uint64_t offset, std::uint64_t count)
{
  if (count > k_max_sections || !in_range(offset, count * sizeof(Elf64_Shdr), m_image.size())) {
    fail(fmt::format("section header table ({} entries) runs past the end of the file", count),
         offset);
  }
  m_sections.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t at = offset + i * sizeof(Elf64_Shdr);
    const auto raw = load<Elf64_Shdr>(m_image, at);
    ElfSection section;
    section.index = i;
    section.name_offset = raw.sh_name;
    section.type = raw.sh_type;
    section.flags = raw.sh_flags;
    section.offset = raw.sh_offset;
    section.size = raw.sh_size;
    section.link = raw.sh_link;
    section.info = raw.sh_info;
    section.entry_size = raw.sh_entsize;
    if (raw.sh_type != SHT_NOBITS && raw.sh_type != SHT_NULL) {
      if (!in_range(raw.sh_offset, raw.sh_size, m_image.size())) {
        fail(fmt::format("section {} data [{:#x}, +{:#x}) lies outside the file", i, raw.sh_offset,
                         raw.sh_size),
             at);
      }
      section.data = m_image.substr(raw.sh_offset, raw.sh_size);
    }
    m_sections.push_back(std::move(section));
  }
}

void ElfReader::name_sections(std::size_t string_table_index)
{
  if (string_table_index >= m_sections.size()) {
    fail(fmt::format("section name table index {} is not below the section count {}",
                     string_table_index, m_sections.size()),
         offsetof(Elf64_Ehdr, e_shstrndx));
  }
  const ElfSection table = m_sections[string_table_index];
  for (std::size_t i = 0; i < m_sections.size(); ++i) {
    m_sections[i].name = string_at(table, m_sections[i].name_offset);
  }
}

std::string ElfReader::string_at(const ElfSection& table, std::uint64_t offset) const
{
  if (offset == 0 && table.data.empty()) {
    return {};
  }
  if (offset >= table.data.size()) {
    fail(fmt::format("string offset {:#x} is past the end of string table section {} ({:#x} bytes)",
                     offset, table.index, table.data.size()),
         table.offset);
  }
  const auto end = table.data.find('\0', offset);
  if (end == std::string_view::npos) {
    fail(fmt::format("string at {:#x} in string table section {} has no terminating NUL", offset,
                     table.index),
         table.offset + offset);
  }
  return std::string(table.data.substr(offset, end - offset));
}

const ElfSection* ElfReader::find_section(std::string_view name) const
{
  for (const auto& section : m_sections) {
    if (section.name == name) {
      return &section;
    }
  }
  return nullptr;
}

std::vector<ElfSymbol> ElfReader::symbols() const
{
  std::vector<ElfSymbol> result;
  for (const auto& table : m_sections) {
    if (table.type != SHT_SYMTAB) {
      continue;
    }
    if (table.link >= m_sections.size()) {
      fail(fmt::format("symbol table section {} links to string table {} which does not exist",
                       table.index, table.link),
           table.offset);
    }
    const ElfSection& names = m_sections[table.link];
    const std::uint64_t count = table.data.size() / sizeof(Elf64_Sym);
    result.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto raw = load<Elf64_Sym>(table.data, i * sizeof(Elf64_Sym));
      ElfSymbol symbol;
      symbol.name = string_at(names, raw.st_name);
      symbol.type = ELF64_ST_TYPE(raw.st_info);
      symbol.binding = ELF64_ST_BIND(raw.st_info);
      symbol.other = raw.st_other;
      symbol.section_index = raw.st_shndx;
      symbol.value = raw.st_value;
      symbol.size = raw.st_size;
      result.push_back(std::move(symbol));
    }
    break;
  }
  return result;
}

}  // namespace nvfresh

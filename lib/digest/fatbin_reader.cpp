#include "digest/fatbin_reader.hpp"

#include "digest/byte_reader.hpp"

#include "digest/elf_reader.hpp"

#include <fmt/format.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace nvfresh {

namespace {

constexpr std::uint32_t k_fatbin_magic = 0xBA55ED50;
constexpr std::uint32_t k_segment_magic = 0x466243B1;
constexpr std::uint64_t k_container_header_size = 16;
constexpr std::uint64_t k_entry_header_min_size = 64;
constexpr std::uint64_t k_max_uncompressed = 4ULL << 30;  // 4 GiB: no real device image is larger
constexpr std::uint64_t k_max_ratio = 65536;  // bounds allocations claimed by corrupt sizes

constexpr std::uint64_t k_flag_lz4 = 0x2000;
constexpr std::uint64_t k_flag_zstd = 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_family_specific = 0x200000;
constexpr std::uint16_t k_kind_ptx = 1;
constexpr std::uint16_t k_kind_cubin = 2;
constexpr std::uint16_t k_kind_ltoir = 8;

FatbinKind kind_of(std::uint16_t raw_kind)
{
  switch (raw_kind) {
  case k_kind_ptx: return FatbinKind::ptx;
  case k_kind_cubin: return FatbinKind::cubin;
  case k_kind_ltoir: return FatbinKind::ltoir;
  default: return FatbinKind::other;
  }
}

struct CompressionRow {
  std::uint64_t flag;
  FatbinCompression compression;
};
constexpr std::array k_compression_rows{CompressionRow{k_flag_zstd, FatbinCompression::zstd},
                                        CompressionRow{k_flag_lz4, FatbinCompression::lz4}};

constexpr std::array k_fatbin_section_names{std::string_view{".nv_fatbin"},
                                            std::string_view{"__nv_relfatbin"}};

[[noreturn]] void fail(const std::string& what, const std::string& problem, std::uint64_t offset)
{
  throw FatbinError(
    fmt::format("{}: malformed fatbin: {} (at offset {:#x}); the file is truncated or "
                "corrupt, rebuild it",
                what, problem, offset));
}

struct RawEntryHeader {
  std::uint16_t kind;
  std::uint32_t header_size;
  std::uint64_t payload_size;
  std::uint32_t compressed_size;
  std::uint32_t options_descriptor;
  std::uint32_t arch;
  std::uint32_t name_offset;
  std::uint32_t name_length;
  std::uint64_t flags;
  std::uint64_t uncompressed_size;
};

RawEntryHeader load_entry_header(std::string_view entry)
{
  RawEntryHeader header{};
  header.kind = load<std::uint16_t>(entry, 0);
  header.header_size = load<std::uint32_t>(entry, 4);
  header.payload_size = load<std::uint64_t>(entry, 8);
  header.compressed_size = load<std::uint32_t>(entry, 16);
  header.options_descriptor = load<std::uint32_t>(entry, 20);
  header.arch = load<std::uint32_t>(entry, 28);
  header.name_offset = load<std::uint32_t>(entry, 32);
  header.name_length = load<std::uint32_t>(entry, 36);
  header.flags = load<std::uint64_t>(entry, 40);
  header.uncompressed_size = load<std::uint64_t>(entry, 56);
  return header;
}

FatbinCompression compression_of(std::uint64_t flags, const std::string& what, std::uint64_t offset)
{
  FatbinCompression found = FatbinCompression::none;
  int count = 0;
  for (const auto& row : k_compression_rows) {
    if ((flags & row.flag) != 0) {
      found = row.compression;
      ++count;
    }
  }
  if (count > 1) {
    fail(what, fmt::format("entry flags {:#x} name more than one compression", flags), offset);
  }
  return found;
}

std::string decompress(std::string_view data, FatbinCompression compression, std::uint64_t size,
                       const std::string& what, std::uint64_t offset)
{
  if (size > k_max_uncompressed || size / k_max_ratio > data.size()) {
    fail(
      what,
      fmt::format("uncompressed size {} is implausible for {} compressed bytes", size, data.size()),
      offset + 56);
  }
  std::string out(size, '\0');
  if (compression == FatbinCompression::zstd) {
    const std::size_t got = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
    if (ZSTD_isError(got) != 0 || got != size) {
      fail(what,
           fmt::format("zstd payload does not decompress to {} bytes ({})", size,
                       ZSTD_isError(got) != 0 ? ZSTD_getErrorName(got) : "size mismatch"),
           offset);
    }
    return out;
  }
  if (data.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE) ||
      size > LZ4_MAX_INPUT_SIZE * 255ULL) {
    fail(what, "LZ4 payload is larger than LZ4 allows", offset);
  }
  const int got = LZ4_decompress_safe(data.data(), out.data(), static_cast<int>(data.size()),
                                      static_cast<int>(std::min<std::uint64_t>(size, INT32_MAX)));
  if (got < 0 || static_cast<std::uint64_t>(got) != size) {
    fail(what, fmt::format("LZ4 payload does not decompress to {} bytes", size), offset);
  }
  return out;
}

std::string header_string(std::string_view header, std::uint64_t offset, std::uint64_t length,
                          const std::string& what, std::uint64_t entry_offset)
{
  if (length == 0) {
    return {};
  }
  if (!in_range(offset, length, header.size())) {
    fail(what,
         fmt::format("string [{:#x}, +{:#x}) lies outside the {}-byte entry header", offset, length,
                     header.size()),
         entry_offset);
  }
  std::string text(header.substr(offset, length));
  text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
  return text;
}

std::string ptxas_options_of(std::string_view header, const RawEntryHeader& raw,
                             const std::string& what, std::uint64_t entry_offset)
{
  if (raw.kind != k_kind_ptx || raw.options_descriptor == 0) {
    return {};
  }
  if (!in_range(raw.options_descriptor, 8, header.size())) {
    fail(what,
         fmt::format("options descriptor at {:#x} lies outside the {}-byte entry header",
                     raw.options_descriptor, header.size()),
         entry_offset + 20);
  }
  const auto offset = load<std::uint32_t>(header, raw.options_descriptor);
  const auto length = load<std::uint32_t>(header, raw.options_descriptor + 4);
  return header_string(header, offset, length, what, entry_offset);
}

std::string payload_of(std::string_view stored, const RawEntryHeader& raw,
                       FatbinCompression compression, const std::string& what,
                       std::uint64_t entry_offset)
{
  if (raw.kind != k_kind_ptx && raw.kind != k_kind_cubin) {
    // LTO-IR is stored in a form no public tool reads (its zstd flag notwithstanding, the bytes
    // are no zstd frame; cuobjdump cannot extract it): it is kept, and digested, as stored.
    return std::string(stored);
  }
  if (compression == FatbinCompression::none) {
    std::string plain(stored);
    if (raw.kind == k_kind_ptx) {
      plain.erase(plain.find_last_not_of('\0') + 1);  // PTX is padded with NULs to 8 bytes
    } else if (raw.kind == k_kind_cubin) {
      if (auto extent = elf_image_extent(plain)) {
        plain.resize(*extent);  // so is a cubin: the image ends where its ELF structures end
      }
    }
    return plain;
  }
  if (raw.compressed_size > stored.size()) {
    fail(what,
         fmt::format("compressed size {} exceeds the payload size {}", raw.compressed_size,
                     stored.size()),
         entry_offset + 16);
  }
  std::string plain = decompress(stored.substr(0, raw.compressed_size), compression,
                                 raw.uncompressed_size, what, entry_offset);
  if (raw.kind == k_kind_ptx) {
    plain.erase(plain.find_last_not_of('\0') + 1);
  }
  return plain;
}

FatbinEntry read_entry(std::string_view bytes, std::uint64_t offset, std::uint64_t end,
                       const std::string& what)
{
  if (!in_range(offset, k_entry_header_min_size, end)) {
    fail(what, "entry header runs past the end of the fatbin", offset);
  }
  const RawEntryHeader raw = load_entry_header(bytes.substr(offset));
  if (raw.header_size < k_entry_header_min_size || !in_range(offset, raw.header_size, end) ||
      !in_range(offset + raw.header_size, raw.payload_size, end)) {
    fail(what,
         fmt::format("entry (header {} bytes, payload {} bytes) runs past the end of the fatbin",
                     raw.header_size, raw.payload_size),
         offset);
  }
  const std::string_view header = bytes.substr(offset, raw.header_size);
  FatbinEntry entry;
  entry.kind = kind_of(raw.kind);
  entry.raw_kind = raw.kind;
  entry.arch = raw.arch;
  entry.flags = raw.flags;
  entry.offset = offset;
  entry.compression = compression_of(raw.flags, what, offset + 40);
  entry.source_name = header_string(header, raw.name_offset, raw.name_length, what, offset);
  entry.ptxas_options = ptxas_options_of(header, raw, what, offset);
  entry.payload = payload_of(bytes.substr(offset + raw.header_size, raw.payload_size), raw,
                             entry.compression, what, offset);
  return entry;
}

// Reads one container at `offset`; returns the offset just past it.
std::uint64_t read_container(std::string_view bytes, std::uint64_t offset, const std::string& what,
                             std::vector<FatbinEntry>& entries)
{
  if (!in_range(offset, k_container_header_size, bytes.size())) {
    fail(what, "fatbin header is truncated", offset);
  }
  if (load<std::uint32_t>(bytes, offset) != k_fatbin_magic) {
    fail(what,
         fmt::format("magic {:#010x} is not {:#010x}", load<std::uint32_t>(bytes, offset),
                     k_fatbin_magic),
         offset);
  }
  const auto header_size = load<std::uint16_t>(bytes, offset + 6);
  const auto body_size = load<std::uint64_t>(bytes, offset + 8);
  if (header_size < k_container_header_size || !in_range(offset, header_size, bytes.size()) ||
      !in_range(offset + header_size, body_size, bytes.size())) {
    fail(what,
         fmt::format("fatbin (header {} bytes, body {} bytes) runs past the end of the data",
                     header_size, body_size),
         offset);
  }
  const std::uint64_t end = offset + header_size + body_size;
  for (std::uint64_t at = offset + header_size; at < end;) {
    entries.push_back(read_entry(bytes, at, end, what));
    at += load<std::uint32_t>(bytes, at + 4) + load<std::uint64_t>(bytes, at + 8);
  }
  return end;
}

bool only_zeros(std::string_view bytes)
{
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == '\0'; });
}

}  // namespace

std::string_view to_string(FatbinKind kind)
{
  constexpr std::array<std::string_view, 4> k_names{"ptx", "cubin", "ltoir", "other"};
  return k_names[static_cast<std::size_t>(kind)];
}

std::string_view to_string(FatbinCompression compression)
{
  constexpr std::array<std::string_view, 3> k_names{"none", "zstd", "lz4"};
  return k_names[static_cast<std::size_t>(compression)];
}

std::string FatbinEntry::arch_name() const
{
  constexpr std::array<std::string_view, 4> k_prefixes{"compute", "sm", "lto", "arch"};
  const std::string_view variant = (flags & k_flag_family_specific) != 0 ? "f"
                                   : (flags & k_flag_arch_specific) != 0 ? "a"
                                                                         : "";
  return fmt::format("{}_{}{}", k_prefixes[static_cast<std::size_t>(kind)], arch, variant);
}

std::string FatbinEntry::kind_name() const
{
  return kind == FatbinKind::other ? fmt::format("entry kind {}", raw_kind)
                                   : std::string(to_string(kind));
}

std::string FatbinEntry::key() const
{
  return fmt::format("{} {}", arch_name(), kind_name());
}

bool looks_like_fatbin(std::string_view bytes)
{
  return bytes.size() >= 4 && load<std::uint32_t>(bytes, 0) == k_fatbin_magic;
}

std::vector<FatbinEntry> read_fatbin(std::string_view bytes, const std::string& what)
{
  std::vector<FatbinEntry> entries;
  std::uint64_t offset = 0;
  do {
    offset = read_container(bytes, offset, what, entries);
  } while (offset < bytes.size() && !only_zeros(bytes.substr(offset)));
  return entries;
}

bool is_fatbin_section_name(std::string_view name)
{
  return std::find(k_fatbin_section_names.begin(), k_fatbin_section_names.end(), name) !=
         k_fatbin_section_names.end();
}

std::vector<std::string_view> find_fatbin_sections(const ElfReader& elf, const std::string& what)
{
  std::vector<std::string_view> found;
  for (const auto& section : elf.sections()) {
    if (is_fatbin_section_name(section.name)) {
      found.push_back(section.data);
    }
  }
  const ElfSection* segment = elf.find_section(".nvFatBinSegment");
  if (segment == nullptr) {
    return found;
  }
  if (segment->data.size() < 4 || load<std::uint32_t>(segment->data, 0) != k_segment_magic) {
    fail(what,
         fmt::format(".nvFatBinSegment does not start with the wrapper magic {:#010x}",
                     k_segment_magic),
         segment->offset);
  }
  if (found.empty()) {
    fail(what, ".nvFatBinSegment is present but there is no .nv_fatbin or __nv_relfatbin section",
         segment->offset);
  }
  return found;
}

}  // namespace nvfresh

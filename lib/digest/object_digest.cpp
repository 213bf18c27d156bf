#include "digest/object_digest.hpp"

#include "digest/dwarf_info.hpp"
#include "digest/elf_reader.hpp"
#include "digest/fatbin_reader.hpp"
#include "digest/normalize.hpp"
#include "digest/ptx.hpp"
#include "util/file_io.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>

namespace nvfresh {

namespace {

constexpr std::string_view k_digest_version = "nvfresh-object-digest-1";
constexpr std::uint16_t k_em_cuda = 190;          // EM_CUDA
constexpr std::uint8_t k_sto_cuda_entry = 0x10;   // st_other bit of a __global__ kernel
constexpr std::uint8_t k_eiattr_regcount = 0x2f;  // .nv.info attribute: (symbol index, registers)
constexpr std::uint8_t k_eifmt_sval = 0x04;       // .nv.info format with a u16 size and a payload
constexpr std::uint64_t k_compression_flags = 0x2000 | 0x8000;
constexpr std::string_view k_fatbin_data_symbol = "fatbinData";  // declared by nvcc's fatbin.c

constexpr std::array k_debug_prefixes{
  std::string_view{".debug_"},        std::string_view{".zdebug_"},
  std::string_view{".rel.debug_"},    std::string_view{".rela.debug_"},
  std::string_view{".nv_debug_"},     std::string_view{".rel.nv_debug_"},
  std::string_view{".rela.nv_debug_"}};

// SASS instruction width by architecture: 16 bytes from Volta on; before, 8-byte words (the count then
// includes the scheduling-control words).
struct InstructionWidthRow {
  std::uint32_t min_arch;
  std::uint64_t bytes;
};
constexpr std::array k_instruction_widths{InstructionWidthRow{70, 16}, InstructionWidthRow{0, 8}};

struct KindNameRow {
  ComponentKind kind;
  std::string_view name;
};
constexpr std::array k_kind_names{KindNameRow{ComponentKind::host_code, "host code"},
                                  KindNameRow{ComponentKind::host_debug, "host debug"},
                                  KindNameRow{ComponentKind::cubin, "cubin"},
                                  KindNameRow{ComponentKind::cubin_debug, "cubin debug"},
                                  KindNameRow{ComponentKind::ptx, "ptx"},
                                  KindNameRow{ComponentKind::ptx_debug, "ptx debug"},
                                  KindNameRow{ComponentKind::ltoir, "ltoir"},
                                  KindNameRow{ComponentKind::opaque, "opaque"}};

bool is_debug_section(std::string_view name)
{
  return std::any_of(k_debug_prefixes.begin(), k_debug_prefixes.end(),
                     [&](std::string_view prefix) { return name.starts_with(prefix); });
}

// The run-dependent names of one artifact, rewritten in every byte range digested.
struct Normalizer {
  std::string module_id;

  std::string apply(std::string_view bytes) const
  {
    std::string result(bytes);
    normalize_tmpxft_stems(result);
    normalize_module_id(result, module_id);
    return result;
  }
};

// Collects components; a repeated key (two containers with the same arch) gets " #2", " #3"...
class ComponentList {
public:
  void add(ComponentDigest component)
  {
    const int seen = ++m_seen[component.key];
    if (seen > 1) {
      component.key += fmt::format(" #{}", seen);
    }
    m_components.push_back(std::move(component));
  }
  ComponentDigest& last() { return m_components.back(); }
  std::vector<ComponentDigest> take() { return std::move(m_components); }

private:
  std::map<std::string, int> m_seen;
  std::vector<ComponentDigest> m_components;
};

ComponentDigest make_component(std::string key, ComponentKind kind, const Hasher& hasher,
                               std::uint64_t size)
{
  ComponentDigest component;
  component.key = std::move(key);
  component.kind = kind;
  component.digest = hasher.digest();
  component.size = size;
  return component;
}

// Adds the header fields of one section that do not depend on file layout.
void hash_section_header(Hasher& hasher, const ElfSection& section)
{
  hasher.tag("section").field(section.name).field(std::to_string(section.type));
  hasher.field(std::to_string(section.flags)).field(std::to_string(section.link));
  hasher.field(std::to_string(section.info)).field(std::to_string(section.entry_size));
}

// Adds one section (its header fields that do not depend on file layout, and its normalized bytes).
std::uint64_t hash_section(Hasher& hasher, const ElfSection& section, const Normalizer& normalizer)
{
  hash_section_header(hasher, section);
  if (section.type == SHT_NOBITS) {
    hasher.field(std::to_string(section.size));
    return 0;
  }
  std::string bytes = normalizer.apply(section.data);
  if (section.name == ".debug_line") {
    normalize_dwarf_line_mtimes(bytes);
  }
  hasher.field(bytes);
  return section.data.size();
}

// Hashes the sections `wanted` selects into a component; adds nothing when none is selected.
template <typename Predicate>
bool add_sections_component(const ElfReader& elf, const Normalizer& normalizer, Predicate wanted,
                            std::string key, ComponentKind kind, ComponentList& out)
{
  Hasher hasher;
  hasher.tag(k_digest_version).tag(to_string(kind));
  std::uint64_t size = 0;
  std::size_t count = 0;
  for (const auto& section : elf.sections()) {
    if (section.index != 0 && wanted(section)) {
      size += hash_section(hasher, section, normalizer);
      ++count;
    }
  }
  if (count == 0) {
    return false;
  }
  out.add(make_component(std::move(key), kind, hasher, size));
  return true;
}

// Register counts by symbol index, from EIATTR_REGCOUNT entries of the cubin's .nv.info section.
// The section is only informative here: an entry that does not fit ends the scan.
std::map<std::uint32_t, std::uint32_t> register_counts(const ElfReader& elf)
{
  std::map<std::uint32_t, std::uint32_t> counts;
  const ElfSection* info = elf.find_section(".nv.info");
  if (info == nullptr) {
    return counts;
  }
  const std::string_view data = info->data;
  for (std::size_t at = 0; at + 4 <= data.size();) {
    const auto format = static_cast<std::uint8_t>(data[at]);
    const auto attribute = static_cast<std::uint8_t>(data[at + 1]);
    std::uint16_t size = 0;
    if (format == k_eifmt_sval) {
      std::memcpy(&size, data.data() + at + 2, sizeof(size));
    }
    if (at + 4 + size > data.size()) {
      break;
    }
    if (format == k_eifmt_sval && attribute == k_eiattr_regcount && size >= 8) {
      std::uint32_t symbol = 0;
      std::uint32_t registers = 0;
      std::memcpy(&symbol, data.data() + at + 4, sizeof(symbol));
      std::memcpy(&registers, data.data() + at + 8, sizeof(registers));
      counts[symbol] = registers;
    }
    at += 4 + size;
  }
  return counts;
}

std::uint64_t instruction_bytes(std::uint32_t arch)
{
  for (const auto& row : k_instruction_widths) {
    if (arch >= row.min_arch) {
      return row.bytes;
    }
  }
  return k_instruction_widths.back().bytes;
}

KernelInfo kernel_of(const ElfReader& elf, const ElfSection& text, std::uint32_t arch,
                     const std::map<std::uint32_t, std::uint32_t>& registers,
                     const Normalizer& normalizer)
{
  KernelInfo kernel;
  kernel.name = text.name.substr(std::string_view{".text."}.size());
  kernel.code_size = text.size;
  kernel.instruction_count = text.size / instruction_bytes(arch);
  const std::uint32_t symbol = text.info & 0xFFFFFFu;  // low 24 bits: the function's symbol index
  if (const auto found = registers.find(symbol); found != registers.end()) {
    kernel.register_count = found->second;
  } else {
    kernel.register_count = text.info >> 24;  // high 8 bits of sh_info hold the register count
  }
  Hasher hasher;
  hasher.tag("sass").field(normalizer.apply(text.data));
  if (const ElfSection* info = elf.find_section(".nv.info." + kernel.name)) {
    hasher.tag("nv.info").field(normalizer.apply(info->data));
  }
  kernel.code = hasher.digest();
  return kernel;
}

std::vector<KernelInfo> kernels_of(const ElfReader& elf, std::uint32_t arch,
                                   const Normalizer& normalizer)
{
  const auto registers = register_counts(elf);
  std::map<std::string, std::uint8_t> other_by_name;
  for (const auto& symbol : elf.symbols()) {
    if (symbol.type == STT_FUNC) {
      other_by_name[symbol.name] = symbol.other;
    }
  }
  std::vector<KernelInfo> kernels;
  for (const auto& section : elf.sections()) {
    if (section.name.starts_with(".text.") && section.type == SHT_PROGBITS) {
      kernels.push_back(kernel_of(elf, section, arch, registers, normalizer));
      kernels.back().is_entry = (other_by_name[kernels.back().name] & k_sto_cuda_entry) != 0;
    }
  }
  return kernels;
}

// The SM a cubin was built for: e_flags bits 8..15 from ELF ABI version 7 on, bits 0..7 before.
std::uint32_t cubin_arch(const ElfReader& elf)
{
  return elf.abi_version() >= 7 ? (elf.flags() >> 8) & 0xFFu : elf.flags() & 0xFFu;
}

void digest_cubin(std::string_view bytes, const std::string& arch_name, std::uint32_t arch,
                  const Normalizer& normalizer, const std::string& what, ComponentList& out)
{
  const ElfReader elf(bytes, fmt::format("{} of {}", arch_name, what));
  const std::string key = arch_name + " cubin";
  const auto code = [](const ElfSection& s) { return !is_debug_section(s.name); };
  const auto debug = [](const ElfSection& s) { return is_debug_section(s.name); };
  if (add_sections_component(elf, normalizer, code, key, ComponentKind::cubin, out)) {
    out.last().kernels = kernels_of(elf, arch, normalizer);
  }
  add_sections_component(elf, normalizer, debug, key + " debug", ComponentKind::cubin_debug, out);
}

struct PtxParts {
  std::string code;
  std::vector<std::uint32_t>
    code_line_numbers;  // the number (1-based) of each code line in the PTX
  std::string debug;
};

// Separates debug information (.file lines and .section .debug_* { ... } blocks) from the code.
PtxParts split_ptx(std::string_view ptx)
{
  PtxParts parts;
  bool in_debug_section = false;
  std::uint32_t number = 0;
  for (const std::string_view line : split_text_lines(ptx)) {
    ++number;
    const std::string_view trimmed =
      line.substr(std::min(line.find_first_not_of(" \t"), line.size()));
    const bool opens =
      trimmed.starts_with(".section") && trimmed.find(".debug_") != std::string_view::npos;
    const bool debug = in_debug_section || opens || trimmed.starts_with(".file");
    (debug ? parts.debug : parts.code).append(line).push_back('\n');
    if (!debug) {
      parts.code_line_numbers.push_back(number);
    }
    if (in_debug_section && trimmed.starts_with("}")) {
      in_debug_section = false;
    } else if (opens) {
      in_debug_section = true;
    }
  }
  return parts;
}

// One KernelInfo per PTX function: its text's digest, with and without register numbers.
std::vector<KernelInfo> ptx_kernels(const std::string& code)
{
  const std::vector<std::string_view> lines = split_text_lines(code);
  std::vector<KernelInfo> kernels;
  for (const PtxFunction& function : ptx_functions(lines)) {
    const char* begin = lines[function.first_line].data();
    const char* end = lines[function.last_line].data() + lines[function.last_line].size();
    const std::string_view text(begin, static_cast<std::size_t>(end - begin));
    KernelInfo kernel;
    kernel.name = function.name;
    kernel.is_entry = function.is_entry;
    kernel.code_size = text.size();
    kernel.instruction_count = function.instruction_count;
    kernel.register_declarations = function.registers;
    kernel.code = hash_bytes(text);
    kernel.code_without_register_numbers = hash_bytes(ptx_without_register_numbers(text));
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

void digest_ptx(std::string_view ptx, const std::string& arch_name, const std::string& options,
                const Normalizer& normalizer, ComponentList& out)
{
  PtxParts parts = split_ptx(normalizer.apply(ptx));
  const std::string key = arch_name.empty() ? std::string("ptx") : arch_name + " ptx";
  Hasher code;
  code.tag(k_digest_version).tag("ptx").field(options).field(parts.code);
  ComponentDigest component = make_component(key, ComponentKind::ptx, code, parts.code.size());
  component.kernels = ptx_kernels(parts.code);
  component.ptx_text = std::move(parts.code);
  component.ptx_line_numbers = std::move(parts.code_line_numbers);
  out.add(std::move(component));
  if (!parts.debug.empty()) {
    Hasher debug;
    debug.tag(k_digest_version).tag("ptx debug").field(parts.debug);
    out.add(make_component(key + " debug", ComponentKind::ptx_debug, debug, parts.debug.size()));
  }
}

// An LTO-IR entry (NVVM bitcode) or one of a kind nvfresh does not name: its bytes, with the names
// nvcc makes up per run rewritten, and its flags.
void digest_opaque_entry(const FatbinEntry& entry, const Normalizer& normalizer, ComponentList& out)
{
  const std::string bytes = normalizer.apply(entry.payload);
  Hasher hasher;
  hasher.tag(k_digest_version).tag(entry.kind_name());
  hasher.field(fmt::format("{:#x}", entry.flags & ~k_compression_flags)).field(bytes);
  const ComponentKind kind =
    entry.kind == FatbinKind::ltoir ? ComponentKind::ltoir : ComponentKind::opaque;
  out.add(make_component(entry.key(), kind, hasher, bytes.size()));
}

void digest_fatbin(std::string_view bytes, const Normalizer& normalizer, const std::string& what,
                   ComponentList& out)
{
  for (const FatbinEntry& entry : read_fatbin(bytes, what)) {
    if (entry.kind == FatbinKind::ptx) {
      const std::string options =
        fmt::format("{}|{:#x}", entry.ptxas_options, entry.flags & ~k_compression_flags);
      digest_ptx(entry.payload, entry.arch_name(), options, normalizer, out);
    } else if (entry.kind == FatbinKind::cubin) {
      digest_cubin(entry.payload, entry.arch_name(), entry.arch, normalizer, what, out);
    } else {
      digest_opaque_entry(entry, normalizer, out);
    }
  }
}

// Host debug info needs more than byte rewriting: the assembler orders merged string sections
// (.debug_str, .debug_line_str) by a hash of the strings, so a different tmpxft stem reorders them and
// changes every offset into them. Those offsets live in RELA addends against the string section's
// symbol. So: a string section is hashed as the sorted set of its strings, and a relocation that
// points into one is hashed as the string it points to, not as the offset.
// And .debug_info declares `fatbinData[N]` with N the compressed fatbin's size in words, which moves
// with run-dependent bytes inside the fatbin (see digest/dwarf_info.hpp): that bound, and the
// declaration lines in fatbin.c that follow the data, are hashed as zeros.
class HostDebugHasher {
public:
  HostDebugHasher(const ElfReader& elf, const Normalizer& normalizer)
    : m_elf(elf), m_normalizer(normalizer)
  {
    m_symbols = elf.symbols();
  }

  std::uint64_t add(Hasher& hasher, const ElfSection& section) const
  {
    if (is_string_section(section)) {
      hasher.tag("strings").field(section.name);
      for (const auto& text : sorted_strings(section.data)) {
        hasher.field(text);
      }
      return section.data.size();
    }
    if (section.type == SHT_RELA && section.entry_size == sizeof(Elf64_Rela)) {
      return add_relocations(hasher, section);
    }
    if (section.name == ".debug_info" && section.type == SHT_PROGBITS) {
      return add_debug_info(hasher, section);
    }
    return hash_section(hasher, section, m_normalizer);
  }

private:
  std::uint64_t add_debug_info(Hasher& hasher, const ElfSection& section) const
  {
    std::string bytes = m_normalizer.apply(section.data);
    if (const ElfSection* abbrev = m_elf.find_section(".debug_abbrev")) {
      normalize_generated_declaration(bytes, abbrev->data, relocations_of(section),
                                      k_fatbin_data_symbol);
    }
    hash_section_header(hasher, section);
    hasher.field(bytes);
    return section.data.size();
  }

  // What the RELA section that patches `target` says about each place it patches.
  DebugInfoRelocations relocations_of(const ElfSection& target) const
  {
    DebugInfoRelocations result;
    for (const auto& section : m_elf.sections()) {
      if (section.type != SHT_RELA || section.entry_size != sizeof(Elf64_Rela) ||
          section.info != target.index) {
        continue;
      }
      for (std::size_t at = 0; at + sizeof(Elf64_Rela) <= section.data.size();
           at += sizeof(Elf64_Rela)) {
        Elf64_Rela rela;
        std::memcpy(&rela, section.data.data() + at, sizeof(rela));
        record_relocation(result, rela);
      }
    }
    return result;
  }

  void record_relocation(DebugInfoRelocations& result, const Elf64_Rela& rela) const
  {
    const auto addend = static_cast<std::uint64_t>(rela.r_addend);
    result.addends[rela.r_offset] = addend;
    const ElfSection* strings = string_target(ELF64_R_SYM(rela.r_info));
    if (strings != nullptr && addend < strings->data.size()) {
      const std::string_view rest = strings->data.substr(addend);
      result.strings[rela.r_offset] = std::string(rest.substr(0, rest.find('\0')));
    }
  }

  static bool is_string_section(const ElfSection& section)
  {
    return (section.flags & SHF_STRINGS) != 0 && section.type == SHT_PROGBITS;
  }

  std::vector<std::string> sorted_strings(std::string_view data) const
  {
    std::vector<std::string> strings;
    for (std::size_t start = 0; start < data.size();) {
      const std::size_t end = std::min(data.find('\0', start), data.size());
      strings.push_back(m_normalizer.apply(data.substr(start, end - start)));
      start = end + 1;
    }
    std::sort(strings.begin(), strings.end());
    strings.erase(std::unique(strings.begin(), strings.end()), strings.end());
    return strings;
  }

  // The string section a relocation's symbol stands for, or nullptr.
  const ElfSection* string_target(std::uint64_t symbol_index) const
  {
    if (symbol_index >= m_symbols.size()) {
      return nullptr;
    }
    const ElfSymbol& symbol = m_symbols[symbol_index];
    if (symbol.type != STT_SECTION || symbol.section_index >= m_elf.sections().size()) {
      return nullptr;
    }
    const ElfSection& target = m_elf.sections()[symbol.section_index];
    return is_string_section(target) ? &target : nullptr;
  }

  std::uint64_t add_relocations(Hasher& hasher, const ElfSection& section) const
  {
    hasher.tag("relocations").field(section.name);
    for (std::size_t at = 0; at + sizeof(Elf64_Rela) <= section.data.size();
         at += sizeof(Elf64_Rela)) {
      Elf64_Rela rela;
      std::memcpy(&rela, section.data.data() + at, sizeof(rela));
      hasher.field(std::to_string(rela.r_offset)).field(std::to_string(ELF64_R_TYPE(rela.r_info)));
      const ElfSection* strings = string_target(ELF64_R_SYM(rela.r_info));
      const auto addend = static_cast<std::uint64_t>(rela.r_addend);
      if (strings != nullptr && addend < strings->data.size()) {
        const std::string_view rest = strings->data.substr(addend);
        hasher.field(strings->name).field(m_normalizer.apply(rest.substr(0, rest.find('\0'))));
      } else {
        hasher.field(std::to_string(ELF64_R_SYM(rela.r_info))).field(std::to_string(rela.r_addend));
      }
    }
    return section.data.size();
  }

  const ElfReader& m_elf;
  const Normalizer& m_normalizer;
  std::vector<ElfSymbol> m_symbols;
};

void add_host_debug_component(const ElfReader& elf, const Normalizer& normalizer,
                              ComponentList& out)
{
  const HostDebugHasher debug_hasher(elf, normalizer);
  Hasher hasher;
  hasher.tag(k_digest_version).tag(to_string(ComponentKind::host_debug));
  std::uint64_t size = 0;
  std::size_t count = 0;
  for (const auto& section : elf.sections()) {
    if (section.index != 0 && is_debug_section(section.name)) {
      size += debug_hasher.add(hasher, section);
      ++count;
    }
  }
  if (count != 0) {
    out.add(make_component("host debug", ComponentKind::host_debug, hasher, size));
  }
}

void digest_host_object(const ElfReader& elf, const std::string& what, ComponentList& out)
{
  Normalizer normalizer;
  if (const ElfSection* id = elf.find_section("__nv_module_id")) {
    normalizer.module_id = module_id_from_section(id->data);
  }
  const auto code = [](const ElfSection& s) {
    return !is_debug_section(s.name) && !is_fatbin_section_name(s.name);
  };
  add_sections_component(elf, normalizer, code, "host code", ComponentKind::host_code, out);
  add_host_debug_component(elf, normalizer, out);
  for (std::string_view fatbin : find_fatbin_sections(elf, what)) {
    digest_fatbin(fatbin, normalizer, what, out);
  }
}

void digest_elf_artifact(std::string_view bytes, const std::string& what, ObjectDigests& result,
                         ComponentList& out)
{
  const ElfReader elf(bytes, what);
  if (elf.machine() == k_em_cuda) {
    result.format = "cubin";
    const std::uint32_t arch = cubin_arch(elf);
    digest_cubin(bytes, fmt::format("sm_{}", arch), arch, Normalizer{}, what, out);
    return;
  }
  result.format = "host object";
  digest_host_object(elf, what, out);
}

bool looks_like_ptx(std::string_view bytes)
{
  const std::string_view head = bytes.substr(0, std::size_t{64} * 1024);
  return head.find(".version") != std::string_view::npos &&
         head.find(".target") != std::string_view::npos &&
         head.find('\0') == std::string_view::npos;
}

}  // namespace

std::string_view to_string(ComponentKind kind)
{
  for (const auto& row : k_kind_names) {
    if (row.kind == kind) {
      return row.name;
    }
  }
  return "unknown";
}

const ComponentDigest* ObjectDigests::find(std::string_view key) const
{
  for (const auto& component : components) {
    if (component.key == key) {
      return &component;
    }
  }
  return nullptr;
}

ObjectDigests digest_bytes(std::string_view bytes, const std::string& name)
{
  ObjectDigests result;
  result.path = name;
  ComponentList out;
  try {
    if (ElfReader::looks_like_elf(bytes)) {
      digest_elf_artifact(bytes, name, result, out);
    } else if (looks_like_fatbin(bytes)) {
      result.format = "fatbin";
      digest_fatbin(bytes, Normalizer{}, name, out);
    } else if (looks_like_ptx(bytes)) {
      result.format = "ptx";
      digest_ptx(bytes, ptx_target(bytes), "", Normalizer{}, out);
    } else {
      throw DigestError(
        fmt::format("{}: not a CUDA artifact (expected an ELF object or cubin, a fatbin "
                    "with magic 0xBA55ED50, or PTX text)",
                    name));
    }
  } catch (const ElfError& error) {
    throw DigestError(error.what());
  } catch (const FatbinError& error) {
    throw DigestError(error.what());
  }
  result.components = out.take();
  return result;
}

ObjectDigests digest_artifact(const std::string& path)
{
  constexpr std::uint64_t k_max_artifact = 4ULL << 30;  // a linked test binary can be 1 GB
  const std::optional<std::string> bytes = try_read_file(path, k_max_artifact);
  if (!bytes) {
    const int error = errno;
    throw DigestError(fmt::format("{}: cannot read the file ({}); check that it exists and is a "
                                  "readable regular file",
                                  path,
                                  error == EINVAL  ? "not a regular file"
                                  : error == EFBIG ? "larger than 4 GiB"
                                                   : std::strerror(error)));
  }
  return digest_bytes(*bytes, path);
}

}  // namespace nvfresh

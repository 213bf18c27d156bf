// Reads CUDA fatbins: standalone .fatbin files and the fatbin embedded in a host object.
//
// Layout measured on nvcc 13.0 objects (all little-endian; offsets relative to the structure):
//   container header (16 bytes): +0 u32 magic 0xBA55ED50, +4 u16 version (1), +6 u16 header size (16),
//                                +8 u64 size of the entries that follow. Several containers may be
//                                concatenated (device link); zero padding may follow the last one.
//   entry header (>= 64 bytes):  +0 u16 kind (1 PTX, 2 ELF/cubin, 8 LTO-IR: NVVM bitcode for
//                                -dlto / code=lto_XX, nvcc 11.x to 13.x), +2 u16 (0x0101),
//                                +4 u32 header size (64, 72, 80, 96, 128 seen), +8 u64 payload size
//                                (padded to 8), +16 u32 compressed size (0 when stored plain),
//                                +20 u32 offset, inside the header, of the ptxas-options descriptor
//                                (PTX only: u32 offset + u32 length of an options string),
//                                +24 u16 minor, +26 u16 major (PTX ISA version, or 1.8 for cubins),
//                                +28 u32 arch (80 = sm_80 / compute_80),
//                                +32 u32 offset and +36 u32 length of the source name inside the header
//                                (present with -g/-G), +40 u64 flags, +48 u64 (0),
//                                +56 u64 uncompressed size (0 when stored plain).
//   flags: 0x1 64-bit, 0x2 debug (-g/-G), 0x10 Linux host, 0x2000 LZ4 block, 0x8000 zstd frame,
//          0x10000 LTO-IR, 0x100000 arch-specific (sm_90a, compute_100a), 0x200000 family-specific
//          (sm_100f); 0x1000000 is set on sm_100+ cubins.
// An entry of a kind not listed is read as opaque bytes ("entry kind N"), never called corrupt.
// LTO-IR payloads are stored in a form no public tool reads: they are kept as stored. They are
// identical for identical compiles of the same source path; the module id inside them (a hash of
// the absolute source path) makes them differ across checkouts at other paths.
// The payload follows the entry header; the next entry starts after header size + payload size.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

class ElfReader;

class FatbinError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class FatbinKind { ptx, cubin, ltoir, other };

enum class FatbinCompression { none, zstd, lz4 };

struct FatbinEntry {
  FatbinKind kind = FatbinKind::cubin;
  std::uint16_t raw_kind = 2;  // the kind field as stored (other: not one nvfresh names)
  std::uint32_t arch = 0;
  std::uint64_t flags = 0;
  FatbinCompression compression = FatbinCompression::none;
  std::uint64_t offset = 0;   // of the entry header inside the fatbin bytes
  std::string source_name;    // from the header (with -g/-G), else empty
  std::string ptxas_options;  // PTX entries: options recorded for the JIT, else empty
  std::string payload;        // PTX and cubins decompressed (PTX without its NUL padding); LTO-IR
                              // and unknown kinds as stored

  // "sm_80" (cubin), "compute_90a" (PTX), "lto_80" (LTO-IR), "arch_80" (other); "a"/"f" from the flags
  std::string arch_name() const;
  std::string kind_name() const;  // "cubin", "ptx", "ltoir", "entry kind 4"
  std::string key() const;        // "sm_80 cubin", "compute_90a ptx", "lto_80 ltoir"
};

std::string_view to_string(FatbinKind kind);
std::string_view to_string(FatbinCompression compression);

bool looks_like_fatbin(std::string_view bytes);

// Splits fatbin bytes into entries and decompresses their payloads. `what` names the bytes in error
// messages. Throws FatbinError on anything malformed (what is wrong, at which offset).
std::vector<FatbinEntry> read_fatbin(std::string_view bytes, const std::string& what);

// The fatbin sections of a host object: `.nv_fatbin` (whole-program compile) and `__nv_relfatbin`
// (-rdc=true). Empty when the object has no device code. Throws FatbinError when the object has a
// `.nvFatBinSegment` wrapper whose magic is wrong, or one but no fatbin section.
std::vector<std::string_view> find_fatbin_sections(const ElfReader& elf, const std::string& what);

bool is_fatbin_section_name(std::string_view name);

}  // namespace nvfresh

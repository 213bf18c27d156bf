// Normalized per-component digests of a compiled CUDA artifact (.o, .fatbin, .cubin, .ptx).
//
// Raw nvcc objects of identical compiles are never byte-equal: nvcc writes its temporary-file stem
// (tmpxft_<pid>_<n>) and, with -rdc=true, a module id starting with a hash of the absolute source path
// into them (see digest/normalize.hpp). The digests here rewrite those names first, then hash each
// component on its own, so that a comparison says *which* part changed:
//   "host code"          every host section except the fatbin and debug info
//   "host debug"         .debug_* sections (they hold directories, so they differ across checkouts)
//   "sm_80 cubin"        one per device ELF, payload decompressed; "sm_80 cubin debug" for its debug info
//   "compute_90 ptx"     one per PTX entry; "compute_90 ptx debug" for .file lines and .debug sections
//   "lto_80 ltoir"       one per LTO-IR entry (-dlto); "arch_80 entry kind N" for an unknown kind
//   "sm_100a ptx"        a PTX file, keyed by the architecture its .target names
#pragma once

#include "util/hasher.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

class DigestError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// One function with code: in a cubin a `.text.<name>` section; in PTX an `.entry` or `.func` with a
// body (see digest/ptx.hpp).
struct KernelInfo {
  std::string name;
  bool is_entry =
    false;  // a __global__ kernel (STO_CUDA_ENTRY, or PTX .entry), not a device function
  std::uint64_t code_size = 0;  // bytes of SASS (cubin) or of its text (PTX)
  std::uint64_t instruction_count = 0;
  std::optional<std::uint32_t> register_count;  // cubin: registers used; PTX: none
  std::string register_declarations;            // PTX: its virtual registers, "%r<40> %rd<30>"
  Digest code;  // cubin: the SASS bytes and .nv.info attributes; PTX: its text
  std::optional<Digest> code_without_register_numbers;  // PTX: its text with "%r12" read as "%r#"
};

enum class ComponentKind {
  host_code,
  host_debug,
  cubin,
  cubin_debug,
  ptx,
  ptx_debug,
  ltoir,   // NVVM bitcode for link-time optimization (-dlto, code=lto_XX)
  opaque,  // a fatbin entry of a kind nvfresh does not name: its bytes
};

struct ComponentDigest {
  std::string key;
  ComponentKind kind = ComponentKind::host_code;
  Digest digest;
  std::uint64_t size = 0;           // bytes hashed (after decompression)
  std::vector<KernelInfo> kernels;  // cubin and ptx components
  std::string ptx_text;             // ptx components only: the normalized PTX code, for diffs
  std::vector<std::uint32_t>
    ptx_line_numbers;  // ptx components: each ptx_text line's number (1-based) in the PTX
};

struct ObjectDigests {
  std::string path;
  std::string format;  // "host object", "fatbin", "cubin", "ptx"
  std::vector<ComponentDigest> components;

  const ComponentDigest* find(std::string_view key) const;
};

// Throws DigestError (unreadable, not an artifact, or malformed: what and where) on failure.
ObjectDigests digest_artifact(const std::string& path);
ObjectDigests digest_bytes(std::string_view bytes, const std::string& name);

std::string_view to_string(ComponentKind kind);

}  // namespace nvfresh

// A small walker over the .debug_info of a relocatable host object, for the rewrite that byte
// patterns cannot do: nvcc's fatbin.c declares `extern const unsigned long long fatbinData[N]`, where
// N is the size of the (zstd-compressed) fatbin in 8-byte words, written four words a line before the
// declarations. The compressed size moves with run-dependent bytes inside the fatbin (the tmpxft stem
// in a -G cubin's .note.nv.tkinfo, the source mtime in its line table), so two identical -g -G
// compiles can record N = 492 and N = 491, and declaration lines 138 and 137, in host debug info. The
// device code itself is compared by the cubin and PTX components.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace nvfresh {

// What the RELA relocations of .debug_info say about the places they patch (a relocatable object
// stores zeros there): the string a DW_FORM_strp/line_strp place points to, and the addend of any
// other place (e.g. a unit's debug_abbrev_offset).
struct DebugInfoRelocations {
  std::map<std::uint64_t, std::string> strings;
  std::map<std::uint64_t, std::uint64_t> addends;
};

// Rewrites, to zeros of the same length, the bound (DW_AT_upper_bound or DW_AT_count) of the array
// type that a DW_TAG_variable named `variable` has (through const, volatile and typedef), and the
// DW_AT_decl_line of every DIE declared in the same file as that variable (the lines after the data
// in fatbin.c move with its size: four words a line). Supports 32-bit DWARF 2-5 compile units; stops
// quietly at anything it cannot parse. Returns how many values were rewritten.
std::size_t normalize_generated_declaration(std::string& debug_info, std::string_view debug_abbrev,
                                            const DebugInfoRelocations& relocations,
                                            std::string_view variable);

}  // namespace nvfresh

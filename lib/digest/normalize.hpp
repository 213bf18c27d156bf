// Rewrites the names nvcc makes up per run or per directory, so that identical compiles digest alike.
// Every rewrite keeps the length, so ELF offsets stay valid and the result can still be parsed.
//
//   tmpxft_<8 hex pid>_<8 hex counter>  nvcc's temporary-file stem. It appears in the host object's
//                                       STT_FILE symbol, in _GLOBAL__sub_I_tmpxft_..., in host debug
//                                       info, and in a -G cubin's .note.nv.tkinfo (the ptxas command).
//                                       Both numbers become zeros.
//   _<8 hex>_<n>_<name>_<8 hex>         the module id (-rdc=true), found in section __nv_module_id. The
//                                       first hash is a hash of the absolute source path; it also
//                                       appears in __fatbinwrap_<id> and __cudaRegisterLinkedBinary_<id>.
//                                       The path hash becomes zeros; the rest of the id is kept.
//   source mtime in .debug_line         with -G or -lineinfo, ptxas writes each source file's mtime
//                                       (seconds, ULEB128: 5 bytes from 1978 to 3058) into the file_names
//                                       entries of the cubin's DWARF 2 line table; zeroed. A touch-only
//                                       change compares the same (measured with nvcc 13.0: the only
//                                       field that moves; .nv_debug_line_sass has no file entries).
#pragma once

#include <string>
#include <string_view>

namespace nvfresh {

// Rewrites every tmpxft stem in `bytes` in place; returns how many were rewritten.
std::size_t normalize_tmpxft_stems(std::string& bytes);

// The module id stored in a __nv_module_id section, or empty when it is the non-rdc placeholder
// "__NV_MODULE_ID" or does not have the measured shape.
std::string module_id_from_section(std::string_view section_data);

// `module_id` with its path hash replaced by zeros (same length).
std::string normalized_module_id(std::string_view module_id);

// Rewrites every occurrence of `module_id` in `bytes` in place; returns how many.
std::size_t normalize_module_id(std::string& bytes, std::string_view module_id);

// Rewrites the modification time of every file entry in the DWARF 2-4 line-table headers of a
// .debug_line section (a -G or -lineinfo cubin records the source file's mtime there) to a ULEB128 zero of the
// same length. Stops quietly at anything it cannot parse; returns how many times were rewritten.
std::size_t normalize_dwarf_line_mtimes(std::string& debug_line);

// PTX with virtual register numbers factored out: "%r123" -> "%r#", "%rd4" -> "%rd#".
std::string ptx_without_register_numbers(std::string_view ptx);

}  // namespace nvfresh

// The table of nvcc's options: every spelling, how its value is attached, and what it means to
// nvfresh. command_line.cpp walks argv with it; no per-option decision lives anywhere else.
//
// Spellings are exact and case sensitive, as nvcc takes them (checked against nvcc 13.0, which
// rejects "-compile", "--arch" or "--I": a long name always has two dashes, a short one one dash).
// A value option takes its value as the next word or after '=' ("-o x", "-o=x", "--output-file x",
// "--output-file=x"). Rows with JoinedValue::any or ::digits also take a value glued to their
// short spelling ("-I/usr/include", "-DFOO=1", "-O3", "-t4"); nvcc accepts no other joined form
// ("-ofoo.o", "-xcu", "-MFdep.d" and "-isystem/x" are errors in nvcc 13.0).
// A comma-list value is split by nvcc on commas outside double quotes and brackets
// ("-I a,b" adds two directories; "-DX=f(a,b)" defines X=f(a and b)).
//
// Sources: `nvcc --help` of nvcc 13.0 (authoritative for spellings), the nvcc 11.8 and 12.x manuals
// (options they have and 13.0 dropped are kept, so that older command lines parse), and the
// undocumented but accepted -Xcudafe and -Xfatbin.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace nvfresh {

// What an option means to nvfresh.
enum class OptionRole {
  hash,               // changes what the compile produces: kept in the signature
  pass_only,          // passed to nvcc, cannot change the object or its success (--threads, -v)
  output,             // -o: the object's path, not part of the signature
  compile_mode,       // -c, -dc, -ptx, ...: which CompileMode (see NvccOption::mode)
  not_a_compile,      // -E, -M, --version, link, -dlink, ...: nothing nvfresh records
  too_hard,           // writes files nvfresh does not track or runs nothing (-save-temps, -time)
  gpu_architecture,   // -arch
  gpu_code,           // -code
  generate_code,      // -gencode
  relocatable,        // -rdc {true|false}
  include_dir,        // -I, -isystem (see NvccOption::include_kind)
  define_macro,       // -D
  undefine_macro,     // -U
  pre_include,        // -include
  host_compiler,      // -ccbin
  language,           // -x
  host_options,       // -Xcompiler: hashed, and read for -I/-isystem/-D/-include
  depfile_system,     // -MD: dependency file with system headers, written with the compile
  depfile_nonsystem,  // -MMD
  depfile_path,       // -MF
  depfile_target,     // -MT
  depfile_phony,      // -MP
  options_file,       // --options-file: expanded in place, recorded as an input
};

enum class ValueKind {
  none,        // a flag
  single,      // one value
  comma_list,  // nvcc splits the value on commas
};

enum class JoinedValue {
  no,      // "-opt v" and "-opt=v" only
  any,     // also "-optVALUE" (short spelling only)
  digits,  // also "-optN" when N is all digits ("-t4"; "-traditional" stays an unknown option)
};

// Which phase a compile_mode option selects; mirrors CompileMode plus the -dw/-rdc nuance.
enum class ModeKind {
  none,
  compile,   // -c
  device_c,  // -dc: -c with relocatable device code
  device_w,  // -dw: -c with relocatable device code off
  ptx,
  cubin,
  fatbin,
  optix_ir,
  ltoir,
};

enum class IncludeDirKind { none, normal, system };

struct NvccOption {
  std::string_view long_name;   // "--output-file"; empty when nvcc has only one spelling
  std::string_view short_name;  // "-o"; empty when nvcc has only the long spelling
  ValueKind value = ValueKind::none;
  JoinedValue joined = JoinedValue::no;
  bool value_is_path = false;
  OptionRole role = OptionRole::hash;
  ModeKind mode = ModeKind::none;
  IncludeDirKind include_kind = IncludeDirKind::none;

  bool takes_value() const { return value != ValueKind::none; }
  // The spelling written into signatures: the long one where nvcc has one.
  std::string_view canonical_name() const { return long_name.empty() ? short_name : long_name; }
};

// Every row of the table, in the order of `nvcc --help`.
std::span<const NvccOption> nvcc_options();

// One argv word matched against the table.
struct OptionMatch {
  const NvccOption* option = nullptr;
  std::string_view spelling;  // the spelling that matched
  std::optional<std::string_view>
    value;  // set when the value was in the same word ("=v" or joined)
};

// Matches one word: an exact spelling, "spelling=value", or a joined short spelling.
// Returns nullopt for words that are not nvcc options (unknown options and input files).
std::optional<OptionMatch> match_nvcc_option(std::string_view word);

std::string_view describe(OptionRole role);

}  // namespace nvfresh

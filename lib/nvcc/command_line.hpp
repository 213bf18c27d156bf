// nvcc's command line -> a CompileRequest, or the reason nvfresh must not handle it.
//
// Input: the arguments after the compiler (argv[1..] of nvcc), the environment the compile gets
// (NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS are merged as nvcc merges them) and the working directory
// (relative --options-file paths are read from there). The option spellings and roles come from
// the table in nvcc_options.hpp; this module only walks the arguments.
#pragma once

#include "outcome/outcome.hpp"
#include "util/environment.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

enum class CompileMode {
  object,       // -c / --compile (whole-program device code)
  relocatable,  // -dc, or -c with -rdc=true
  ptx,          // -ptx
  cubin,        // -cubin
  fatbin,       // -fatbin
  optix_ir,     // -optix-ir
  ltoir,        // -ltoir (nvcc 12.x and later)
};

enum class IncludeKind {
  quote,   // -iquote: only for #include "..."
  normal,  // -I / --include-path
  system,  // -isystem / --system-include
  after,   // -idirafter
};

struct IncludeDir {
  std::string path;
  IncludeKind kind = IncludeKind::normal;
  bool operator==(const IncludeDir&) const = default;
};

// One device compilation: a virtual architecture and the real architectures built from it.
// As nvcc 13.0 builds them (checked with --dryrun): "-arch=sm_80" gives {compute_80, {sm_80,
// compute_80}}; "-arch=compute_80" gives {compute_80, {compute_80}}; "-arch=compute_80
// -code=sm_80,sm_86" gives {compute_80, {sm_80, sm_86}}; "-arch=lto_80" gives {compute_80, {lto_80}};
// "-gencode arch=compute_90a,code=[sm_90a,compute_90a]" gives {compute_90a, {sm_90a, compute_90a}}.
// -arch=all / all-major give {"all"|"all-major", {}}: their expansion depends on the nvcc version.
// -arch together with -gencode gives both. With no arch option nvcc's default is filled in.
struct DevicePass {
  std::string virtual_arch;
  std::vector<std::string> real_archs;
  bool operator==(const DevicePass&) const = default;
};

// What the build system asked for: -MD/-MMD (with -MF, -MT, -MP) or their long forms.
struct DepfileRequest {
  bool wanted = false;         // -MD or -MMD (dependency file written as a side effect)
  bool system_headers = true;  // false with -MMD
  std::string path;            // -MF; empty = nvcc's default (output with .d)
  std::string target;          // -MT verbatim; empty = nvcc's default (the output)
  bool phony_targets = false;  // -MP
  bool operator==(const DepfileRequest&) const = default;
};

struct CompileRequest {
  // NVCC_PREPEND_FLAGS + arguments with --options-file expanded + NVCC_APPEND_FLAGS.
  std::vector<std::string> effective_args;
  std::string source;           // as written on the command line
  std::string output;           // -o; empty = nvcc's default (source stem + .o, in cwd)
  std::string language = "cu";  // -x value, or from the source's extension
  CompileMode mode = CompileMode::object;
  std::vector<DevicePass> device_passes;
  std::string host_compiler;  // -ccbin value; empty = nvcc's default
  // In the order the host preprocessor receives them: directories given to the host compiler
  // through -Xcompiler (-I, -isystem, -iquote, -idirafter) first, because nvcc places them before
  // its own; then nvcc's -I / -isystem, each in command-line order.
  std::vector<IncludeDir> include_dirs;
  std::vector<std::string> forced_includes;  // -include / --pre-include, then -Xcompiler's
  // "-DNAME=VALUE" / "-DNAME" / "-UNAME": nvcc's in command-line order, then -Xcompiler's.
  std::vector<std::string> defines;
  std::vector<std::string> options_files;  // every --options-file read (inputs of the compile)
  DepfileRequest depfile;
  // The arguments that decide what the compile produces, normalized (one spelling per option,
  // values attached with '='), in order. Output path and depfile control are left out.
  // Normalized means: the option's long spelling where nvcc has one ("--compile",
  // "--define-macro=FOO=1"), one entry per item of a comma list ("-I a,b" gives
  // "--include-path=a" and "--include-path=b"), options files expanded in place, pass-only options
  // (--threads, --verbose, ...) left out; unknown options and the source kept verbatim.
  std::vector<std::string> signature_args;
};

struct ParseResult {
  std::optional<CompileRequest> request;  // set when reason == none
  Cause reason = Cause::none;
  std::string detail;  // e.g. the option that caused the fallback
};

// The GPU architecture nvcc compiles for when the command line names none. Version dependent:
// nvcc 11.8 and 12.x use sm_52, nvcc 13.x sm_75 (it dropped sm_5x..sm_7.2). The constant is the
// default of the nvcc these machines run (13.x); callers that know the nvcc version use
// default_gpu_architecture().
inline constexpr std::string_view k_default_gpu_architecture = "sm_75";
std::string_view default_gpu_architecture(int nvcc_major_version);

// default_arch: the real architecture nvcc uses without -arch/-gencode (see above).
ParseResult parse_command_line(const std::vector<std::string>& args, const Environment& env,
                               const std::string& working_dir,
                               std::string_view default_arch = k_default_gpu_architecture);

// nvcc's words with every --options-file / -optf (and their =file and comma-list forms, nested
// files too) replaced by the words of the file, read relative to working_dir: what
// parse_command_line does first. nullopt when a file cannot be read, nests too deep, or an option
// lacks its value.
std::optional<std::vector<std::string>> expand_nvcc_options_files(
  const std::vector<std::string>& words, const std::string& working_dir);

// Splits an options-file body the way nvcc 13.0 does (measured): whitespace separates words;
// double quotes group and are removed; inside double quotes a backslash escapes '"' and '\';
// outside quotes a backslash escapes the next character; single quotes are ordinary characters
// (nvcc rejects "-DQ='a b'" in an options file). A CMake response file line
// -DBAR="\"quoted value\"" gives the word -DBAR="quoted value", the same word as on argv.
std::vector<std::string> split_nvcc_words(const std::string& text);

// Splits NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS the way nvcc 13.0 does (measured): whitespace
// separates words; double quotes group and are kept in the word (NVCC_APPEND_FLAGS='-DQ="a b"'
// defines Q as "a b" with its quotes); backslashes and single quotes are ordinary characters.
std::vector<std::string> split_nvcc_env_flags(const std::string& text);

}  // namespace nvfresh

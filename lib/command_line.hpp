// nvcc's command line -> a CompileRequest, or the reason nvfresh must not handle it.
//
// Input: the arguments after the compiler (argv[1..] of nvcc), the environment the compile gets
// (NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS are merged as nvcc merges them) and the working directory
// (relative --options-file paths are read from there). The option spellings and roles come from
// the table in nvcc_options.hpp; this module only walks the arguments.
#pragma once

#include "fallback.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

using Environment = std::map<std::string, std::string>;

enum class CompileMode {
  object,          // -c / --compile (whole-program device code)
  relocatable,     // -dc, or -c with -rdc=true
  ptx,             // -ptx
  cubin,           // -cubin
  fatbin,          // -fatbin
  optix_ir,        // -optix-ir
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
// "-arch=sm_80" gives {compute_80, {sm_80}}; "-gencode arch=compute_90a,code=[sm_90a,compute_90a]"
// gives {compute_90a, {sm_90a, compute_90a}}. With no arch option nvcc's default is filled in.
struct DevicePass {
  std::string virtual_arch;
  std::vector<std::string> real_archs;
  bool operator==(const DevicePass&) const = default;
};

// What the build system asked for: -MD/-MMD (with -MF, -MT, -MP) or their long forms.
struct DepfileRequest {
  bool wanted = false;          // -MD or -MMD (dependency file written as a side effect)
  bool system_headers = true;   // false with -MMD
  std::string path;             // -MF; empty = nvcc's default (output with .d)
  std::string target;           // -MT verbatim; empty = nvcc's default (the output)
  bool phony_targets = false;   // -MP
  bool operator==(const DepfileRequest&) const = default;
};

struct CompileRequest {
  // NVCC_PREPEND_FLAGS + arguments with --options-file expanded + NVCC_APPEND_FLAGS.
  std::vector<std::string> effective_args;
  std::string source;                 // as written on the command line
  std::string output;                 // -o; empty = nvcc's default (source stem + .o, in cwd)
  std::string language = "cu";        // -x value, or from the source's extension
  CompileMode mode = CompileMode::object;
  std::vector<DevicePass> device_passes;
  std::string host_compiler;          // -ccbin value; empty = nvcc's default
  std::vector<IncludeDir> include_dirs;         // in command-line order
  std::vector<std::string> forced_includes;     // -include / --pre-include, in order
  std::vector<std::string> defines;             // "-DNAME=VALUE" / "-UNAME", in order
  std::vector<std::string> options_files;       // every --options-file read (inputs of the compile)
  DepfileRequest depfile;
  // The arguments that decide what the compile produces, normalized (one spelling per option,
  // values attached with '='), in order. Output path and depfile control are left out.
  std::vector<std::string> signature_args;
};

struct ParseResult {
  std::optional<CompileRequest> request;             // set when reason == none
  FallbackReason reason = FallbackReason::none;
  std::string detail;                                // e.g. the option that caused the fallback
};

ParseResult parse_command_line(const std::vector<std::string>& args, const Environment& env,
                               const std::string& working_dir);

// Splits an options-file body or an NVCC_*_FLAGS value the way nvcc does (whitespace separated,
// single and double quotes group, backslash escapes the next character).
std::vector<std::string> split_nvcc_words(const std::string& text);

} // namespace nvfresh

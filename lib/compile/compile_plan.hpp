// Planning one compile: where its record goes, the private directory for the trace and nvcc's
// temporary files, and the environment the compiler gets (tracer preloaded, nested-call marker).
#pragma once

#include "config/config.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"

#include <string>

namespace nvfresh {

constexpr const char* k_nested_marker = "NVFRESH_ACTIVE";

struct CompilePlan {
  std::string working_dir;
  std::string record_root;
  std::string record_file;
  std::string object;        // canonical absolute path of the output
  std::string source;        // absolute path of the source
  std::string depfile_path;  // where the build asked for a depfile (absolute), "" when none
  std::string depfile_target;
  std::string private_dir;  // removed after the compile
  std::string trace_file;
  std::string compiler_tmp_dir;
  std::string compiler_path;  // the nvcc that will run, absolute with symlinks resolved
  Environment child_env;
};

// Throws std::runtime_error when the plan cannot be made (no tracer, no temporary directory).
CompilePlan plan_compile(const CompileRequest& request, const CompilerChain& chain,
                         const Config& config, const Environment& env,
                         const std::string& working_dir);

// nvcc's default output for a compile without -o: the source's stem + ".o" (".ptx", ...), in cwd.
std::string default_output(const CompileRequest& request);

// Where the tracer library is: the configured path, else next to the nvfresh executable.
std::string locate_trace_library(const Config& config);

void remove_private_dir(const CompilePlan& plan);

}  // namespace nvfresh

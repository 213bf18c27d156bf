// Planning one compile: where its record goes, what the object, source and depfile are, which nvcc
// runs, the command signature, and the environment the compiler gets (tracer preloaded,
// nested-call marker). Pure: it looks things up (PATH, the tracer, the build tree) but writes
// nothing; running the plan is compile.cpp's job. nvcc's own TMPDIR is left as the build has it:
// its temporary files, and so the paths gcc writes into debug info, are what plain nvcc gives.
#pragma once

#include "config/config.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "util/environment.hpp"
#include "util/hasher.hpp"

#include <map>
#include <string>

namespace nvfresh {

constexpr const char* k_nested_marker = "NVFRESH_ACTIVE";

struct CompilePlan {
  std::string working_dir;
  std::string record_root;
  // The compile's ledger of remote time (cache/remote_budget.hpp), NVFRESH_REMOTE_LEDGER in
  // child_env; "" when no remote is set
  std::string remote_ledger;
  // The socket name of the compile's remote helper co-process (cache/remote_coprocess.hpp),
  // NVFRESH_REMOTE_SOCKET in child_env; "" when no remote is set
  std::string remote_socket;
  std::string record_file;
  std::string hash_cache;         // the tree's stat-keyed hash cache (freshness/file_hasher.hpp)
  std::string shared_hash_cache;  // the object cache's, for every tree ("" with the cache off)
  std::string object;             // canonical absolute path of the output
  std::string source;             // absolute path of the source
  std::string depfile_path;       // where the build asked for a depfile (absolute), "" when none
  std::string depfile_target;
  std::string compiler_path;  // the nvcc that will run, absolute with symlinks resolved
  std::string trace_library;  // the LD_PRELOAD tracer
  Environment child_env;      // the compiler's environment, but for the trace socket (run time)
  std::map<std::string, std::string> signature_env;  // the compile-relevant part of child_env
  Digest signature;  // command_signature(request.signature_args, signature_env, cwd)
};

// Throws std::runtime_error when the plan cannot be made (no nvcc, no tracer); the message says
// what is missing and what to do.
CompilePlan plan_compile(const CompileRequest& request, const CompilerChain& chain,
                         const Config& config, const Environment& env,
                         const std::string& working_dir);

// Where the tracer library is: the configured path, else next to the nvfresh executable. Throws
// when it is missing or is not a shared library for this machine (ld.so would print an error for
// every process of the compile).
std::string locate_trace_library(const Config& config);

}  // namespace nvfresh

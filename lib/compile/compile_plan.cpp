#include "compile/compile_plan.hpp"

#include "cache/cache_store.hpp"
#include "cache/object_cache.hpp"
#include "cache/remote_budget.hpp"
#include "cache/remote_coprocess.hpp"
#include "protocol/helper_socket.hpp"
#include "step/step_runner.hpp"

#include "nvcc/output_names.hpp"
#include "outcome/outcome.hpp"
#include "record/record_root.hpp"
#include "record/signature.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/installed_libraries.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

std::string preload_value(const Environment& env, const std::string& library)
{
  auto existing = env.find("LD_PRELOAD");
  if (existing == env.end() || existing->second.empty()) {
    return library;
  }
  return library + ":" + existing->second;
}

// A shared object ld.so can preload into this process's kind of programs: a 64-bit ELF shared
// object for this machine. Anything else makes ld.so print "cannot be preloaded" once for every
// process of the compile.
bool is_preloadable(const std::string& path)
{
  auto head = try_read_file_prefix(path, sizeof(Elf64_Ehdr));
  if (!head || head->size() < sizeof(Elf64_Ehdr)) {
    return false;
  }
  Elf64_Ehdr header{};
  std::memcpy(&header, head->data(), sizeof header);
  return std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
         header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_type == ET_DYN &&
         header.e_machine == EM_X86_64;
}

}  // namespace

std::string locate_trace_library(const Config& config)
{
  if (!config.trace_lib.empty()) {
    if (!stat_file(config.trace_lib).is_regular) {
      throw OutcomeError(
        Cause::tracer_unusable,
        fmt::format("NVFRESH_TRACE_LIB names {}, which does not exist", config.trace_lib));
    }
    if (!is_preloadable(config.trace_lib)) {
      throw OutcomeError(
        Cause::tracer_unusable,
        fmt::format("NVFRESH_TRACE_LIB names {}, which is not a shared library for "
                    "this machine",
                    config.trace_lib));
    }
    return config.trace_lib;
  }
  if (std::string installed = locate_installed_library("libnvfresh_trace.so"); !installed.empty()) {
    return installed;
  }
  std::error_code error;
  const fs::path exe_dir = fs::canonical("/proc/self/exe", error).parent_path();
  throw OutcomeError(Cause::tracer_unusable,
                     fmt::format("the tracer libnvfresh_trace.so is not installed next to {} "
                                 "(set NVFRESH_TRACE_LIB to its path)",
                                 exe_dir.string()));
}

CompilePlan plan_compile(const CompileRequest& request, const CompilerChain& chain,
                         const Config& config, const Environment& env,
                         const std::string& working_dir)
{
  CompilePlan plan;
  plan.working_dir = working_dir;
  std::string compiler = find_program(chain.compiler, env);
  if (compiler.empty()) {
    throw OutcomeError(Cause::runner_failed,
                       fmt::format("{}: command not found in PATH", chain.compiler));
  }
  plan.compiler_path = fs::weakly_canonical(absolute_path(compiler, working_dir)).string();
  std::string output = request.output.empty() ? default_output(request) : request.output;
  plan.object = canonical_object_path(output, working_dir);
  plan.source = absolute_path(request.source, working_dir);
  plan.record_root = find_record_root(config.record_dir, working_dir);
  plan.record_file = record_file_for(plan.record_root, plan.object);
  plan.hash_cache = hash_cache_file(plan.record_root);
  // The hash cache in a cache dir that is not used (not the user's, writable by others) is not
  // trusted either: its lines would tell what a file holds.
  const CacheSettings cache = cache_settings(config, env);
  const bool cache_usable = cache.enabled && cache_dir_refusal(cache.dir, cache.shared).empty();
  if (cache_usable) {
    plan.shared_hash_cache = shared_hash_cache_file(cache.dir);
  }
  if (request.depfile.wanted) {
    std::string path = request.depfile.path.empty()
                         ? fs::path(output).replace_extension(".d").string()
                         : request.depfile.path;
    plan.depfile_path = absolute_path(path, working_dir);
    plan.depfile_target = request.depfile.target.empty() ? output : request.depfile.target;
  }
  plan.trace_library = locate_trace_library(config);
  plan.child_env = env;
  plan.child_env.insert_or_assign(k_nested_marker, std::string(1, '1'));  // GCC 12 PR105329
  plan.child_env["LD_PRELOAD"] = preload_value(env, plan.trace_library);
  // The step cache: the tracer runs cicc and ptxas through this executable (step/step_runner.hpp).
  for (const char* name : {k_step_runner_variable, k_step_record_root_variable,
                           k_step_object_variable, k_step_run_variable}) {
    plan.child_env.erase(name);
  }
  plan.child_env.erase(k_remote_ledger_variable);
  plan.child_env.erase(k_helper_socket_variable);
  if (cache_usable && !config.remote.empty()) {
    plan.remote_ledger =
      fmt::format("{}/remote-time/{}-{}", plan.record_root, monotonic_now_ns(), ::getpid());
    plan.child_env[k_remote_ledger_variable] = plan.remote_ledger;
    plan.remote_socket = new_helper_socket_name();
    plan.child_env[k_helper_socket_variable] = plan.remote_socket;
  }
  if (cache_usable && !is_false(config.step_cache)) {
    if (std::string self = this_executable(); !self.empty()) {
      plan.child_env[k_step_runner_variable] = self;
      plan.child_env[k_step_record_root_variable] = plan.record_root;
      plan.child_env[k_step_object_variable] = plan.object;
      plan.child_env[k_step_run_variable] = fmt::format("{}-{}", now_ns(), ::getpid());
    }
  }
  plan.signature_env = compile_environment(plan.child_env);
  plan.signature = command_signature(request.signature_args, plan.signature_env, working_dir);
  return plan;
}

}  // namespace nvfresh

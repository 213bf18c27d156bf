#include "compile/compile_plan.hpp"

#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/installed_libraries.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <stdlib.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

struct ModeSuffix {
  CompileMode mode;
  const char* suffix;
};

constexpr ModeSuffix k_mode_suffixes[] = {
  {CompileMode::object, ".o"},      {CompileMode::relocatable, ".o"},
  {CompileMode::ptx, ".ptx"},       {CompileMode::cubin, ".cubin"},
  {CompileMode::fatbin, ".fatbin"}, {CompileMode::optix_ir, ".optixir"},
};

std::string make_private_dir(const Environment& env)
{
  auto tmp = env.find("TMPDIR");
  std::string base = tmp != env.end() && !tmp->second.empty() ? tmp->second : "/tmp";
  std::string pattern = base + "/nvfresh.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(
      fmt::format("cannot create a temporary directory in {}: {}", base, std::strerror(errno)));
  }
  return pattern;
}

std::string preload_value(const Environment& env, const std::string& library)
{
  auto existing = env.find("LD_PRELOAD");
  if (existing == env.end() || existing->second.empty()) {
    return library;
  }
  return library + ":" + existing->second;
}

}  // namespace

std::string default_output(const CompileRequest& request)
{
  std::string suffix = ".o";
  for (const auto& entry : k_mode_suffixes) {
    if (entry.mode == request.mode) {
      suffix = entry.suffix;
    }
  }
  return fs::path(request.source).stem().string() + suffix;
}

std::string locate_trace_library(const Config& config)
{
  if (!config.trace_lib.empty()) {
    if (!stat_file(config.trace_lib).is_regular) {
      throw std::runtime_error(
        fmt::format("NVFRESH_TRACE_LIB names {}, which does not exist", config.trace_lib));
    }
    return config.trace_lib;
  }
  if (std::string installed = locate_installed_library("libnvfresh_trace.so"); !installed.empty()) {
    return installed;
  }
  std::error_code error;
  const fs::path exe_dir = fs::canonical("/proc/self/exe", error).parent_path();
  throw std::runtime_error(fmt::format("the tracer libnvfresh_trace.so is not installed next to {} "
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
    throw std::runtime_error(fmt::format("{}: command not found in PATH", chain.compiler));
  }
  plan.compiler_path = fs::weakly_canonical(absolute_path(compiler, working_dir)).string();
  std::string output = request.output.empty() ? default_output(request) : request.output;
  plan.object = canonical_object_path(output, working_dir);
  plan.source = absolute_path(request.source, working_dir);
  plan.record_root = find_record_root(config.record_dir, working_dir);
  plan.record_file = record_file_for(plan.record_root, plan.object);
  if (request.depfile.wanted) {
    std::string path = request.depfile.path.empty()
                         ? fs::path(output).replace_extension(".d").string()
                         : request.depfile.path;
    plan.depfile_path = absolute_path(path, working_dir);
    plan.depfile_target = request.depfile.target.empty() ? output : request.depfile.target;
  }
  std::string trace_library = locate_trace_library(config);
  plan.private_dir = make_private_dir(env);
  plan.trace_file = plan.private_dir + "/trace";
  plan.compiler_tmp_dir = plan.private_dir + "/tmp";
  fs::create_directories(plan.compiler_tmp_dir);
  plan.child_env = env;
  plan.child_env[k_nested_marker] = "1";
  plan.child_env["LD_PRELOAD"] = preload_value(env, trace_library);
  plan.child_env["NVFRESH_TRACE_FILE"] = plan.trace_file;
  plan.child_env["TMPDIR"] = plan.compiler_tmp_dir;
  return plan;
}

void remove_private_dir(const CompilePlan& plan)
{
  std::error_code ignored;
  if (!plan.private_dir.empty()) {
    fs::remove_all(plan.private_dir, ignored);
  }
}

}  // namespace nvfresh

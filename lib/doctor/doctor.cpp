#include "doctor/doctor.hpp"

#include "cache/object_cache.hpp"
#include "config/config.hpp"
#include "doctor/build_tool.hpp"
#include "record/record_root.hpp"
#include "space/cmake_cache.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <algorithm>
#include <filesystem>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr int k_nested_tree_depth = 6;

std::string resolve_program(const std::string& program, const Environment& env)
{
  std::string path = program.find('/') == std::string::npos ? find_program(program, env) : program;
  std::error_code error;
  fs::path canonical = path.empty() ? fs::path() : fs::canonical(path, error);
  return error ? std::string() : canonical.string();
}

// nvcc as a symlink to nvfresh (a name containing "nvcc"): `nvfresh nvcc`.
bool resolves_to_nvfresh(const std::string& program)
{
  return file_name_of(resolve_program(program, current_environment())) == "nvfresh";
}

TreeCommands tree_commands(const std::string& tree)
{
  TreeCommands commands{tree, {}, load_build_commands(tree), {}};
  commands.runs = nvcc_runs_of(commands.commands.commands, resolves_to_nvfresh);
  commands.source = commands.commands.generator == "ninja"  ? tree + "/build.ninja"
                    : commands.commands.generator == "make" ? tree + " (Makefiles)"
                                                            : tree;
  return commands;
}

// The nvcc run the probe imitates: the first compile through nvfresh, else any compile.
const NvccRun* model_compile(const std::vector<NvccRun>& runs)
{
  auto through = std::find_if(runs.begin(), runs.end(), [](const NvccRun& run) {
    return run.compile && run.through_nvfresh;
  });
  if (through != runs.end()) {
    return &*through;
  }
  auto any = std::find_if(runs.begin(), runs.end(), [](const NvccRun& run) { return run.compile; });
  return any != runs.end() ? &*any : nullptr;
}

std::string self_executable()
{
  std::error_code error;
  fs::path self = fs::canonical("/proc/self/exe", error);
  return error ? std::string("nvfresh") : self.string();
}

void plan_toolchain(DoctorPlan& plan, const CMakeCacheFacts& facts, const Environment& env)
{
  const NvccRun* model = model_compile(plan.nvcc_runs);
  plan.probe.nvcc = model != nullptr               ? model->nvcc
                    : !facts.cuda_compiler.empty() ? facts.cuda_compiler
                                                   : std::string("nvcc");
  plan.probe.host_compiler = model != nullptr && !model->host_compiler.empty()
                               ? model->host_compiler
                               : facts.cuda_host_compiler;
  plan.probe.nvfresh = self_executable();
  plan.probe.env = env;
  plan.probe.scratch_parent = env_value(env, "TMPDIR").empty() ? "/tmp" : env_value(env, "TMPDIR");
  plan.programs.push_back({"nvcc", plan.probe.nvcc, resolve_program(plan.probe.nvcc, env)});
  if (!plan.probe.host_compiler.empty()) {
    plan.programs.push_back(
      {"host compiler", plan.probe.host_compiler, resolve_program(plan.probe.host_compiler, env)});
  } else {  // nvcc 13.0 runs "gcc" from PATH for every host step (checked with -dryrun)
    plan.programs.push_back({"host compiler", "gcc", resolve_program("gcc", env)});
  }
}

}  // namespace

std::vector<std::string> nested_build_trees(const std::string& build_dir)
{
  std::vector<std::string> trees;
  std::error_code error;
  for (fs::recursive_directory_iterator it(build_dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(error) || it->is_symlink(error)) {
      continue;
    }
    if (name == "CMakeFiles" || name == ".nvfresh" || it.depth() >= k_nested_tree_depth) {
      it.disable_recursion_pending();
      continue;
    }
    if (stat_file(it->path().string() + "/CMakeCache.txt").is_regular) {
      trees.push_back(it->path().string());
      it.disable_recursion_pending();
    }
  }
  std::sort(trees.begin(), trees.end());
  return trees;
}

DoctorPlan plan_doctor(const std::string& build_dir, const Environment& env)
{
  DoctorPlan plan;
  plan.build_dir = absolute_path(build_dir, current_directory());
  plan.trees.push_back(tree_commands(plan.build_dir));
  for (const auto& nested : nested_build_trees(plan.build_dir)) {
    plan.trees.push_back(tree_commands(nested));
  }
  for (const auto& tree : plan.trees) {
    plan.nvcc_runs.insert(plan.nvcc_runs.end(), tree.runs.begin(), tree.runs.end());
  }
  const CMakeCacheFacts facts = read_cmake_cache(plan.build_dir).value_or(CMakeCacheFacts{});
  plan.generator = plan.trees.front().commands.generator;
  plan.build_program = !facts.make_program.empty() ? facts.make_program
                       : plan.generator == "make"  ? std::string("make")
                                                   : std::string("ninja");
  plan_toolchain(plan, facts, env);
  const Config config = load_config(env);
  plan.record_root = record_root_of_build_dir(config.record_dir, plan.build_dir);
  plan.disabled_here = config.disabled;
  plan.space_floor = config.space_floor;
  const CacheSettings cache = cache_settings(config, env);
  plan.cache = {cache.enabled, cache.dir, cache.shared, cache.min_free};
  return plan;
}

std::vector<SetupCheck> run_setup_checks(const DoctorPlan& plan)
{
  std::vector<SetupCheck> checks;
  checks.push_back(check_compiles_through_nvfresh(plan.trees));
  checks.push_back(judge_launchers(gather_launchers(plan.nvcc_runs, plan.probe.env)));
  checks.push_back(
    judge_last_build(gather_last_build(plan.trees.front(), plan.record_root, plan.disabled_here)));
  checks.push_back(check_sync_wired(plan.trees.front()));
  checks.push_back(run_tracer_probe(plan.probe));
  checks.push_back(check_record_root(plan.record_root, plan.space_floor));
  checks.push_back(check_cache_dir(plan.cache));
  checks.push_back(check_compiler_caches(plan.nvcc_runs, plan.programs));
  if (!plan.generator.empty()) {
    checks.push_back(
      judge_build_tool(plan.generator, plan.build_program,
                       capture_output({plan.build_program, "--version"}, plan.probe.env)));
  }
  return checks;
}

}  // namespace nvfresh

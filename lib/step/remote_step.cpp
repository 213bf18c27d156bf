#include "step/remote_step.hpp"

#include "cache/cache_storage.hpp"
#include "cache/step_entry.hpp"
#include "util/build_invocation.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace nvfresh {

namespace {

// An absolute path's name in an input root that the runner shows at '/'.
std::string root_name(const std::string& absolute)
{
  return absolute.substr(absolute.find_first_not_of('/'));
}

bool marker_expired(const std::string& marker)
{
  const FileStat stat = stat_file(marker);
  return stat.exists && now_ns() - stat.mtime_ns > CacheStorage::k_failure_marker_life_ns;
}

void say(const std::string& line)
{
  std::fflush(stdout);
  std::fputs(("nvfresh: " + line + "\n").c_str(), stderr);
}

// The executor failed (not the step): said once per build, not asked again in it.
void executor_failed(RemoteExecutor& executor, const Step& step, const std::string& what)
{
  log::info("remote execution: {} failed for {}: {} (running it locally)",
            executor.remote.settings().url, tool_name(step), what);
  if (marker_expired(executor.failure_marker)) {
    std::error_code ignored;
    fs::remove(executor.failure_marker, ignored);
  }
  if (first_time_this_build(executor.failure_marker)) {
    say(fmt::format("remote execution at {} failed: {} (cicc and ptxas run locally; asked again "
                    "in {} minutes; said once per build)",
                    executor.remote.settings().url, what,
                    CacheStorage::k_failure_marker_life_ns / k_minute_ns));
  }
}

void step_failed_there(RemoteExecutor& executor, const Step& step, int exit_code)
{
  log::info("remote execution: {} exited with status {} on the worker (running it locally)",
            tool_name(step), exit_code);
  if (first_time_this_build(executor.step_failed_marker)) {
    say(fmt::format("a step failed on the remote executor {} ({} exited with status {} there): it "
                    "runs locally (said once per build)",
                    executor.remote.settings().url, tool_name(step), exit_code));
  }
}

}  // namespace

RemoteStepAction remote_step_action(const Step& step, const std::set<std::string>& given_files)
{
  RemoteStepAction built;
  ActionSpec& action = built.action;
  action.salt = std::string(k_step_key_version) + "/execute";
  action.arguments = {"/bin/sh",           "-c",     k_check_script, "nvfresh-step",
                      k_toolkit_sums_path, step.cwd, step.tool_exe};
  for (size_t i = 1; i < step.argv.size(); ++i) {
    const std::string& word = step.argv[i];
    action.arguments.push_back(word);
    if (!has_stem(word, step.temp)) {
      continue;
    }
    const std::string path = absolute_path(word, step.cwd);
    if (given_files.contains(path)) {
      action.input_files[root_name(path)] = path;
    } else {
      action.output_paths.push_back(root_name(path));
      built.outputs[root_name(path)] = path;
    }
  }
  return built;
}

std::vector<std::string> toolkit_files(const std::string& tool_exe)
{
  const fs::path tool(tool_exe);
  const fs::path root = tool.filename() == "cicc" ? tool.parent_path().parent_path().parent_path()
                                                  : tool.parent_path().parent_path();
  std::vector<std::string> files;
  for (const char* part :
       {"nvvm/bin/cicc", "bin/ptxas", "nvvm/libdevice/libdevice.10.bc", "bin/nvcc.profile"}) {
    const std::string file = (root / part).string();
    if (stat_file(file).is_regular) {
      files.push_back(file);
    }
  }
  return files;
}

bool executor_usable(const RemoteExecutor& executor)
{
  return !already_this_build(executor.failure_marker) || marker_expired(executor.failure_marker);
}

std::optional<ToolRun> run_remotely(const Step& step, const KeyedInputs& inputs,
                                    RemoteExecutor& executor)
{
  const auto started = std::chrono::steady_clock::now();
  ToolRun run;
  run.started_ns = coarse_now_ns();
  const RemoteStepAction built = remote_step_action(step, inputs.given_files);
  const std::vector<std::string> toolkit = toolkit_files(step.tool_exe);
  HelperAnswer answer;
  ScratchDir dir("nvfresh-exec-");
  try {
    answer = executor.remote.execute(built.action, toolkit, k_toolkit_sums_path, dir.path());
  } catch (const std::exception& error) {
    executor_failed(executor, step, error.what());
    return std::nullopt;
  }
  if (answer.exit_code == k_toolkit_differs_status) {
    executor_failed(executor, step,
                    "the worker's toolkit differs from this machine's (cicc, ptxas, libdevice or "
                    "nvcc.profile)");
    return std::nullopt;
  }
  if (answer.exit_code != 0) {
    step_failed_there(executor, step, answer.exit_code);
    return std::nullopt;
  }
  StepAccesses accesses;
  try {
    for (const auto& [name, file] : answer.outputs) {
      auto local = built.outputs.find(name);
      if (local == built.outputs.end()) {
        throw std::runtime_error(fmt::format("the worker sent an output not asked for: {}", name));
      }
      write_file_atomically(local->second, read_file(file, k_max_output_bytes));
      accesses.written.push_back(local->second);
    }
    run.out = read_file(answer.stdout_file);
    run.err = read_file(answer.stderr_file);
  } catch (const std::exception& error) {
    executor_failed(executor, step, error.what());
    return std::nullopt;
  }
  run.accesses = std::move(accesses);
  run.run_ns =
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
      .count();
  log::info("step {} {} ran remotely in {} ms: {} bytes sent, {} fetched", step.pass,
            tool_name(step), run.run_ns / 1'000'000, answer.bytes_sent, answer.bytes);
  return run;
}

}  // namespace nvfresh

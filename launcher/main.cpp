// nvfresh's entry: a subcommand from the table, or a compile ("nvfresh nvcc ...").
// Nothing escapes: an unexpected failure still runs the compiler with the original arguments.
#include "cache/upload_job_runner.hpp"
#include "commands/commands.hpp"
#include "compile/compile.hpp"
#include "step/step_runner.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <malloc.h>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

// Called through a symlink named like nvcc ("masquerade"): behave as "nvfresh nvcc ...". The real
// nvcc is then found on PATH, skipping nvfresh itself.
std::string masquerade_name(const char* argv0)
{
  std::string name = std::filesystem::path(argv0).filename().string();
  return name.find("nvcc") != std::string::npos ? name : std::string();
}

// nvfresh lives milliseconds (a skip, a hit, a check) or waits on nvcc. glibc's defaults give each
// buffer of over 128 KiB its own mapping, unmapped when freed, and hand the heap's top back to the
// kernel: the megabytes of a served object (read, unpacked, written) fault their pages in anew,
// each time. Freed memory stays for the next allocation instead: a cache hit of the CUTLASS FMHA
// TU went from 2,940 to 2,220 page faults, 0.6 ms of its system time.
void keep_freed_memory_for_reuse()
{
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

// The last resort of a compile: nvcc with the untouched arguments, as if nvfresh were not there (the
// process becomes it; its status is nvcc's). Only when it cannot be started: one line and the status
// a shell gives, 127 (not found) or 126 (not executable).
[[noreturn]] void exec_compiler_plainly(const std::vector<std::string>& args,
                                        const std::string& why)
{
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: {} (ran the compiler without nvfresh)\n", why).c_str(), stderr);
  const int error = nvfresh::replace_process_with(args);
  std::fputs(fmt::format("nvfresh: cannot run {}: {}\n", args[0], std::strerror(error)).c_str(),
             stderr);
  std::_Exit(error == ENOENT ? 127 : 126);
}

}  // namespace

int main(int argc, char** argv)
{
  keep_freed_memory_for_reuse();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto name = masquerade_name(argv[0]); !name.empty()) {
    args.insert(args.begin(), name);
  }
  if (args.empty()) {
    return nvfresh::run_help({});
  }
  if (args[0] == nvfresh::k_step_subcommand) {  // the step cache's runner, started by the tracer
    return nvfresh::run_step(std::vector<std::string>(args.begin() + 1, args.end()),
                             nvfresh::current_environment());
  }
  if (args[0] == nvfresh::k_upload_subcommand) {  // a store's upload, detached from its compile
    return nvfresh::run_upload_job(std::vector<std::string>(args.begin() + 1, args.end()),
                                   nvfresh::current_environment());
  }
  if (const auto* command = nvfresh::find_command(args[0])) {
    return nvfresh::run_guarded(*command, std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args[0] == "-h" || args[0] == "--help") {
    return nvfresh::run_help({});
  }
  nvfresh::SystemProcessRunner runner;
  try {
    return nvfresh::run_compile(args, nvfresh::current_environment(), runner,
                                nvfresh::AfterUnchangedPath::exit_process);
  } catch (const std::exception& error) {
    exec_compiler_plainly(args, error.what());
  } catch (...) {
    exec_compiler_plainly(args, "an unexpected error");
  }
}

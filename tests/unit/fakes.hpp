// In-memory stand-ins for the OS seams the orchestrator uses (ninja's FakeCommandRunner): a
// ProcessRunner that "compiles" by writing a canned object, depfile and trace, counts its runs,
// and can fail, throw, print or edit a file on request.
#pragma once

#include "trace/trace_channel.hpp"
#include "util/environment.hpp"
#include "util/process.hpp"

#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvfresh::test {

class FakeProcessRunner final : public ProcessRunner {
public:
  // What one traced compile does.
  std::string object;  // written with object_bytes (unless empty)
  std::string object_bytes = "object v1";
  std::string depfile;  // written with depfile_text (unless empty)
  std::string depfile_text;
  std::vector<std::string> trace_lines;  // sent to the trace socket, one datagram each
  std::string printed_err;               // "printed" on stderr (captured)
  int exit_code = 0;
  bool throw_on_capture = false;         // capturing fails (no pipe): a plain run still works
  bool missing_program = false;          // the compiler does not exist: every run fails to start
  std::function<void()> during_compile;  // runs while "nvcc" runs (an editor saving a header)

  // What happened.
  int captured_runs = 0;
  int plain_runs = 0;
  int program_runs = 0;      // run_program_as: the step runner's tool
  std::string last_program;  // run_program_as's program
  std::vector<std::string> last_argv;
  Environment last_env;

  ProcessResult run(const std::vector<std::string>& argv, const Environment& env) override
  {
    last_argv = argv;
    last_env = env;
    if (missing_program) {
      throw SpawnError(127, argv[0] + ": No such file or directory");
    }
    ++plain_runs;
    return {exit_code, 0};
  }

  // A compile never runs redirected (repro does: tests/unit/repro/test_repro_runs.cpp has its fake).
  ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment&,
                               const std::string&, const std::string&, const std::string&,
                               const RedirectLimits&) override
  {
    throw std::logic_error("fake: a compile ran " + argv.at(0) + " redirected");
  }

  ProcessResult run_capturing(const std::vector<std::string>& argv, const Environment& env,
                              CapturedOutput& captured) override
  {
    last_argv = argv;
    last_env = env;
    if (missing_program) {
      throw SpawnError(127, argv[0] + ": No such file or directory");
    }
    if (throw_on_capture) {
      throw std::runtime_error("fake: cannot create a pipe");
    }
    ++captured_runs;
    if (during_compile) {
      during_compile();
    }
    auto socket = env.find(k_trace_socket_variable);
    for (const auto& line : trace_lines) {
      if (socket != env.end()) {
        send_trace_datagram(socket->second, line + "\n");
      }
    }
    if (exit_code == 0 && !object.empty()) {
      std::ofstream(object, std::ios::binary) << object_bytes;
    }
    if (exit_code == 0 && !depfile.empty()) {
      std::ofstream(depfile, std::ios::binary) << depfile_text;
    }
    captured = CapturedOutput{};
    captured.captured = true;
    captured.err = printed_err;
    return {exit_code, 0};
  }

  // The step cache's runner runs a tool (cicc, ptxas) this way: the same canned run, its stderr
  // written to the file given.
  ProcessResult run_program_as(const std::string& program, const std::vector<std::string>& argv,
                               const Environment& env, const std::string& stdout_path,
                               const std::string& stderr_path) override
  {
    last_program = program;
    last_argv = argv;
    last_env = env;
    if (missing_program) {
      throw SpawnError(127, program + ": No such file or directory");
    }
    ++program_runs;
    auto socket = env.find(k_trace_socket_variable);
    for (const auto& line : trace_lines) {
      if (socket != env.end()) {
        send_trace_datagram(socket->second, line + "\n");
      }
    }
    if (exit_code == 0 && !object.empty()) {
      std::ofstream(object, std::ios::binary) << object_bytes;
    }
    std::ofstream(stdout_path, std::ios::binary);
    std::ofstream(stderr_path, std::ios::binary) << printed_err;
    return {exit_code, 0};
  }
};

}  // namespace nvfresh::test

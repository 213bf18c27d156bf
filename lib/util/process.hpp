// Running a child process with inherited stdin/stdout/stderr, so that its output reaches the
// build tool byte for byte. SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to nvfresh are forwarded to the
// child. The one implementation uses Boost.Process v2.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

using Environment = std::map<std::string, std::string>;

struct ProcessResult {
  int exit_code = 0;    // the child's exit status when it exited
  int term_signal = 0;  // the signal that killed it, else 0
  bool succeeded() const { return term_signal == 0 && exit_code == 0; }
};

class ProcessRunner {
public:
  virtual ~ProcessRunner() = default;
  // argv[0] is resolved through PATH of `env` (nvfresh's own executable is skipped, so that a
  // masquerading symlink cannot make nvfresh call itself). Throws std::runtime_error when the
  // program cannot be found or started.
  virtual ProcessResult run(const std::vector<std::string>& argv, const Environment& env) = 0;
};

class SystemProcessRunner final : public ProcessRunner {
public:
  ProcessResult run(const std::vector<std::string>& argv, const Environment& env) override;
};

// Runs argv to completion and returns its stdout (stderr discarded); nullopt when it cannot be
// started or exits non-zero.
std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const Environment& env);

Environment current_environment();

// PATH lookup as execvp does it, skipping nvfresh itself. Empty when not found.
std::string find_program(const std::string& name, const Environment& env);

// Ends nvfresh the way the child ended: same exit status, or the same signal re-raised.
[[noreturn]] void exit_like(const ProcessResult& result);

} // namespace nvfresh

// Running a child process with inherited stdin/stdout/stderr, so that its output reaches the
// build tool byte for byte. SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to nvfresh are forwarded to the
// child. The one implementation uses Boost.Process v2.
#pragma once

#include "util/environment.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct ProcessResult {
  int exit_code = 0;       // the child's exit status when it exited
  int term_signal = 0;     // the signal that killed it, else 0
  bool timed_out = false;  // run_redirected killed it at its timeout (term_signal is then SIGKILL)
  bool succeeded() const { return term_signal == 0 && exit_code == 0 && !timed_out; }
};

// What a compiler printed, kept so that a later skipped compile can print the same.
struct CapturedOutput {
  bool captured = false;  // false: not run through run_capturing_output
  bool combined = false;  // stdout and stderr are the same pipe or terminal: one stream, in order
  // Which streams were terminals ("", "stdout", "stderr", "stdout,stderr"). A terminal stream is
  // captured through a pseudo-terminal of the same size, so that the compiler still sees a terminal
  // (gcc's colours, its line width) and its bytes reach the real one unchanged.
  std::string terminals;
  std::string out;  // stdout, or both streams when combined
  std::string err;
  bool overflow = false;  // more than k_capture_limit bytes: not kept
};

constexpr size_t k_capture_limit = size_t{4} * 1024 * 1024;

// Which of nvfresh's own stdout and stderr are terminals now, as CapturedOutput::terminals says it.
std::string terminal_streams();

// A program that cannot be started, with the status a shell gives for it: 127 when it does not
// exist, 126 when it exists but cannot be executed. The message names the program and why, once.
class SpawnError : public std::runtime_error {
public:
  SpawnError(int shell_status, const std::string& what)
    : std::runtime_error(what), m_shell_status(shell_status)
  {}
  int shell_status() const { return m_shell_status; }

private:
  int m_shell_status;
};

// How run_redirected bounds a child. By default it stays in nvfresh's process group (a terminal's
// Ctrl-C reaches it directly) and may run for ever.
struct RedirectLimits {
  // Its own process group: a timeout, or stop_redirected_children, kills everything it started
  // (a compiler's children too), and a terminal's Ctrl-C reaches nvfresh only.
  bool own_process_group = false;
  // Seconds until it is killed (SIGKILL, its group when it has one) and reported as timed out; 0: none.
  double timeout_seconds = 0;
};

class ProcessRunner {
public:
  virtual ~ProcessRunner() = default;
  // argv[0] is resolved through PATH of `env` (nvfresh's own executable is skipped, so that a
  // masquerading symlink cannot make nvfresh call itself). Throws SpawnError when the program
  // cannot be found or started.
  virtual ProcessResult run(const std::vector<std::string>& argv, const Environment& env) = 0;
  // Like run, but keeps a copy of what the program printed (see run_capturing below).
  virtual ProcessResult run_capturing(const std::vector<std::string>& argv, const Environment& env,
                                      CapturedOutput& captured) = 0;
  // Runs argv with its output written to two files, within `limits` (run_redirected below). Safe
  // to call from several threads at once.
  virtual ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment& env,
                                       const std::string& stdout_path,
                                       const std::string& stderr_path,
                                       const std::string& working_dir,
                                       const RedirectLimits& limits) = 0;
  // Runs `program` with argv as it is (run_program_as below). The step cache's runner uses it; a
  // runner that does not support it (a test's fake) throws std::logic_error.
  virtual ProcessResult run_program_as(const std::string& program,
                                       const std::vector<std::string>& argv, const Environment& env,
                                       const std::string& stdout_path,
                                       const std::string& stderr_path);
};

class SystemProcessRunner final : public ProcessRunner {
public:
  ProcessResult run(const std::vector<std::string>& argv, const Environment& env) override;
  ProcessResult run_capturing(const std::vector<std::string>& argv, const Environment& env,
                              CapturedOutput& captured) override;
  ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment& env,
                               const std::string& stdout_path, const std::string& stderr_path,
                               const std::string& working_dir,
                               const RedirectLimits& limits) override;
  ProcessResult run_program_as(const std::string& program, const std::vector<std::string>& argv,
                               const Environment& env, const std::string& stdout_path,
                               const std::string& stderr_path) override;
};

// Runs argv to completion and returns its stdout (stderr discarded); nullopt when it cannot be
// started or exits non-zero.
std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const Environment& env);

// Like ProcessRunner::run, but when neither stdout nor stderr is a terminal the child's output
// goes through pipes that nvfresh copies to its own stdout/stderr as it arrives (byte for byte,
// same order; one pipe when stdout and stderr are one file) and keeps in `captured`. With a
// terminal the child inherits it unchanged (colours and all) and nothing is captured.
ProcessResult run_capturing_output(const std::vector<std::string>& argv, const Environment& env,
                                   CapturedOutput& captured);

// Runs argv to completion with stdin from /dev/null and stdout/stderr written to the two files
// (created or truncated), in `working_dir` when one is given (a relative argv[0] with a '/' is then
// found from there, as a shell would after `cd`), within `limits`. No signal forwarding. Safe to call
// from several threads at once. Throws std::runtime_error when the program cannot be found or started
// or a file cannot be opened.
ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment& env,
                             const std::string& stdout_path, const std::string& stderr_path,
                             const std::string& working_dir = {},
                             const RedirectLimits& limits = {});

// Runs `program` (a path, no PATH search) with argv as it is (argv[0] included, as an exec would
// pass it: a tool started by a shell's PATH search sees the name it was called by), stdin
// inherited, stdout and stderr written to the two files (created or truncated), in this process's
// group. Throws SpawnError when it cannot be started.
ProcessResult run_program_as(const std::string& program, const std::vector<std::string>& argv,
                             const Environment& env, const std::string& stdout_path,
                             const std::string& stderr_path);

// Starts `program` with `argv` (argv[0] included) and exactly `env`, detached from this process: a
// session and process group of its own, stdin, stdout and stderr /dev/null, no other descriptor of
// this process but `fd3` (as its descriptor 3, when not -1), not waited for (when this process
// ends, init reaps it). A build tool that waits for its job's output or process group does not wait
// for it. Throws SpawnError when it cannot start.
void spawn_detached(const std::string& program, const std::vector<std::string>& argv,
                    const Environment& env, int fd3 = -1);

// Starts `program` with `argv` (argv[0] included) and exactly `env` beside this process: in its
// process group (a Ctrl-C reaches it too), stdin `stdin_fd` and descriptor 3 `fd3`, stdout and
// stderr /dev/null, no other descriptor of this process. Returns its pid, for the caller to wait
// on. Throws SpawnError when it cannot start.
int spawn_with_descriptors(const std::string& program, const std::vector<std::string>& argv,
                           const Environment& env, int stdin_fd, int fd3);

// Kills (SIGKILL) the process group of every run_redirected child with its own group that runs now,
// and of every one started from now on, until allow_redirected_children. Async-signal-safe: a SIGINT
// handler may call it.
void stop_redirected_children() noexcept;
void allow_redirected_children() noexcept;

// Writes everything to fd, retrying on EINTR; false on error.
bool write_fully(int fd, std::string_view data);

Environment current_environment();

// This executable, canonical; "" when /proc does not say.
std::string this_executable();

// Replaces this process with argv (argv[0] found on PATH of the current environment, as
// find_program finds it): returns only when that fails, with the errno of the failure (ENOENT when
// there is no such program).
int replace_process_with(const std::vector<std::string>& argv) noexcept;

// Replaces this process with `program`, given `argv` (argv[0] as the program will see it) and
// exactly `env`. Returns only when it cannot: errno (ENOENT: no such program).
int replace_process_as(const std::string& program, const std::vector<std::string>& argv,
                       const Environment& env) noexcept;

// PATH lookup as execvp does it, skipping nvfresh itself. Empty when not found.
std::string find_program(const std::string& name, const Environment& env);

// The entries of a PATH value in order, as written ("" for an empty entry: the working directory).
std::vector<std::string> search_path_entries(const std::string& path);

// A regular file this process may execute.
bool is_executable_file(const std::string& path);

// Ends nvfresh the way the child ended: same exit status, or the same signal re-raised.
[[noreturn]] void exit_like(const ProcessResult& result);

}  // namespace nvfresh

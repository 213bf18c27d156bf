// Boost.Process v2 (1.81) is compiled into this one file: its header-only mode leaves
// process_environment::on_setup undefined.
#define BOOST_PROCESS_V2_SEPARATE_COMPILATION 1
// Wait with waitpid, never through pidfd_open: that system call is missing before Linux 5.3 (RHEL 8's
// 4.18 on many GPU clusters) and denied by some seccomp profiles and valgrind, and Boost.Process then
// throws after the child has started (the compile ran twice, unattended, and the build failed).
#define BOOST_PROCESS_V2_DISABLE_PIDFD_OPEN 1
#include "util/process.hpp"

#include "util/file_io.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/process/v2.hpp>
#include <boost/process/v2/src.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char** environ;

namespace nvfresh {

namespace {

namespace bp = boost::process::v2;

std::atomic<pid_t> g_child_pid{0};
constexpr int k_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void forward_signal(int signal_number)
{
  pid_t child = g_child_pid.load();
  if (child > 0) {
    ::kill(child, signal_number);
  }
}

// Installs the forwarding handlers for the lifetime of one child, then restores the old ones.
class SignalForwarding {
public:
  SignalForwarding()
  {
    struct sigaction action {};
    action.sa_handler = forward_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < std::size(k_forwarded_signals); ++i) {
      sigaction(k_forwarded_signals[i], &action, &m_previous[i]);
    }
  }
  ~SignalForwarding()
  {
    g_child_pid.store(0);
    for (size_t i = 0; i < std::size(k_forwarded_signals); ++i) {
      sigaction(k_forwarded_signals[i], &m_previous[i], nullptr);
    }
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

private:
  struct sigaction m_previous[std::size(k_forwarded_signals)]{};
};

std::string self_executable()
{
  std::error_code error;
  auto self = std::filesystem::canonical("/proc/self/exe", error);
  return error ? std::string() : self.string();
}

bool is_self(const std::string& candidate, const std::string& self)
{
  std::error_code error;
  auto resolved = std::filesystem::canonical(candidate, error);
  return !error && resolved.string() == self;
}

std::vector<std::string> environment_strings(const Environment& env)
{
  std::vector<std::string> strings;
  strings.reserve(env.size());
  for (const auto& [name, value] : env) {
    strings.push_back(fmt::format("{}={}", name, value));
  }
  return strings;
}

bool same_file(int a, int b)
{
  struct stat sa {};
  struct stat sb {};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

struct Pipe {
  int read_end = -1;
  int write_end = -1;
};

Pipe make_pipe()
{
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  return {fds[0], fds[1]};
}

// A pseudo-terminal standing in for the terminal `like`: the same window size and modes, except
// that output is passed through unprocessed (no LF -> CR LF), so that what the compiler writes is
// what nvfresh reads, and the real terminal does its own processing. read_end is the master.
Pipe make_pseudo_terminal(int like)
{
  termios modes{};
  winsize size{};
  const bool have_modes = ::tcgetattr(like, &modes) == 0;
  const bool have_size = ::ioctl(like, TIOCGWINSZ, &size) == 0;
  modes.c_oflag &= ~static_cast<tcflag_t>(OPOST);
  int master = -1;
  int slave = -1;
  if (::openpty(&master, &slave, nullptr, have_modes ? &modes : nullptr,
                have_size ? &size : nullptr) != 0) {
    throw std::runtime_error(
      fmt::format("cannot open a pseudo-terminal: {}", std::strerror(errno)));
  }
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave, F_SETFD, FD_CLOEXEC);
  return {master, slave};
}

// What the compiler gets in place of `target` (STDOUT_FILENO or STDERR_FILENO): a
// pseudo-terminal when it is a terminal, else a pipe.
Pipe make_capture_channel(int target)
{
  return ::isatty(target) != 0 ? make_pseudo_terminal(target) : make_pipe();
}

// Copies a pipe to a file descriptor as data arrives, keeping a copy up to the limit.
void tee_pipe(int from, int to, std::string& copy, bool& overflow)
{
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(from, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // end of the pipe; EIO: every holder of the pseudo-terminal's other side is gone
    }
    write_fully(to, std::string_view(buffer, static_cast<size_t>(n)));
    if (copy.size() + static_cast<size_t>(n) > k_capture_limit) {
      overflow = true;
    } else {
      copy.append(buffer, static_cast<size_t>(n));
    }
  }
  ::close(from);
}

ProcessResult to_result(int status)
{
  ProcessResult result;
  if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace

bool write_fully(int fd, std::string_view data)
{
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written < 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

std::string this_executable()
{
  return self_executable();
}

Environment current_environment()
{
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text(*entry);
    auto equals = text.find('=');
    if (equals != std::string::npos) {
      env.emplace(text.substr(0, equals), text.substr(equals + 1));
    }
  }
  return env;
}

bool is_executable_file(const std::string& path)
{
  FileStat st = stat_file(path);
  return st.is_regular && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> search_path_entries(const std::string& path)
{
  std::vector<std::string> entries;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) {
      end = path.size();
    }
    entries.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return entries;
}

std::string find_program(const std::string& name, const Environment& env)
{
  if (name.find('/') != std::string::npos) {
    return name;
  }
  auto path_entry = env.find("PATH");
  std::string path = path_entry != env.end() ? path_entry->second : "/usr/local/bin:/usr/bin:/bin";
  std::string self = self_executable();
  for (const std::string& dir : search_path_entries(path)) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate) && !is_self(candidate, self)) {
      return candidate;
    }
  }
  return {};
}

namespace {

// argv[0] found through PATH (see find_program); throws SpawnError, as a shell would report it,
// when there is nothing to run.
std::string resolve_program(const std::vector<std::string>& argv, const Environment& env)
{
  if (argv.empty()) {
    throw SpawnError(127, "no program to run");
  }
  const std::string& name = argv[0];
  std::string program = find_program(name, env);
  if (program.empty()) {
    throw SpawnError(127, fmt::format("{}: command not found", name));
  }
  struct stat st {};
  if (::stat(program.c_str(), &st) != 0) {
    const int error = errno;
    throw SpawnError(error == ENOENT || error == ENOTDIR ? 127 : 126,
                     fmt::format("{}: {}", name, std::strerror(error)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw SpawnError(126, fmt::format("{}: Is a directory", name));
  }
  if (::access(program.c_str(), X_OK) != 0) {
    throw SpawnError(126, fmt::format("{}: {}", name, std::strerror(errno)));
  }
  return program;
}

// Starts a child; a failure to start it (exec format error, ...) is a SpawnError.
template <typename... Init>
std::unique_ptr<bp::process> start_process(boost::asio::io_context& context,
                                           const std::string& program,
                                           const std::vector<std::string>& argv,
                                           const Environment& env, Init&&... init)
{
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  try {
    return std::make_unique<bp::process>(context, program, args,
                                         bp::process_environment(environment_strings(env)),
                                         std::forward<Init>(init)...);
  } catch (const std::exception& error) {
    throw SpawnError(126, fmt::format("{}: cannot be started: {}", argv[0], error.what()));
  }
}

}  // namespace

ProcessResult SystemProcessRunner::run(const std::vector<std::string>& argv, const Environment& env)
{
  std::string program = resolve_program(argv, env);
  boost::asio::io_context context;
  SignalForwarding forwarding;
  auto child = start_process(context, program, argv, env);
  g_child_pid.store(child->id());
  child->wait();
  return to_result(child->native_exit_code());
}

ProcessResult SystemProcessRunner::run_redirected(
  const std::vector<std::string>& argv, const Environment& env, const std::string& stdout_path,
  const std::string& stderr_path, const std::string& working_dir, const RedirectLimits& limits)
{
  return nvfresh::run_redirected(argv, env, stdout_path, stderr_path, working_dir, limits);
}

ProcessResult ProcessRunner::run_program_as(const std::string& program,
                                            const std::vector<std::string>& /*argv*/,
                                            const Environment& /*env*/,
                                            const std::string& /*stdout_path*/,
                                            const std::string& /*stderr_path*/)
{
  throw std::logic_error("this process runner cannot run " + program + " as is");
}

ProcessResult SystemProcessRunner::run_program_as(const std::string& program,
                                                  const std::vector<std::string>& argv,
                                                  const Environment& env,
                                                  const std::string& stdout_path,
                                                  const std::string& stderr_path)
{
  return nvfresh::run_program_as(program, argv, env, stdout_path, stderr_path);
}

ProcessResult SystemProcessRunner::run_capturing(const std::vector<std::string>& argv,
                                                 const Environment& env, CapturedOutput& captured)
{
  return run_capturing_output(argv, env, captured);
}

ProcessResult run_capturing_output(const std::vector<std::string>& argv, const Environment& env,
                                   CapturedOutput& captured)
{
  captured = CapturedOutput{};
  std::string program = resolve_program(argv, env);
  captured.captured = true;
  captured.combined = same_file(STDOUT_FILENO, STDERR_FILENO);
  captured.terminals = terminal_streams();
  Pipe out;
  Pipe err;
  try {
    out = make_capture_channel(STDOUT_FILENO);
    err = captured.combined ? out : make_capture_channel(STDERR_FILENO);
  } catch (const std::runtime_error&) {
    // No pseudo-terminal to be had (none left, no /dev/pts): the compiler writes to the terminal
    // itself, as without nvfresh, and this compile's output is not captured.
    for (int fd : {out.read_end, out.write_end}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
    captured = CapturedOutput{};
    return SystemProcessRunner().run(argv, env);
  }
  boost::asio::io_context context;
  SignalForwarding forwarding;
  std::unique_ptr<bp::process> child;
  try {
    child = start_process(context, program, argv, env,
                          bp::process_stdio{{}, out.write_end, err.write_end});
  } catch (...) {
    for (int fd : {out.read_end, out.write_end, err.read_end, err.write_end}) {
      ::close(fd);
    }
    throw;
  }
  g_child_pid.store(child->id());
  ::close(out.write_end);
  if (!captured.combined) {
    ::close(err.write_end);
  }
  std::thread err_thread;
  if (!captured.combined) {
    err_thread =
      std::thread([&] { tee_pipe(err.read_end, STDERR_FILENO, captured.err, captured.overflow); });
  }
  tee_pipe(out.read_end, STDOUT_FILENO, captured.out, captured.overflow);
  if (err_thread.joinable()) {
    err_thread.join();
  }
  child->wait();
  return to_result(child->native_exit_code());
}

namespace {

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
public:
  explicit FileDescriptor(const std::string& path)
    : m_fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644))
  {
    if (m_fd < 0) {
      throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
  }
  ~FileDescriptor() { ::close(m_fd); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

// In the child, before exec: its working directory, and its own process group when asked.
struct ChildSetup {
  const std::string& working_dir;
  bool own_process_group;

  template <typename Launcher>
  bp::error_code on_exec_setup(Launcher& /*launcher*/, const bp::filesystem::path& /*program*/,
                               const char* const*& /*argv*/) const
  {
    if (own_process_group) {
      ::setpgid(0, 0);
    }
    if (!working_dir.empty() && ::chdir(working_dir.c_str()) != 0) {
      return {errno, boost::system::system_category()};
    }
    return {};
  }
};

// The process groups of the run_redirected children that have one, for stop_redirected_children.
constexpr std::size_t k_max_stoppable_children = 1024;
std::array<std::atomic<pid_t>, k_max_stoppable_children> g_stoppable_groups{};
std::atomic<bool> g_stopping{false};

// Holds one child's group in g_stoppable_groups while it runs (not at all when all slots are taken).
class StoppableGroup {
public:
  explicit StoppableGroup(pid_t group)
  {
    for (auto& slot : g_stoppable_groups) {
      pid_t empty = 0;
      if (slot.compare_exchange_strong(empty, group)) {
        m_slot = &slot;
        break;
      }
    }
    if (g_stopping.load()) {
      ::kill(-group, SIGKILL);
    }
  }
  ~StoppableGroup()
  {
    if (m_slot != nullptr) {
      m_slot->store(0);
    }
  }
  StoppableGroup(const StoppableGroup&) = delete;
  StoppableGroup& operator=(const StoppableGroup&) = delete;

private:
  std::atomic<pid_t>* m_slot = nullptr;
};

// Waits for the child; past the timeout kills it (its group when it has one) and says so.
ProcessResult wait_within(bp::process& child, pid_t group, double timeout_seconds)
{
  if (timeout_seconds <= 0) {
    child.wait();
    return to_result(child.native_exit_code());
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(timeout_seconds));
  auto pause = std::chrono::milliseconds(1);
  boost::system::error_code error;
  while (child.running(error) && !error) {
    if (Clock::now() >= deadline) {
      ::kill(group != 0 ? -group : child.id(), SIGKILL);
      child.wait();
      ProcessResult result = to_result(child.native_exit_code());
      result.timed_out = true;
      return result;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  if (error) {
    child.wait();
  }
  return to_result(child.native_exit_code());
}

}  // namespace

ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment& env,
                             const std::string& stdout_path, const std::string& stderr_path,
                             const std::string& working_dir, const RedirectLimits& limits)
{
  std::string program = resolve_program(argv, env);
  FileDescriptor out(stdout_path);
  FileDescriptor err(stderr_path);
  boost::asio::io_context context;
  // The initializers are passed as temporaries: Boost.Process applies a const one silently not at all.
  auto child =
    start_process(context, program, argv, env, bp::process_stdio{nullptr, out.get(), err.get()},
                  ChildSetup{working_dir, limits.own_process_group});
  const pid_t group = limits.own_process_group ? child->id() : 0;
  if (group != 0) {
    ::setpgid(group, group);  // also from this side: a kill must not find the group missing
  }
  std::optional<StoppableGroup> stoppable;
  if (group != 0) {
    stoppable.emplace(group);
  }
  return wait_within(*child, group, limits.timeout_seconds);
}

// argv and an environment as execve and posix_spawn take them: null-terminated arrays pointing
// into argv's strings and into the assignments kept here (a vector's move keeps its elements).
struct ExecArrays {
  std::vector<std::string> assignments;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

ExecArrays exec_arrays(const std::vector<std::string>& argv, const Environment& env)
{
  ExecArrays arrays;
  arrays.argv.reserve(argv.size() + 1);
  for (const auto& arg : argv) {
    arrays.argv.push_back(const_cast<char*>(arg.c_str()));
  }
  arrays.argv.push_back(nullptr);
  arrays.assignments.reserve(env.size());
  for (const auto& [name, value] : env) {
    arrays.assignments.push_back(fmt::format("{}={}", name, value));
  }
  arrays.envp.reserve(arrays.assignments.size() + 1);
  for (auto& assignment : arrays.assignments) {
    arrays.envp.push_back(assignment.data());
  }
  arrays.envp.push_back(nullptr);
  return arrays;
}

ProcessResult run_program_as(const std::string& program, const std::vector<std::string>& argv,
                             const Environment& env, const std::string& stdout_path,
                             const std::string& stderr_path)
{
  FileDescriptor out(stdout_path);
  FileDescriptor err(stderr_path);
  ExecArrays arrays = exec_arrays(argv, env);
  std::vector<char*>& args = arrays.argv;
  std::vector<char*>& environment = arrays.envp;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.get(), STDERR_FILENO);
  pid_t pid = 0;
  const int error =
    ::posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    throw SpawnError(error == ENOENT ? 127 : 126,
                     fmt::format("{}: cannot be started: {}", program, std::strerror(error)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessResult result;
  if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

namespace {

// How spawn_child connects a child: its stdin (-1: /dev/null) and descriptor 3 (-1: none), and
// whether it gets a session of its own. Stdout and stderr are /dev/null; no other descriptor of
// this process reaches it.
struct ChildDescriptors {
  int stdin_fd = -1;
  int fd3 = -1;
  bool own_session = false;
};

// Starts `program`; its pid. Throws SpawnError when it cannot start.
int spawn_child(const std::string& program, const std::vector<std::string>& argv,
                const Environment& env, const ChildDescriptors& descriptors)
{
  // Copies above the target numbers first: a source already at 0 or 3 would keep its
  // close-on-exec flag through a dup2 onto itself.
  auto copy_of = [](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 10); };
  const int stdin_copy = copy_of(descriptors.stdin_fd);
  const int fd3_copy = copy_of(descriptors.fd3);
  ExecArrays arrays = exec_arrays(argv, env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdin_copy >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdin_copy, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0);
  }
  if (fd3_copy >= 0) {
    posix_spawn_file_actions_adddup2(&actions, fd3_copy, 3);
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, fd3_copy >= 0 ? 4 : 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (descriptors.own_session) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  }
  pid_t pid = -1;
  const bool lost_copy =
    (descriptors.stdin_fd >= 0 && stdin_copy < 0) || (descriptors.fd3 >= 0 && fd3_copy < 0);
  int error = lost_copy ? EBADF : 0;
  if (error == 0) {
    error = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, arrays.argv.data(),
                          arrays.envp.data());
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  for (int copy : {stdin_copy, fd3_copy}) {
    if (copy >= 0) {
      ::close(copy);
    }
  }
  if (error != 0) {
    throw SpawnError(error == ENOENT ? 127 : 126,
                     fmt::format("{}: cannot be started: {}", program, std::strerror(error)));
  }
  return pid;
}

}  // namespace

void spawn_detached(const std::string& program, const std::vector<std::string>& argv,
                    const Environment& env, int fd3)
{
  spawn_child(program, argv, env, {-1, fd3, true});
}

int spawn_with_descriptors(const std::string& program, const std::vector<std::string>& argv,
                           const Environment& env, int stdin_fd, int fd3)
{
  if (stdin_fd < 0 || fd3 < 0) {
    throw SpawnError(126, fmt::format("{}: cannot be started: {}", program, std::strerror(EBADF)));
  }
  return spawn_child(program, argv, env, {stdin_fd, fd3, false});
}

void stop_redirected_children() noexcept
{
  g_stopping.store(true);
  for (auto& slot : g_stoppable_groups) {
    if (const pid_t group = slot.load(); group != 0) {
      ::kill(-group, SIGKILL);
    }
  }
}

void allow_redirected_children() noexcept
{
  g_stopping.store(false);
}

int replace_process_as(const std::string& program, const std::vector<std::string>& argv,
                       const Environment& env) noexcept
{
  try {
    ExecArrays arrays = exec_arrays(argv, env);
    ::execve(program.c_str(), arrays.argv.data(), arrays.envp.data());
    return errno;
  } catch (const std::exception&) {
    return ENOMEM;
  }
}

int replace_process_with(const std::vector<std::string>& argv) noexcept
{
  std::string program;
  try {
    program = argv.empty() ? std::string() : find_program(argv[0], current_environment());
  } catch (const std::exception&) {
    program.clear();
  }
  if (program.empty()) {
    return ENOENT;
  }
  std::vector<char*> pointers;
  try {
    pointers.reserve(argv.size() + 1);
  } catch (const std::exception&) {
    return ENOMEM;
  }
  for (const auto& arg : argv) {
    pointers.push_back(const_cast<char*>(arg.c_str()));
  }
  pointers.push_back(nullptr);
  ::execv(program.c_str(), pointers.data());
  return errno;
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const Environment& env)
{
  std::string program = argv.empty() ? std::string() : find_program(argv[0], env);
  if (program.empty()) {
    return std::nullopt;
  }
  boost::asio::io_context context;
  boost::asio::readable_pipe out_pipe(context);
  boost::system::error_code error;
  std::unique_ptr<bp::process> started;
  try {
    started =
      start_process(context, program, argv, env, bp::process_stdio{nullptr, out_pipe, nullptr});
  } catch (const SpawnError&) {
    return std::nullopt;
  }
  bp::process& child = *started;
  std::string output;
  char buffer[4096];
  for (;;) {
    size_t n = out_pipe.read_some(boost::asio::buffer(buffer), error);
    output.append(buffer, n);
    if (error) {
      break;
    }
  }
  // A fresh error_code: wait() leaves it untouched when the child has already been reaped, so
  // the read loop's end-of-file would read as a failed wait (a third of all --version queries).
  boost::system::error_code wait_error;
  int exit_code = child.wait(wait_error);
  if (wait_error || exit_code != 0) {
    return std::nullopt;
  }
  return output;
}

void exit_like(const ProcessResult& result)
{
  std::fflush(nullptr);
  if (result.term_signal != 0) {
    std::signal(result.term_signal, SIG_DFL);
    ::raise(result.term_signal);
  }
  std::_Exit(result.term_signal != 0 ? 128 + result.term_signal : result.exit_code);
}

std::string terminal_streams()
{
  const bool out = ::isatty(STDOUT_FILENO) != 0;
  const bool err = ::isatty(STDERR_FILENO) != 0;
  return out && err ? "stdout,stderr" : out ? "stdout" : err ? "stderr" : "";
}

}  // namespace nvfresh

#include "cache/remote_coprocess.hpp"

#include "protocol/helper_socket.hpp"
#include "util/clock.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nvfresh {

namespace {

// Starts `argv` with `env`: stdin `stdin_fd`, descriptor 3 `fd3`, stdout and stderr /dev/null, no
// other descriptor of this process, in this process's group (a Ctrl-C ends it with the build).
// Its pid, or -1 with errno set.
int spawn_with_socket(const std::vector<std::string>& argv, const Environment& env, int stdin_fd,
                      int fd3)
{
  // Copies above the target numbers first: a source already at 0 or 3 would keep its
  // close-on-exec flag through a dup2 onto itself.
  const int stdin_copy = ::fcntl(stdin_fd, F_DUPFD_CLOEXEC, 10);
  const int fd3_copy = ::fcntl(fd3, F_DUPFD_CLOEXEC, 10);
  std::vector<std::string> assignments;
  assignments.reserve(env.size());
  for (const auto& [name, value] : env) {
    assignments.push_back(fmt::format("{}={}", name, value));
  }
  std::vector<char*> args;
  std::vector<char*> envp;
  args.reserve(argv.size() + 1);
  envp.reserve(assignments.size() + 1);
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));  // posix_spawn's signature; not written
  }
  args.push_back(nullptr);
  for (auto& assignment : assignments) {
    envp.push_back(assignment.data());
  }
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_copy, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd3_copy, k_serve_listen_fd);
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, k_serve_listen_fd + 1);
  pid_t pid = -1;
  int error = stdin_copy < 0 || fd3_copy < 0 ? EBADF : 0;
  if (error == 0) {
    error = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&actions);
  for (int copy : {stdin_copy, fd3_copy}) {
    if (copy >= 0) {
      ::close(copy);
    }
  }
  errno = error;
  return error == 0 ? pid : -1;
}

}  // namespace

std::string new_helper_socket_name()
{
  std::random_device random;
  const std::uint64_t bits = (std::uint64_t{random()} << 32) | random();
  return fmt::format("nvfresh-remote-{}-{}-{:016x}", ::getpid(), monotonic_now_ns(), bits);
}

std::unique_ptr<RemoteCoprocess> RemoteCoprocess::start(const std::string& helper,
                                                        const std::string& name,
                                                        const Environment& env)
{
  const int listening = listen_on_helper_socket(name);
  if (listening < 0) {
    log::info("remote: no helper co-process, one helper run per call: cannot listen: {}",
              std::strerror(errno));
    return nullptr;
  }
  int lifeline[2] = {-1, -1};
  if (::pipe2(lifeline, O_CLOEXEC) != 0) {
    log::info("remote: no helper co-process, one helper run per call: no pipe: {}",
              std::strerror(errno));
    ::close(listening);
    return nullptr;
  }
  const int pid = spawn_with_socket({helper, "serve"}, env, lifeline[0], listening);
  const int error = errno;
  // Only the helper holds the socket now: once it ends, a call is refused at once, not queued.
  ::close(listening);
  ::close(lifeline[0]);
  if (pid < 0) {
    log::info("remote: no helper co-process, one helper run per call: {} cannot be started: {}",
              helper, std::strerror(error));
    ::close(lifeline[1]);
    return nullptr;
  }
  return std::unique_ptr<RemoteCoprocess>(new RemoteCoprocess(name, pid, lifeline[1]));
}

RemoteCoprocess::~RemoteCoprocess()
{
  ::close(m_lifeline);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace nvfresh

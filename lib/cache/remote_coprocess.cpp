#include "cache/remote_coprocess.hpp"

#include "protocol/helper_socket.hpp"
#include "util/clock.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nvfresh {

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
  int pid = -1;
  std::string why;
  try {
    static_assert(k_serve_listen_fd == 3, "the helper's socket travels as descriptor 3");
    pid = spawn_with_descriptors(helper, {helper, "serve"}, env, lifeline[0], listening);
  } catch (const SpawnError& error) {
    why = error.what();
  }
  // Only the helper holds the socket now: once it ends, a call is refused at once, not queued.
  ::close(listening);
  ::close(lifeline[0]);
  if (pid < 0) {
    log::info("remote: no helper co-process, one helper run per call: {}", why);
    ::close(lifeline[1]);
    return nullptr;
  }
  return std::unique_ptr<RemoteCoprocess>(new RemoteCoprocess(name, pid, lifeline[1]));
}

void RemoteCoprocess::detach()
{
  if (m_lifeline >= 0) {
    ::close(m_lifeline);
    m_lifeline = -1;
    m_pid = -1;
  }
}

RemoteCoprocess::~RemoteCoprocess()
{
  if (m_pid < 0) {
    return;
  }
  ::close(m_lifeline);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace nvfresh

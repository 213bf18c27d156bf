#include "trace/trace_channel.hpp"

#include "trace/trace_line.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr int k_receive_buffer_bytes = 4 << 20;       // senders block only when this much is queued
constexpr size_t k_datagram_max = size_t{64} * 1024;  // the tracer's longest datagram is ~8 KB

struct SocketAddress {
  sockaddr_un address{};
  socklen_t length = 0;
};

// "@name" is the abstract address "\0name"; anything else a socket file's path.
SocketAddress to_address(const std::string& name)
{
  SocketAddress result;
  result.address.sun_family = AF_UNIX;
  if (name.empty() || name.size() >= sizeof result.address.sun_path) {
    throw std::runtime_error(fmt::format("bad trace socket address '{}'", name));
  }
  std::memcpy(result.address.sun_path, name.data(), name.size());
  const bool abstract = name[0] == '@';
  if (abstract) {
    result.address.sun_path[0] = '\0';
  }
  result.length =
    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (abstract ? 0 : 1));
  return result;
}

std::string random_name()
{
  std::array<unsigned char, 16> bytes{};
  if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    throw std::runtime_error(
      fmt::format("no random bytes for the trace socket: {}", std::strerror(errno)));
  }
  std::string name = fmt::format("@nvfresh-trace-{}-", ::getpid());
  for (unsigned char byte : bytes) {
    name += fmt::format("{:02x}", byte);
  }
  return name;
}

}  // namespace

bool send_trace_datagram(const std::string& address, std::string_view data)
{
  const SocketAddress to = to_address(address);
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  ssize_t sent = -1;
  do {
    sent = ::sendto(fd, data.data(), data.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr*>(&to.address), to.length);
  } while (sent < 0 && errno == EINTR);
  ::close(fd);
  return sent == static_cast<ssize_t>(data.size());
}

TraceListener::TraceListener()
{
  m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (m_fd < 0) {
    throw std::runtime_error(
      fmt::format("cannot create the trace socket: {}", std::strerror(errno)));
  }
  ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &k_receive_buffer_bytes, sizeof k_receive_buffer_bytes);
  const int on = 1;
  ::setsockopt(m_fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
  m_address = random_name();
  const SocketAddress self = to_address(m_address);
  if (::bind(m_fd, reinterpret_cast<const sockaddr*>(&self.address), self.length) != 0) {
    int error = errno;
    ::close(m_fd);
    throw std::runtime_error(fmt::format("cannot bind the trace socket: {}", std::strerror(error)));
  }
  m_reader = std::thread([this] { receive(); });
}

TraceListener::~TraceListener()
{
  try {
    if (m_reader.joinable()) {
      finish();
    }
  } catch (...) {
    // A destructor must not throw (std::terminate would end the compile): finish() fails only when
    // the reader cannot be joined, and then the trace is lost with the listener anyway.
  }
}

// Only datagrams from this user's processes count (abstract sockets have no permissions, and any
// local user can see their names): the kernel attaches each sender's credentials (SO_PASSCRED). A
// datagram from another user is dropped and makes the trace incomplete. The empty datagram that
// ends the reader comes from this process.
void TraceListener::receive()
{
  std::string buffer(k_datagram_max, '\0');
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  for (;;) {
    iovec data{buffer.data(), buffer.size()};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(m_fd, &message, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return;
    }
    const ucred* sender = nullptr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        sender = reinterpret_cast<const ucred*>(CMSG_DATA(c));
      }
    }
    if (sender == nullptr || sender->uid != ::getuid()) {
      m_text += format_trace_line(lost_line(0, "datagram-from-another-user"));
      continue;
    }
    if (n == 0 && sender->pid == ::getpid()) {
      return;
    }
    m_text.append(buffer.data(), static_cast<size_t>(n));
  }
}

std::string TraceListener::finish()
{
  if (m_reader.joinable()) {
    // An empty datagram queues behind every line already sent and ends the reader.
    if (!send_trace_datagram(m_address, {})) {
      ::shutdown(m_fd, SHUT_RDWR);
    }
    m_reader.join();
    ::close(m_fd);
    m_fd = -1;
  }
  return std::move(m_text);
}

}  // namespace nvfresh

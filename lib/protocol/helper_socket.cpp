#include "protocol/helper_socket.hpp"

#include <fmt/format.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace nvfresh {

namespace {

// The address of the abstract name `name` (a NUL byte, then the name; no terminating NUL), and its
// length; false when the name does not fit.
bool abstract_address(const std::string& name, sockaddr_un* address, socklen_t* length)
{
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof(address->sun_path)) {
    return false;
  }
  std::memcpy(address->sun_path + 1, name.data(), name.size());
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return true;
}

std::string member(const nlohmann::json& json, const char* name)
{
  auto found = json.find(name);
  if (found == json.end() || !found->is_string() || found->get<std::string>().empty()) {
    throw ProtocolError(fmt::format("call.{}: a file name is expected", name));
  }
  return found->get<std::string>();
}

class SocketFd {
public:
  explicit SocketFd(int fd) : m_fd(fd) {}
  ~SocketFd()
  {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

}  // namespace

std::string helper_call_line(const HelperCall& call)
{
  nlohmann::json json = {{"verb", std::string(verb_name(call.verb))},
                         {"request", call.request_file},
                         {"stdout", call.stdout_file},
                         {"stderr", call.stderr_file}};
  return json.dump() + "\n";
}

HelperCall parse_helper_call_line(std::string_view line)
{
  nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
  if (!json.is_object()) {
    throw ProtocolError("call: a JSON object is expected");
  }
  HelperCall call;
  auto verb = json.find("verb");
  std::optional<HelperVerb> parsed;
  if (verb != json.end() && verb->is_string()) {
    parsed = parse_verb(verb->get<std::string>());
  }
  if (!parsed) {
    throw ProtocolError("call.verb: get, put or execute is expected");
  }
  call.verb = *parsed;
  call.request_file = member(json, "request");
  call.stdout_file = member(json, "stdout");
  call.stderr_file = member(json, "stderr");
  return call;
}

int listen_on_helper_socket(const std::string& name)
{
  sockaddr_un address{};
  socklen_t length = 0;
  if (!abstract_address(name, &address, &length)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -1;
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API takes sockaddr*
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd, SOMAXCONN) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

bool peer_is_this_user(int fd)
{
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 &&
         length == sizeof(credentials) && credentials.uid == ::getuid();
}

std::optional<std::string> read_socket_line(int fd, std::size_t limit, int timeout_ms,
                                            bool* timed_out)
{
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  std::string line;
  char byte = 0;
  while (line.size() <= limit) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) {
        if (timed_out != nullptr) {
          *timed_out = true;
        }
        return std::nullopt;
      }
      wait_ms = static_cast<int>(left);
    }
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, wait_ms);
    if (polled < 0 && errno == EINTR) {
      continue;
    }
    if (polled < 0) {
      return std::nullopt;
    }
    if (polled == 0) {
      continue;  // the clock above says whether the time is up
    }
    const ssize_t got = ::read(fd, &byte, 1);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return std::nullopt;
    }
    if (byte == '\n') {
      return line;
    }
    line.push_back(byte);
  }
  return std::nullopt;
}

bool write_socket(int fd, std::string_view bytes)
{
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) {
      continue;
    }
    if (sent <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

HelperCallAnswer ask_helper_coprocess(const std::string& name, const HelperCall& call,
                                      double timeout_seconds)
{
  HelperCallAnswer answer;
  sockaddr_un address{};
  socklen_t length = 0;
  if (!abstract_address(name, &address, &length)) {
    return answer;
  }
  SocketFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    return answer;
  }
  int connected = 0;
  do {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API takes sockaddr*
    connected = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length);
  } while (connected != 0 && errno == EINTR);
  if (connected != 0 || !peer_is_this_user(fd.get()) ||
      !write_socket(fd.get(), helper_call_line(call))) {
    return answer;
  }
  bool timed_out = false;
  const auto limit_ms = static_cast<int>(std::ceil(timeout_seconds * 1000));
  const auto line = read_socket_line(fd.get(), 16, limit_ms, &timed_out);
  if (timed_out) {
    answer.kind = HelperCallAnswer::Kind::timed_out;
    return answer;
  }
  if (!line || line->empty() || line->find_first_not_of("0123456789") != std::string::npos ||
      line->size() > 3) {
    return answer;
  }
  answer.kind = HelperCallAnswer::Kind::answered;
  answer.status = std::stoi(*line);
  return answer;
}

}  // namespace nvfresh

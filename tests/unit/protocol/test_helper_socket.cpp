#include "protocol/helper_socket.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <random>
#include <thread>

#include <unistd.h>

using namespace nvfresh;

namespace {

std::string unique_name()
{
  std::random_device random;
  return fmt::format("nvfresh-unit-{}-{:08x}", ::getpid(), random());
}

HelperCall call()
{
  return {HelperVerb::put, "/tmp/job/request.json", "/tmp/job/helper.out",
          "/tmp/job/helper\twith a tab\nand a newline.err"};
}

// A helper stand-in on `name`: accepts one connection, reads its call, then does `answer` with it.
class OneCallServer {
public:
  OneCallServer(const std::string& name, std::function<void(int fd, const std::string&)> answer)
    : m_listening(listen_on_helper_socket(name))
  {
    REQUIRE(m_listening >= 0);
    m_thread = std::thread([this, answer = std::move(answer)] {
      const int fd = ::accept4(m_listening, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        return;
      }
      m_peer_is_this_user = peer_is_this_user(fd);
      const auto line = read_socket_line(fd, 1 << 16, 5000);
      answer(fd, line.value_or(""));
      ::close(fd);
    });
  }
  ~OneCallServer()
  {
    m_thread.join();
    ::close(m_listening);
  }
  OneCallServer(const OneCallServer&) = delete;
  OneCallServer& operator=(const OneCallServer&) = delete;

  bool peer_was_this_user() const { return m_peer_is_this_user; }

private:
  int m_listening;
  std::atomic<bool> m_peer_is_this_user{false};
  std::thread m_thread;
};

}  // namespace

TEST_CASE("helper socket: a call's line reads back as the call, whatever its file names hold")
{
  const std::string line = helper_call_line(call());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line: the names' newlines are escaped
  CHECK(parse_helper_call_line(line.substr(0, line.size() - 1)) == call());
}

TEST_CASE("helper socket: a call that breaks the contract names what is wrong")
{
  CHECK_THROWS_WITH(parse_helper_call_line("not json"), "call: a JSON object is expected");
  CHECK_THROWS_WITH(
    parse_helper_call_line(R"({"verb": "serve", "request": "r", "stdout": "o", "stderr": "e"})"),
    "call.verb: get, put or execute is expected");
  CHECK_THROWS_WITH(parse_helper_call_line(R"({"verb": "get", "request": "r", "stdout": "o"})"),
                    "call.stderr: a file name is expected");
  CHECK_THROWS_WITH(
    parse_helper_call_line(R"({"verb": "get", "request": "", "stdout": "o", "stderr": "e"})"),
    "call.request: a file name is expected");
}

TEST_CASE("helper socket: the helper's status is the answer, from a peer of this user")
{
  const std::string name = unique_name();
  std::string received;
  OneCallServer server(name, [&](int fd, const std::string& line) {
    received = line;
    write_socket(fd, "4\n");
  });
  const HelperCallAnswer answer = ask_helper_coprocess(name, call(), 5);
  CHECK(answer.kind == HelperCallAnswer::Kind::answered);
  CHECK(answer.status == 4);
  CHECK(server.peer_was_this_user());
  CHECK(parse_helper_call_line(received) == call());
}

TEST_CASE("helper socket: no helper, or one gone before its answer, is unreachable: run the helper")
{
  CHECK(ask_helper_coprocess(unique_name(), call(), 1).kind == HelperCallAnswer::Kind::unreachable);
  const std::string name = unique_name();
  {
    OneCallServer closes(name, [](int, const std::string&) {});
    CHECK(ask_helper_coprocess(name, call(), 5).kind == HelperCallAnswer::Kind::unreachable);
  }
  {
    OneCallServer garbles(name, [](int fd, const std::string&) { write_socket(fd, "hit\n"); });
    CHECK(ask_helper_coprocess(name, call(), 5).kind == HelperCallAnswer::Kind::unreachable);
  }
}

TEST_CASE("helper socket: no answer within the limit is a timeout, not a helper run of its own")
{
  const std::string name = unique_name();
  std::atomic<bool> asked{false};
  OneCallServer silent(name, [&](int fd, const std::string&) {
    while (!asked.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    (void)fd;
  });
  const HelperCallAnswer answer = ask_helper_coprocess(name, call(), 0.2);
  asked = true;
  CHECK(answer.kind == HelperCallAnswer::Kind::timed_out);
}

TEST_CASE("helper socket: a name that does not fit the socket address cannot be listened on")
{
  CHECK(listen_on_helper_socket(std::string(200, 'n')) == -1);
  CHECK(listen_on_helper_socket("") == -1);
}

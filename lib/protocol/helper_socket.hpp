// The remote helper as a co-process of one compile: `nvfresh-remote serve`, one process that answers
// every lookup of the compile (the launcher's and those of its cicc and ptxas steps) over a local
// socket, instead of one helper process per call (a process start and a new connection each).
//
//   the launcher  listens on an abstract unix socket (no file, so no path length or cleanup to
//                 mind), named in NVFRESH_REMOTE_SOCKET for the steps; starts `nvfresh-remote
//                 serve` with the listening socket as descriptor 3 and the read end of a pipe as
//                 its stdin; keeps the write end until the compile ends
//   a client      (the launcher or a step) connects and writes one call:
//                   call := {"verb": "get"|"put"|"execute", "request": file, "stdout": file,
//                            "stderr": file}  and a newline
//   the helper    runs the call as `nvfresh-remote <verb> <request>` would, its stdout and stderr
//                 into the two files, answers "<exit status>\n" (remote_protocol.hpp's statuses)
//                 and closes; it ends when its stdin reaches end of file (the compile ended)
//
// The request file itself is remote_protocol.hpp's, with its protocol version. Both ends check
// that the other is the same user (SO_PEERCRED): the helper holds the user's token and signing
// key, and a name in the abstract namespace is open to every user of the machine. A client that
// cannot reach the helper, or loses it before the answer, runs the one-shot helper instead: the
// co-process saves time, and nothing depends on it.
#pragma once

#include "protocol/remote_protocol.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

inline constexpr const char* k_helper_socket_variable = "NVFRESH_REMOTE_SOCKET";
inline constexpr int k_serve_listen_fd = 3;  // the listening socket, in `nvfresh-remote serve`

struct HelperCall {
  HelperVerb verb = HelperVerb::get;
  std::string request_file;
  std::string stdout_file;
  std::string stderr_file;

  bool operator==(const HelperCall&) const = default;
};

// The call's line, newline included.
std::string helper_call_line(const HelperCall& call);
// Throws ProtocolError naming what is wrong.
HelperCall parse_helper_call_line(std::string_view line);

// A listening socket (close-on-exec) on the abstract name `name`, or -1 with errno set.
int listen_on_helper_socket(const std::string& name);

// Whether the peer of the connected socket `fd` runs as this process's user.
bool peer_is_this_user(int fd);

// One line from `fd` (without its newline), at most `limit` bytes; nullopt when the peer closed
// first, the line is longer, or nothing came within `timeout_ms` (-1: no limit; timed_out says so).
std::optional<std::string> read_socket_line(int fd, std::size_t limit, int timeout_ms,
                                            bool* timed_out = nullptr);

// Writes all of `bytes` to `fd`; false when the peer is gone.
bool write_socket(int fd, std::string_view bytes);

struct HelperCallAnswer {
  enum class Kind {
    answered,     // status holds the helper's exit status
    unreachable,  // no helper there, another user's, or it closed before answering: run it
    timed_out,    // no answer within the limit
  };
  Kind kind = Kind::unreachable;
  int status = 0;
};

// Asks the co-process on `name` to run `call`, waiting at most `timeout_seconds` for its answer.
HelperCallAnswer ask_helper_coprocess(const std::string& name, const HelperCall& call,
                                      double timeout_seconds);

}  // namespace nvfresh

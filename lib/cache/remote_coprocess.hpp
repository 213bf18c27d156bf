// The remote helper as one co-process per compile (protocol/helper_socket.hpp): started by the
// launcher before its lookup, asked by the launcher and by every cicc and ptxas step of the compile
// (the socket's name reaches them as NVFRESH_REMOTE_SOCKET), ended with the compile, or, when the
// compile left uploads, with the process that sends them (cache/background_upload.hpp). A call it
// cannot take runs the one-shot helper, as without it (remote_cache.cpp, run_prepared).
#pragma once

#include "util/environment.hpp"

#include <memory>
#include <string>

namespace nvfresh {

// A socket name for one compile: the process, the clock and 64 random bits, so that no other
// compile, and no other user who would like to answer its calls, picks it.
std::string new_helper_socket_name();

class RemoteCoprocess {
public:
  // Starts `helper serve` on the abstract socket `name` with the environment `env` (the token and
  // the signing key in it); nullptr, logged, when the socket or the process cannot be made. The
  // socket listens before this returns: a call made at once waits for the helper to start.
  static std::unique_ptr<RemoteCoprocess> start(const std::string& helper, const std::string& name,
                                                const Environment& env);
  // Closes the helper's stdin, so that it ends, and waits for it (unless detached).
  ~RemoteCoprocess();
  RemoteCoprocess(const RemoteCoprocess&) = delete;
  RemoteCoprocess& operator=(const RemoteCoprocess&) = delete;

  const std::string& name() const { return m_name; }
  // The write end of the helper's stdin: the helper ends once every copy of it is closed.
  int lifeline() const { return m_lifeline; }
  // For a helper that another process, holding a copy of its lifeline, goes on using after this
  // compile (the batch of its uploads): this process's copy is closed, the helper not waited for.
  void detach();

private:
  RemoteCoprocess(std::string name, int pid, int lifeline)
    : m_name(std::move(name)), m_pid(pid), m_lifeline(lifeline)
  {}

  std::string m_name;
  int m_pid;       // the helper's
  int m_lifeline;  // the write end of the helper's stdin
};

}  // namespace nvfresh

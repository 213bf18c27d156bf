// How the tracer's lines reach the launcher while a compile runs: a Unix datagram socket in the
// abstract namespace (no file, no disk space: a full TMPDIR can no longer make the tracer drop
// lines silently). Every line (or X+I pair) is one datagram, so lines of concurrent processes never
// interleave; a sender whose datagram cannot be delivered counts it and reports the loss as an "L"
// line (lib/trace/nvfresh_trace.c), which makes the trace incomplete.
#pragma once

#include <string>
#include <string_view>
#include <thread>

namespace nvfresh {

// The environment variable the tracer reads the socket's address from ("@name": abstract).
inline constexpr const char* k_trace_socket_variable = "NVFRESH_TRACE_SOCKET";

class TraceListener {
public:
  // Binds a socket with a random abstract name and starts receiving. Throws std::runtime_error
  // when no socket can be made.
  TraceListener();
  ~TraceListener();
  TraceListener(const TraceListener&) = delete;
  TraceListener& operator=(const TraceListener&) = delete;

  const std::string& address() const { return m_address; }  // NVFRESH_TRACE_SOCKET's value

  // Stops receiving (call it after the compile ended: every line its processes sent is queued by
  // then) and returns everything received, in arrival order.
  std::string finish();

private:
  void receive();

  int m_fd = -1;
  std::string m_address;
  std::string m_text;
  std::thread m_reader;
};

// Sends one datagram to a listener's address, as the tracer does; false when it cannot be sent.
bool send_trace_datagram(const std::string& address, std::string_view data);

}  // namespace nvfresh

// The step runner on the trace channel (trace/trace_line.hpp has the grammar). The runner is not traced
// itself: it speaks for the step. A served step sends the process it stands for and the entry's
// reads, failed lookups and writes; a run forwards the tool's own lines after the runner's X line.
// step_accesses reads back what a run's trace says it read, looked up and wrote.
#pragma once

#include "cache/step_entry.hpp"
#include "step/step_key.hpp"
#include "util/environment.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// The trace file a traced process appends to when no socket is set (trace/trace.hpp).
inline constexpr const char* k_trace_file_variable = "NVFRESH_TRACE_FILE";

// Where the step's trace lines go: the compile's socket, else its trace file, else nowhere.
class TraceSink {
public:
  explicit TraceSink(const Environment& env);
  bool active() const { return !m_socket.empty() || !m_file.empty(); }
  // One datagram (or one append) per call: an X line and its I line travel together.
  bool send(std::string_view lines) const;

private:
  std::string m_socket;
  std::string m_file;
};

// The X line of this process for the step (and its I line when the tool was named otherwise).
std::string process_lines(const Step& step);

// What a served step sends: its process, its times ("served": no tool ran), the entry's reads and
// failed lookups, and a W line for each of `written` (paths with this run's temporary names).
std::string served_lines(const Step& step, const StepEntry& entry,
                         const std::vector<std::string>& written, std::int64_t now_ns);

// The runner's X line, then the tool's trace in whole lines, in datagrams below the socket's limit.
void forward_trace(const TraceSink& sink, const Step& step, std::string_view trace);

// What the tool's own trace says it read, looked up and wrote.
struct StepAccesses {
  std::set<std::string> reads;
  std::set<std::string> missing;
  std::vector<std::string> written;  // in order, once each
};

// nullopt when it read one of nvcc's temporary files it was not given (its output would depend on
// a file the key does not cover) or its trace is incomplete.
std::optional<StepAccesses> step_accesses(std::string_view trace, const Step& step,
                                          const std::set<std::string>& given_files);

}  // namespace nvfresh

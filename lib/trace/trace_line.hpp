// One line of a compile's trace: the one C++ reader and writer of the grammar below. The preload
// tracer (nvfresh_trace.c) writes the same lines in C, with the words of trace_format.h; the
// launcher and the step runner (step/step_trace.hpp) write through format_trace_line; every
// reader (trace.hpp's parse_trace, the step runner's step_accesses) reads through
// read_trace_lines.
//
// Trace grammar, version 1. Every process of the compile sends lines with one write(2) or one
// datagram each (each line shorter than PIPE_BUF), so lines of different processes never
// interleave but come in any order between processes.
//
//   trace    := line*
//   line     := process | access | times | lost
//   process  := "X" SP pid SP ppid SP pass SP exe LF      a process started (tracer constructor)
//               [ "I" SP pid SP path LF ]                   the path its execve named (AT_EXECFN),
//               only when that is not exe (a #! script such as an nvcc wrapper runs its
//               interpreter; a symlink names its target); in the same write(2) as the X line
//   access   := kind SP pid SP path LF
//   kind     := "R"     opened read-only, or stat/access found a non-directory
//             | "D"     a directory was opened or stat'ed
//             | "W"     opened for writing, created or truncated
//             | "M"     open/stat/access/execve failed with ENOENT or ENOTDIR (found nothing)
//   times    := "T" SP pid SP start_ns SP end_ns [ SP "served" ] LF
//               when the latest process of that pid started and ended (CLOCK_MONOTONIC ns): sent
//               at its exit and before an exec; the last one counts. "served": a step the step
//               cache served (lib/step/step_runner.hpp), which stands for the tool it names. A T
//               line of a pid without a process is ignored (a forked child that never exec'd)
//   lost     := "L" SP pid SP reason LF                     events the tracer could not deliver:
//               "path-too-long-or-newline", "unresolvable-path", "lost-<n>-events"
//   pid, ppid := decimal
//   pass     := "-" | "compute_" arch | "sm_" arch           what the process's own argv says:
//               "-E" with "-D__CUDA_ARCH__=800" (gcc, cc1plus) is compute_80, with
//               __CUDA_ARCH_SPECIFIC__ compute_90a, with __CUDA_ARCH_FAMILY_SPECIFIC__ compute_100f;
//               "-arch compute_80" (cicc) and "-arch=sm_80" (ptxas) name the pass directly
//   exe      := the target of /proc/self/exe (absolute), to the end of the line
//   path     := absolute (the tracer resolves relative paths against the cwd or the dirfd), to
//               the end of the line; may contain spaces, never a newline
//
// A line that does not parse (a relative path or exe, a NUL byte, an end before a start, an unknown
// letter) is no TraceLine; a lost line is one, but says the trace is incomplete.
#pragma once

#include "trace/trace_format.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

enum class AccessKind {
  read,       // a file opened for reading (or stat'ed) that existed
  write,      // a file opened for writing or created
  missing,    // a lookup that found nothing (ENOENT/ENOTDIR): an include candidate, __has_include
  exec,       // a process started from this executable
  directory,  // a directory opened or stat'ed (never an input by itself)
};

enum class TraceLineKind : char {
  process = NVFRESH_TRACE_PROCESS,
  invoked = NVFRESH_TRACE_INVOKED,
  times = NVFRESH_TRACE_TIMES,
  read = NVFRESH_TRACE_READ,
  directory = NVFRESH_TRACE_DIRECTORY,
  write = NVFRESH_TRACE_WRITE,
  missing = NVFRESH_TRACE_MISSING,
  lost = NVFRESH_TRACE_LOST,
};

struct TraceLine {
  TraceLineKind kind = TraceLineKind::read;
  int pid = 0;
  int parent_pid = 0;         // process
  std::string pass;           // process: "" when its argv names none (written "-")
  std::string text;           // process: the executable; invoked and accesses: the path; lost:
                              // the reason. As written: not normalized
  std::int64_t start_ns = 0;  // times
  std::int64_t end_ns = 0;    // times
  bool served = false;        // times

  bool operator==(const TraceLine&) const = default;
};

TraceLine process_line(int pid, int parent_pid, std::string pass, std::string executable);
TraceLine invoked_line(int pid, std::string path);
TraceLine access_line(AccessKind kind, int pid, std::string path);  // not AccessKind::exec

// The letter of an access (throws std::logic_error for AccessKind::exec, which an X line says),
// and the access of a letter (nullopt for X, I, T and L lines).
TraceLineKind line_kind_of(AccessKind kind);
std::optional<AccessKind> access_kind_of(TraceLineKind kind);
TraceLine times_line(int pid, std::int64_t start_ns, std::int64_t end_ns, bool served);
TraceLine lost_line(int pid, std::string reason);

// The line with its LF. A text with a newline or a NUL cannot be said: it becomes a lost line
// ("path-too-long-or-newline"), as the tracer does.
std::string format_trace_line(const TraceLine& line);

// One line, without its LF; nullopt when it does not parse.
std::optional<TraceLine> parse_trace_line(std::string_view line);

// Calls on_line(std::optional<TraceLine>) for every whole line of `text`, in order (nullopt for one
// that does not parse). Returns false when the text ends in a torn line (no LF: its writer did not
// finish), which is not passed on.
template <typename OnLine>
bool read_trace_lines(std::string_view text, OnLine&& on_line)
{
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      return false;
    }
    on_line(parse_trace_line(text.substr(0, end)));
    text.remove_prefix(end + 1);
  }
  return true;
}

}  // namespace nvfresh

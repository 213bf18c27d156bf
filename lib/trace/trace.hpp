// What the processes of one compile did to the file system, as recorded by the LD_PRELOAD tracer
// (lib/trace/nvfresh_trace.c). The tracer sends one line per event to the launcher's socket
// (trace_channel.hpp) or appends it to NVFRESH_TRACE_FILE; the grammar is trace_line.hpp's.
#pragma once

#include "trace/trace_line.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// AccessKind: trace_line.hpp's, beside the letters that spell each kind.

struct TracedProcess {
  int pid = 0;
  int parent_pid = 0;
  std::string executable;  // absolute, from /proc/self/exe
  std::string pass;        // as its own argv tells: "compute_80", "sm_80", "compute_90a", ...;
                           // "" when it does not (summarize_trace then takes the parent's pass)
  std::string invoked_as;  // the path its execve named, when that is not `executable` (a #!
                           // script: executable is then its interpreter); else ""
  // When it ran (CLOCK_MONOTONIC ns; 0 and 0 when the trace does not say: killed, or _exit).
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool served = false;  // a step the step cache served: it stands for the tool, which never ran
};

struct TracedAccess {
  int pid = 0;
  AccessKind kind = AccessKind::read;
  std::string path;  // absolute, lexically normalized
};

struct Trace {
  std::vector<TracedProcess> processes;
  std::vector<TracedAccess> accesses;
  bool complete = true;  // false when the tracer reported lost events
};

// The inputs of a compile as the record needs them.
struct TracedInputs {
  std::map<std::string, std::set<std::string>> files_read;  // path -> passes that read it
  std::set<std::string> missing;                            // lookups that found nothing
  std::set<std::string> executables;                        // every program the compile ran
  // Files some program other than a C or C++ front end or driver read (is_source_reader): the
  // assembler's .incbin, a file a wrapper's tool reads. Their bytes are what counts, comments too.
  std::set<std::string> read_as_data;
};

// Whether the program at `executable` reads the files it opens as C or C++ source, or only stats
// them: the preprocessors and front ends (cc1, cc1plus, cudafe++, cicc), nvcc and the host
// compiler's drivers (gcc, g++, c++, cc, clang, clang++, with a target prefix or version suffix).
bool is_source_reader(std::string_view executable);

// The trace in `text` (as the tracer wrote it). Malformed lines and lost-event lines are skipped
// and make Trace::complete false.
Trace parse_trace(std::string_view text);

// The same for a trace file (NVFRESH_TRACE_FILE). Throws std::runtime_error when it cannot be read.
Trace read_trace(const std::string& trace_path);

// The pass of every traced process: its own, else its nearest traced ancestor's, else "host"
// (nvcc itself, cudafe++, fatbinary and the final host compile say nothing about an arch).
std::map<int, std::string> resolve_passes(const Trace& trace);

// Only what the processes started from `root_executable` (nvcc, canonical; a process runs it when
// its executable or the script it was invoked as is that file) and their descendants did: a
// launcher between nvfresh and nvcc (ccache) reads and writes its own files, which are not inputs
// of the compile, also when it execs nvcc in its own process (then only what happened after the
// exec counts). A compiler cache inside the tree (ccache, sccache, buildcache: masquerading as gcc
// on PATH, or as nvcc) is transparent: the programs it runs count, its own accesses do not.
// Returns the trace unchanged when no process ran root_executable.
Trace restrict_to_subtree(const Trace& trace, const std::string& root_executable);

// Drops what is not an input: files the compile wrote (intermediates), nvcc's own temporary files
// (tmpxft_*, in TMPDIR: also the lookups their names take part in, such as a precompiled header
// probe "tmpxft_..._a.cudafe1.cpp.gch"), /proc, /dev, /sys, directories, and "missing" entries
// that are not lookups of a file that could later appear (see trace.cpp).
TracedInputs summarize_trace(const Trace& trace);

}  // namespace nvfresh

// Reads the trace written by the LD_PRELOAD tracer (lib/trace/nvfresh_trace.c) and turns it into
// the inputs of one compile.
//
// The line grammar, with its one reader and writer, is trace_line.hpp's.
//
// A lost line, a line that does not parse, an I line of no process, or a last line without LF
// make the trace incomplete (Trace::complete = false); the record must then not claim it knows
// every input: it is recorded untrusted (the next build compiles it again).
#include "trace/trace.hpp"

#include "trace/trace_line.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace nvfresh {

namespace {

constexpr int k_max_ancestry = 64;

// Where nothing a compile reads can be an input, or where the C library looks for its own data.
constexpr std::string_view k_never_input_prefixes[] = {
  "/proc/", "/dev/", "/sys/", "/usr/lib/locale/", "/usr/share/locale/", "/etc/ld.so.",
};
constexpr std::string_view k_never_input_parts[] = {"/gconv/"};
constexpr std::string_view k_never_input_suffixes[] = {".mo"};

// Programs that read what they open as C or C++ source (trace.hpp: is_source_reader).
constexpr std::string_view k_source_front_ends[] = {"cc1", "cc1plus", "cudafe++", "cicc", "nvcc"};
constexpr std::string_view k_source_drivers[] = {"gcc", "g++", "c++", "cc", "clang", "clang++"};

TracedProcess* latest_process(Trace& trace, int pid)
{
  auto process = std::find_if(trace.processes.rbegin(), trace.processes.rend(),
                              [&](const TracedProcess& p) { return p.pid == pid; });
  return process == trace.processes.rend() ? nullptr : &*process;
}

// Adds what one line says to the trace; false when it makes the trace incomplete (a lost line, an
// I line of no process).
bool apply_line(TraceLine line, Trace& trace)
{
  switch (line.kind) {
  case TraceLineKind::process:
    trace.accesses.push_back({line.pid, AccessKind::exec, lexically_normal(line.text)});
    trace.processes.push_back(
      {line.pid, line.parent_pid, std::move(line.text), std::move(line.pass), ""});
    return true;
  case TraceLineKind::invoked:
    if (TracedProcess* process = latest_process(trace, line.pid)) {
      process->invoked_as = lexically_normal(line.text);
      return true;
    }
    return false;
  case TraceLineKind::times:
    if (TracedProcess* process = latest_process(trace, line.pid)) {
      process->start_ns = line.start_ns;
      process->end_ns = line.end_ns;
      process->served = line.served;
    }
    return true;
  case TraceLineKind::lost: return false;
  default:
    trace.accesses.push_back({line.pid, *access_kind_of(line.kind), lexically_normal(line.text)});
    return true;
  }
}

// nvcc names every temporary file "tmpxft_<pid>_<n>..." (in TMPDIR): never an input, and a lookup
// of such a name (cudafe's probe for a precompiled header) never a probe worth keeping.
bool is_nvcc_temporary(const std::string& path)
{
  const size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, 7, "tmpxft_") == 0;
}

bool never_input(const std::string& path)
{
  if (is_nvcc_temporary(path)) {
    return true;
  }
  for (std::string_view prefix : k_never_input_prefixes) {
    if (path.starts_with(prefix) || path + "/" == prefix) {
      return true;
    }
  }
  for (std::string_view part : k_never_input_parts) {
    if (path.find(part) != std::string::npos) {
      return true;
    }
  }
  for (std::string_view suffix : k_never_input_suffixes) {
    if (path.ends_with(suffix)) {
      return true;
    }
  }
  return false;
}

std::string pass_of(int pid, const std::map<int, const TracedProcess*>& by_pid)
{
  for (int depth = 0; depth < k_max_ancestry; ++depth) {
    auto found = by_pid.find(pid);
    if (found == by_pid.end()) {
      return "host";
    }
    if (!found->second->pass.empty()) {
      return found->second->pass;
    }
    pid = found->second->parent_pid;
  }
  return "host";
}

// Compiler caches: run as a launcher, or under a compiler's name (a symlink in /usr/lib/ccache on
// PATH), they read and write their own cache, which is no input of the compile.
constexpr std::string_view k_compiler_caches[] = {"ccache", "sccache", "buildcache"};

bool is_compiler_cache(const std::string& executable)
{
  const std::string name = std::filesystem::path(executable).filename().string();
  return std::find(std::begin(k_compiler_caches), std::end(k_compiler_caches), name) !=
         std::end(k_compiler_caches);
}

// For each process of the trace: does it run `canonical_program`, as its image or as the path it
// was invoked as (a wrapper script, a symlink)?
std::vector<bool> processes_running(const Trace& trace, const std::string& canonical_program)
{
  std::vector<bool> runs;
  runs.reserve(trace.processes.size());
  for (const TracedProcess& process : trace.processes) {
    std::error_code error;
    runs.push_back(
      process.executable == canonical_program ||
      (!process.invoked_as.empty() &&
       std::filesystem::weakly_canonical(process.invoked_as, error).string() == canonical_program));
  }
  return runs;
}

std::set<std::string> written_paths(const Trace& trace)
{
  std::set<std::string> written;
  for (const TracedAccess& access : trace.accesses) {
    if (access.kind == AccessKind::write) {
      written.insert(access.path);
    }
  }
  return written;
}

}  // namespace

Trace read_trace(const std::string& trace_path)
{
  return parse_trace(read_file(trace_path));
}

Trace parse_trace(std::string_view text)
{
  Trace trace;
  const bool whole = read_trace_lines(text, [&](std::optional<TraceLine> line) {
    if (!line || !apply_line(std::move(*line), trace)) {
      trace.complete = false;
    }
  });
  if (!whole) {
    trace.complete = false;  // a torn last line: the writer did not finish
  }
  return trace;
}

std::map<int, std::string> resolve_passes(const Trace& trace)
{
  std::map<int, const TracedProcess*> by_pid;
  for (const TracedProcess& process : trace.processes) {
    by_pid[process.pid] = &process;  // a reused pid: the later process wins
  }
  std::map<int, std::string> passes;
  for (const TracedProcess& process : trace.processes) {
    passes[process.pid] = pass_of(process.pid, by_pid);
  }
  return passes;
}

Trace restrict_to_subtree(const Trace& trace, const std::string& root_executable)
{
  const std::vector<bool> runs_root = processes_running(trace, root_executable);
  if (std::find(runs_root.begin(), runs_root.end(), true) == runs_root.end()) {
    return trace;
  }
  // Membership belongs to a program image, not to a pid: a launcher that execs nvcc (ccache falling
  // back, a wrapper script's `exec nvcc`) keeps its pid, and what it read before the exec is its
  // own business. An exec access starts the image of the next entry of trace.processes (the
  // parser adds both, in trace order); a pid's accesses belong to its latest image. A pid's
  // accesses before its first image are the parent's code running in the forked child (ccache
  // opening the files it redirects nvcc's output to): they count when the parent's image does.
  // An image that a member image execs is a member too (an nvcc wrapper script's `exec nvcc`).
  // A compiler cache inside the tree (ccache masquerading as gcc on PATH, or as nvcc itself) is
  // transparent: what it runs belongs, what it reads and writes itself (its cache) does not.
  enum class Image { outside, member, transparent };
  std::map<int, Image> image_of;                    // pid -> its current image
  std::map<int, std::vector<TracedAccess>> before;  // pid -> accesses before its first image
  std::size_t next_process = 0;
  Trace subtree;
  subtree.complete = trace.complete;
  for (const TracedAccess& access : trace.accesses) {
    if (access.kind == AccessKind::exec && next_process < trace.processes.size()) {
      const bool is_root = runs_root[next_process];
      const TracedProcess& process = trace.processes[next_process++];
      auto parent = image_of.find(process.parent_pid);
      const Image parent_image = parent != image_of.end() ? parent->second : Image::outside;
      auto previous = image_of.find(process.pid);
      const bool first_image = previous == image_of.end();
      const bool in_tree = is_root || parent_image != Image::outside ||
                           (!first_image && previous->second != Image::outside);
      const Image image = !in_tree                                ? Image::outside
                          : is_compiler_cache(process.executable) ? Image::transparent
                                                                  : Image::member;
      image_of[process.pid] = image;
      if (image != Image::outside) {
        subtree.processes.push_back(process);
      }
      if (auto held = before.find(process.pid); held != before.end()) {
        if (first_image && parent_image == Image::member) {
          subtree.accesses.insert(subtree.accesses.end(), held->second.begin(), held->second.end());
        }
        before.erase(held);
      }
    }
    auto image = image_of.find(access.pid);
    if (image == image_of.end()) {
      before[access.pid].push_back(access);
    } else if (image->second == Image::member) {
      subtree.accesses.push_back(access);
    }
  }
  return subtree;
}

bool is_source_reader(std::string_view executable)
{
  std::string_view name = executable.substr(executable.rfind('/') + 1);
  if (std::find(std::begin(k_source_front_ends), std::end(k_source_front_ends), name) !=
      std::end(k_source_front_ends)) {
    return true;
  }
  // A driver: x86_64-linux-gnu-g++-12, clang++-14, gcc.
  if (const size_t dash = name.rfind('-');
      dash != std::string_view::npos &&
      name.find_first_not_of("0123456789.", dash + 1) == std::string_view::npos) {
    name = name.substr(0, dash);
  }
  name = name.substr(name.rfind('-') + 1);
  return std::find(std::begin(k_source_drivers), std::end(k_source_drivers), name) !=
         std::end(k_source_drivers);
}

TracedInputs summarize_trace(const Trace& trace)
{
  std::map<int, std::string> passes = resolve_passes(trace);
  // A pid that ran several programs (a shell that exec'd the compiler) reads as its readers do:
  // the trace does not say which of them read what.
  std::set<int> data_readers;
  std::set<int> source_readers;
  for (const TracedProcess& process : trace.processes) {
    (is_source_reader(process.executable) ? source_readers : data_readers).insert(process.pid);
  }
  for (const int pid : source_readers) {
    data_readers.erase(pid);
  }
  std::set<std::string> written = written_paths(trace);
  TracedInputs inputs;
  for (const TracedAccess& access : trace.accesses) {
    if (access.kind == AccessKind::exec) {
      inputs.executables.insert(access.path);
    }
    if (written.contains(access.path) || never_input(access.path)) {
      continue;
    }
    if (access.kind == AccessKind::read) {
      auto pass = passes.find(access.pid);
      inputs.files_read[access.path].insert(pass == passes.end() ? "host" : pass->second);
      if (data_readers.contains(access.pid)) {
        inputs.read_as_data.insert(access.path);
      }
    } else if (access.kind == AccessKind::missing) {
      inputs.missing.insert(access.path);
    }
  }
  for (const auto& [path, readers] : inputs.files_read) {
    inputs.missing.erase(path);  // appeared during the compile: its content is what counts now
  }
  return inputs;
}

}  // namespace nvfresh

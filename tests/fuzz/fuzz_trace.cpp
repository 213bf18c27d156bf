// libFuzzer target for lib/trace/trace.cpp: the text the LD_PRELOAD tracer appends to (any
// process of a compile can write to it, and a torn or hostile file must not fool the reader).
// Properties: parse_trace never crashes; a trace it calls complete names only absolute paths without
// NUL bytes (the grammar makes anything else incomplete); restrict_to_subtree keeps a subset of the processes
// and accesses; resolve_passes and summarize_trace terminate and name only traced paths.
// Seeds: tests/fuzz/corpus/trace (traces of real nvcc 13.0 compiles, trimmed).
#include "fuzz_support.hpp"
#include "trace/trace.hpp"

#include <set>
#include <string>

namespace {

void check_paths_absolute(const nvfresh::Trace& trace)
{
  if (!trace.complete) {
    return;
  }
  for (const nvfresh::TracedAccess& access : trace.accesses) {
    if (access.path.empty() || access.path.front() != '/' ||
        access.path.find('\0') != std::string::npos) {
      nvfresh::fuzz::fail("a complete trace names only absolute paths without NUL bytes");
    }
  }
}

void check_subtree(const nvfresh::Trace& trace, const std::string& root)
{
  const nvfresh::Trace subtree = nvfresh::restrict_to_subtree(trace, root);
  if (subtree.processes.size() > trace.processes.size() ||
      subtree.accesses.size() > trace.accesses.size()) {
    nvfresh::fuzz::fail("restrict_to_subtree keeps a subset of the trace");
  }
  if (subtree.complete != trace.complete) {
    nvfresh::fuzz::fail("restrict_to_subtree keeps the trace's completeness");
  }
}

void check_summary(const nvfresh::Trace& trace)
{
  std::set<std::string> traced;
  for (const nvfresh::TracedAccess& access : trace.accesses) {
    traced.insert(access.path);
  }
  const nvfresh::TracedInputs inputs = nvfresh::summarize_trace(trace);
  for (const auto& [path, passes] : inputs.files_read) {
    if (!traced.contains(path) || passes.empty()) {
      nvfresh::fuzz::fail("every input read is a traced path, with at least one pass");
    }
  }
  for (const std::string& path : inputs.missing) {
    if (!traced.contains(path) || inputs.files_read.contains(path)) {
      nvfresh::fuzz::fail("every missing lookup is a traced path that was not read");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const nvfresh::Trace trace = nvfresh::parse_trace(nvfresh::fuzz::as_text(data, size));
  check_paths_absolute(trace);
  (void)nvfresh::resolve_passes(trace);
  if (!trace.processes.empty()) {
    check_subtree(trace, trace.processes.front().executable);  // the first process stands for nvcc
  }
  check_subtree(trace, "/usr/local/cuda/bin/nvcc");
  check_summary(trace);
  return 0;
}

// Test tool: prints summarize_trace of a trace file as text, for the integration tests and the
// benchmark. Usage: trace_tool <trace-file>
// Output, one item a line, sorted:
//   complete <yes|no>
//   read <pass>[,<pass>...] <path>
//   missing <path>
//   exec <path>
#include "trace/trace.hpp"

#include <fmt/format.h>

#include <exception>
#include <string>

namespace {

std::string joined(const std::set<std::string>& passes)
{
  std::string text;
  for (const std::string& pass : passes) {
    text += text.empty() ? pass : "," + pass;
  }
  return text;
}

void print_inputs(const nvfresh::Trace& trace, const nvfresh::TracedInputs& inputs)
{
  fmt::print("complete {}\n", trace.complete ? "yes" : "no");
  for (const auto& [path, passes] : inputs.files_read) {
    fmt::print("read {} {}\n", joined(passes), path);
  }
  for (const std::string& path : inputs.missing) {
    fmt::print("missing {}\n", path);
  }
  for (const std::string& path : inputs.executables) {
    fmt::print("exec {}\n", path);
  }
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 2) {
    fmt::print(stderr, "usage: trace_tool <trace-file>\n");
    return 2;
  }
  try {
    nvfresh::Trace trace = nvfresh::read_trace(argv[1]);
    print_inputs(trace, nvfresh::summarize_trace(trace));
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "trace_tool: {}\n", error.what());
    return 1;
  }
}

// Test tool: prints summarize_trace of a trace file as text, for the integration tests and the
// benchmark. Usage: trace_tool <trace-file> [<private-tmp-dir>]
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
  if (argc < 2 || argc > 3) {
    fmt::print(stderr, "usage: trace_tool <trace-file> [<private-tmp-dir>]\n");
    return 2;
  }
  try {
    nvfresh::Trace trace = nvfresh::read_trace(argv[1]);
    print_inputs(trace, nvfresh::summarize_trace(trace, argc == 3 ? argv[2] : ""));
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "trace_tool: {}\n", error.what());
    return 1;
  }
}

// Named reasons for running the compiler without nvfresh's bookkeeping.
// Every path that does not record a compile ends with one of these; the display text is what
// the log and `nvfresh stats` show.
#pragma once

#include <string_view>

namespace nvfresh {

enum class FallbackReason {
  none,                // not a fallback: the compile is handled by nvfresh
  disabled,            // NVFRESH_DISABLE is set
  nested_call,         // nvfresh is already running above us (e.g. -ccbin or PATH leads back)
  no_compiler,         // the command line names no compiler to run
  not_a_compile,       // --version, link, -dlink, -E, -M, ... : nothing nvfresh records
  no_source,           // a compile without a source file
  several_sources,     // more than one source: nvcc compiles them one after the other
  unsupported_option,  // an option nvfresh cannot account for (-save-temps, -time, ...)
  unreadable_options_file,
  bad_command_line,  // a value is missing, an option is malformed
  internal_error,    // a bug or an environment problem inside nvfresh
};

constexpr std::string_view describe(FallbackReason reason)
{
  switch (reason) {
  case FallbackReason::none: return "handled";
  case FallbackReason::disabled: return "nvfresh is disabled (NVFRESH_DISABLE)";
  case FallbackReason::nested_call: return "nvfresh is already running above this compile";
  case FallbackReason::no_compiler: return "no compiler on the command line";
  case FallbackReason::not_a_compile: return "not a single-source compile";
  case FallbackReason::no_source: return "no source file";
  case FallbackReason::several_sources: return "several source files";
  case FallbackReason::unsupported_option: return "an option nvfresh cannot account for";
  case FallbackReason::unreadable_options_file: return "an options file could not be read";
  case FallbackReason::bad_command_line: return "malformed command line";
  case FallbackReason::internal_error: return "internal error";
  }
  return "unknown";
}

}  // namespace nvfresh

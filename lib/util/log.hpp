// Opt-in debug log (NVFRESH_LOG_FILE). Never writes to the build's stdout or stderr: one line
// per message, appended with a single write so that concurrent compiles do not interleave.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace nvfresh::log {

void set_file(const std::string& path);  // empty: logging off
bool enabled();
void write_line(std::string_view message);

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args)
{
  if (enabled()) {
    write_line(fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace nvfresh::log

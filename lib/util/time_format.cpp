#include "util/time_format.hpp"

#include <fmt/format.h>

#include <ctime>

namespace nvfresh {

std::string format_local_time(std::int64_t time_ns, bool with_date)
{
  std::time_t seconds = static_cast<std::time_t>(time_ns / 1'000'000'000);
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &local);
  if (with_date) {
    return buffer;
  }
  return fmt::format("{}.{:03}", buffer, (time_ns / 1'000'000) % 1000);
}

}  // namespace nvfresh

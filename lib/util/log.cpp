#include "util/log.hpp"

#include <ctime>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh::log {

namespace {

std::string& log_path()
{
  static std::string path;
  return path;
}

std::string timestamp()
{
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  std::tm local{};
  ::localtime_r(&now.tv_sec, &local);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &local);
  return fmt::format("{}.{:06}", buffer, now.tv_nsec / 1000);
}

}  // namespace

void set_file(const std::string& path)
{
  log_path() = path;
}

bool enabled()
{
  return !log_path().empty();
}

void write_line(std::string_view message)
{
  int fd = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) {
    return;  // a log that cannot be written must never disturb the build
  }
  std::string line = fmt::format("[{} {}] {}\n", timestamp(), ::getpid(), message);
  [[maybe_unused]] ssize_t ignored = ::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace nvfresh::log

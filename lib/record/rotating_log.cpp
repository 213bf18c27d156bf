#include "record/rotating_log.hpp"

#include "util/file_io.hpp"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

void append_rotating_line(const std::string& file, std::string_view line, std::int64_t rotate_bytes)
{
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ignored);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) {
    return;
  }
  [[maybe_unused]] ssize_t ignored_size = ::write(fd, line.data(), line.size());
  struct stat written {};
  struct stat named {};
  // Rotate once, by whoever crosses the limit first: the name must still be this very file.
  if (::fstat(fd, &written) == 0 && written.st_size > rotate_bytes &&
      ::stat(file.c_str(), &named) == 0 && named.st_ino == written.st_ino &&
      named.st_dev == written.st_dev) {
    ::rename(file.c_str(), (file + ".1").c_str());
  }
  ::close(fd);
}

std::string read_rotated_text(const std::string& file)
{
  return try_read_file(file + ".1").value_or("") + try_read_file(file).value_or("");
}

}  // namespace nvfresh

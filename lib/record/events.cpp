// events.log grammar (fields escaped as in util/text_fields.hpp):
//   line := time_ns TAB event TAB duration_ns TAB object TAB reason LF
// A line that does not parse (torn by a crash, edited by hand) is skipped. events.log.1 holds the
// lines before the last rotation.
#include "record/events.hpp"

#include "util/file_io.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

namespace {

std::string events_file(const std::string& record_root)
{
  return record_root + "/events.log";
}

}  // namespace

void append_event(const std::string& record_root, const BuildEvent& event,
                  std::int64_t rotate_bytes)
{
  std::error_code ignored;
  std::filesystem::create_directories(record_root, ignored);
  std::string line =
    fmt::format("{}\t{}\t{}\t{}\t{}\n", event.time_ns, escape_field(event.event), event.duration_ns,
                escape_field(event.object), escape_field(event.reason));
  const std::string file = events_file(record_root);
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

std::vector<BuildEvent> read_events(const std::string& record_root)
{
  std::vector<BuildEvent> events;
  const std::string file = events_file(record_root);
  const std::string text =
    try_read_file(file + ".1").value_or("") + try_read_file(file).value_or("");
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    auto fields = split_fields(std::string_view(text).substr(begin, end - begin));
    begin = end + 1;
    BuildEvent event;
    if (fields && fields->size() == 5 && parse_number((*fields)[0], event.time_ns) &&
        parse_number((*fields)[2], event.duration_ns)) {
      event.event = (*fields)[1];
      event.object = (*fields)[3];
      event.reason = (*fields)[4];
      events.push_back(std::move(event));
    }
  }
  return events;
}

}  // namespace nvfresh

#include "space/build_lock.hpp"

#include "util/file_io.hpp"
#include "util/log.hpp"

#include <cerrno>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace nvfresh {

namespace {

int flock_retrying(int fd, int operation)
{
  int result = 0;
  do {
    result = ::flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

}  // namespace

std::string build_lock_file(const std::string& record_root)
{
  return record_root + "/build.lock";
}

void hold_build_lock_for_process(const std::string& record_root)
{
  static std::set<std::string>
    held;  // this process's locks; their descriptors stay open until exit
  if (held.count(record_root) != 0) {
    return;
  }
  const std::string file = build_lock_file(record_root);
  int fd = ::open(file.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 && errno == ENOENT) {
    try {
      make_directories(record_root);
    } catch (const std::exception&) {
    }
    fd = ::open(file.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  }
  if (fd < 0 || flock_retrying(fd, LOCK_SH) != 0) {
    log::info("build lock {} not taken: {}", file, std::strerror(errno));
    if (fd >= 0) {
      ::close(fd);
    }
    return;
  }
  held.insert(record_root);
}

LockState probe_build_lock(const std::string& record_root)
{
  int fd = ::open(build_lock_file(record_root).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return LockState::no_lock_file;
  }
  LockState state = flock_retrying(fd, LOCK_EX | LOCK_NB) == 0 ? LockState::idle : LockState::held;
  ::close(fd);  // closing releases the exclusive lock if it was taken
  return state;
}

ExclusiveFileLock::ExclusiveFileLock(const std::string& file)
{
  int fd = ::open(file.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0 && flock_retrying(fd, LOCK_EX | LOCK_NB) == 0) {
    m_fd = fd;
  } else if (fd >= 0) {
    ::close(fd);
  }
}

ExclusiveFileLock::~ExclusiveFileLock()
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

}  // namespace nvfresh

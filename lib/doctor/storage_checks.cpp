#include "doctor/storage_checks.hpp"

#include "cache/cache_store.hpp"
#include "space/full_disk.hpp"
#include "util/disk_space.hpp"
#include "util/file_io.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

// The nearest path at or above `dir` that exists (whatever it is).
std::string nearest_existing(const std::string& dir)
{
  fs::path path = fs::path(lexically_normal(dir));
  while (!path.empty() && path != path.root_path() && !lstat_file(path.string()).exists) {
    path = path.parent_path();
  }
  return path.empty() ? std::string("/") : path.string();
}

// The space line of a file system for nvfresh's files there, "" when it has room.
std::string space_problem(const std::string& dir, SpaceRole role, const std::string& floor_text)
{
  const FileSystemSpace space = file_system_space(dir);
  if (std::string line = describe_space_failure({{role, space}}); !line.empty()) {
    return line;
  }
  std::string error;
  auto floor = parse_space_floor(floor_text.empty() ? k_default_space_floor : floor_text, &error);
  return floor ? describe_below_floor(space, *floor) : std::string();
}

std::string room_words(const std::string& dir)
{
  const FileSystemSpace space = file_system_space(dir);
  return fmt::format("{} free on {}", format_size(space.free_bytes), space.mount_point);
}

}  // namespace

std::string write_problem(const std::string& dir)
{
  const std::string existing = nearest_existing(dir);
  if (!fs::is_directory(existing)) {
    return fmt::format("{} is not a directory, so {} cannot be made", existing, dir);
  }
  std::string pattern = existing + "/.nvfresh-doctor.XXXXXX";
  int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    return fmt::format("cannot create a file in {}: {}", existing, std::strerror(errno));
  }
  ::close(fd);
  ::unlink(pattern.c_str());
  return {};
}

SetupCheck check_record_root(const std::string& record_root, const std::string& configured_floor)
{
  if (std::string problem = write_problem(record_root); !problem.empty()) {
    return failed(
      "records",
      fmt::format("the records of this tree ({}) cannot be written: {}", record_root, problem),
      "make it writable, or set NVFRESH_RECORD_DIR to a writable directory with room");
  }
  if (std::string problem = space_problem(record_root, SpaceRole::records, configured_floor);
      !problem.empty()) {
    return failed("records", problem,
                  "free space there (nvfresh space --clean --older-than DAYS), or set "
                  "NVFRESH_RECORD_DIR to a disk with room");
  }
  return passed("records", fmt::format("{} is writable, {}", record_root, room_words(record_root)));
}

SetupCheck check_cache_dir(const CacheDirFacts& cache)
{
  if (!cache.enabled) {
    return passed("cache", "the object cache is off (NVFRESH_CACHE)");
  }
  if (cache.dir.empty()) {
    return failed("cache",
                  "no cache directory: neither NVFRESH_CACHE_DIR, XDG_CACHE_HOME nor HOME is set",
                  "set NVFRESH_CACHE_DIR, or NVFRESH_CACHE=0 to go without the cache");
  }
  if (std::string refusal = cache_dir_refusal(cache.dir, cache.shared); !refusal.empty()) {
    return failed("cache", fmt::format("nvfresh will not use the cache: {}", refusal),
                  "fix its ownership or mode, or set NVFRESH_CACHE_DIR to a directory of your own "
                  "(a team's: NVFRESH_CACHE_SHARED=1, see the manual)");
  }
  if (std::string problem = write_problem(cache.dir); !problem.empty()) {
    return failed("cache",
                  fmt::format("the object cache ({}) cannot be written: {}", cache.dir, problem),
                  "make it writable, or set NVFRESH_CACHE_DIR to a writable directory with room");
  }
  const FileSystemSpace space = file_system_space(cache.dir);
  if (space.known && space.free_bytes < cache.min_free) {
    return failed("cache",
                  fmt::format("{} has {} free, below NVFRESH_CACHE_MIN_FREE ({}): nothing is "
                              "stored in the cache",
                              space.mount_point, format_size(space.free_bytes),
                              format_size(cache.min_free)),
                  "free space there (nvfresh cache evict), or set NVFRESH_CACHE_DIR to a disk "
                  "with room");
  }
  return passed("cache", fmt::format("{} is writable, {}", cache.dir, room_words(cache.dir)));
}

}  // namespace nvfresh

#include "util/disk_space.hpp"

#include "util/file_stat.hpp"

#include <fmt/format.h>

#include <array>
#include <filesystem>

#include <sys/statvfs.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr std::array<const char*, 7> k_units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

// The top of the file system holding `dir` (an existing, canonical directory): the highest
// ancestor on the same device.
std::string mount_point_of(const fs::path& dir, std::uint64_t device)
{
  fs::path top = dir;
  for (fs::path parent = dir.parent_path(); parent != top; parent = parent.parent_path()) {
    FileStat st = stat_file(parent.string());
    if (!st.exists || st.device != device) {
      break;
    }
    top = parent;
  }
  return top.string();
}

}  // namespace

double FileSystemSpace::used_percent() const
{
  std::uint64_t usable = used_bytes + free_bytes;
  return usable == 0 ? 0.0 : 100.0 * static_cast<double>(used_bytes) / static_cast<double>(usable);
}

std::string nearest_existing_directory(const std::string& path)
{
  std::error_code error;
  fs::path dir =
    fs::absolute(path.empty() ? fs::path(".") : fs::path(path), error).lexically_normal();
  if (error) {
    return "/";
  }
  if (!dir.has_filename() && dir != dir.root_path()) {
    dir = dir.parent_path();  // "a/b/" normalized keeps its slash
  }
  while (!stat_file(dir.string()).is_directory && dir != dir.root_path()) {
    dir = dir.parent_path();
  }
  return dir.string();
}

FileSystemSpace file_system_space(const std::string& path)
{
  FileSystemSpace space;
  std::error_code error;
  fs::path dir = fs::canonical(nearest_existing_directory(path), error);
  struct statvfs vfs {};
  FileStat st = stat_file(dir.string());
  if (error || !st.exists || ::statvfs(dir.c_str(), &vfs) != 0) {
    return space;
  }
  space.known = true;
  space.device = st.device;
  space.mount_point = mount_point_of(dir, st.device);
  space.total_bytes = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  space.free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  space.used_bytes = static_cast<std::uint64_t>(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
  space.total_inodes = vfs.f_files;
  space.free_inodes = vfs.f_favail;
  return space;
}

std::string format_size(std::uint64_t bytes)
{
  if (bytes < 1024) {
    return fmt::format("{} B", bytes);
  }
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < k_units.size()) {
    value /= 1024.0;
    ++unit;
  }
  if (value >= 1023.5 && unit + 1 < k_units.size()) {  // 1048575 B: "1.0 MiB", not "1024 KiB"
    value /= 1024.0;
    ++unit;
  }
  // Round first, so that 9.96 GiB reads "10 GiB" rather than "10.0 GiB".
  if (value < 9.95) {
    return fmt::format("{:.1f} {}", value, k_units[unit]);
  }
  return fmt::format("{:.0f} {}", value, k_units[unit]);
}

std::string describe_full(const FileSystemSpace& space)
{
  if (space.out_of_inodes()) {
    return fmt::format("{} is full (no free inodes; {} free of {})", space.mount_point,
                       format_size(space.free_bytes), format_size(space.total_bytes));
  }
  return fmt::format("{} is full ({} free of {})", space.mount_point, format_size(space.free_bytes),
                     format_size(space.total_bytes));
}

}  // namespace nvfresh

// Full file systems, said plainly.
//
// After a compile failed: if a file system it needed is short of space, one line says which,
// how much is free, and what to do: "/tmp is full (0 B free of 20 GiB): nvcc keeps its temporary
// files there (TMPDIR); free space or set TMPDIR; see nvfresh space". The file systems are those
// of nvcc's temporary files (TMPDIR of the environment nvcc got), the output, the depfile and the
// record root.
//
// "Short of space" is judged after the failure, when the failing compiler has already removed
// its temporary files: a file system that was full during the compile can look half empty then
// (a 1 MiB TMPDIR that nvcc filled is empty again afterwards). So the rule compares free space
// with what a compile needs, not with the size: short means less than k_compile_room_bytes free
// (a thrust sort TU writes 38 MB of temporary files for one arch, CUTLASS TUs several times that,
// a parallel build several TUs at once), or no free inode. Words: "full" when less than
// k_nearly_nothing_bytes is left of a file system at least 90% used (or no inode), "too small"
// when the whole file system is smaller than a compile's room, "nearly full" otherwise. A file
// system with k_compile_room_bytes or more free is never named: a syntax error on a roomy disk
// gets nothing added.
//
// sync's warning (once per build): the build tree's file system is below the free-space floor,
// NVFRESH_SPACE_FLOOR (config key space_floor), default "2GiB,2%": less than 2 GiB free, or
// less than 2% of it free. Grammar of the setting at the top of full_disk.cpp.
#pragma once

#include "util/disk_space.hpp"
#include "util/environment.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nvfresh {

inline constexpr std::uint64_t k_compile_room_bytes = 256ULL << 20;
inline constexpr std::uint64_t k_nearly_nothing_bytes = 16ULL << 20;

enum class Shortage { none, full, too_small, nearly_full };

Shortage shortage_for_compile(const FileSystemSpace& space);

// What a compile keeps on a file system.
enum class SpaceRole { temporary_files, output, depfile, records };

// The line (without "nvfresh: ") for the file systems that are short of space, in the order of
// their first role; roles on one file system share its sentence. "" when none is short.
std::string describe_space_failure(
  const std::vector<std::pair<SpaceRole, FileSystemSpace>>& suspects);

struct FailedCompilePaths {
  std::string output;               // the object (absolute)
  std::string depfile;              // "" when the build asked for none
  std::string record_root;          // nvfresh's records
  const Environment& compiler_env;  // the environment nvcc ran with: its TMPDIR
};

// After nvcc failed and its output went through: the line above on stderr, when a file system is
// short of space; nothing otherwise. Never throws.
void warn_if_failed_for_space(const FailedCompilePaths& paths);

struct SpaceFloor {
  std::uint64_t bytes = 0;  // warn below this many bytes free (0: no byte limit)
  double percent = 0;       // warn below this share of the file system free (0: no share limit)
  std::string text;         // as configured, for the warning
};

inline constexpr const char* k_default_space_floor = "2GiB,2%";

// nullopt (and *error says why) when the text is not a floor.
std::optional<SpaceFloor> parse_space_floor(const std::string& text, std::string* error);

// "" when the file system is at or above the floor, else the warning (without "nvfresh: ").
std::string describe_below_floor(const FileSystemSpace& space, const SpaceFloor& floor);

// sync's check: one line on stderr when the build tree's file system is below the configured
// floor ("" configured: the default), or when the configured floor does not parse. Never throws.
void warn_if_below_floor(const std::string& build_tree, const std::string& configured_floor);

}  // namespace nvfresh

#include "space/full_disk.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

constexpr std::uint64_t k_mib = 1ULL << 20;
constexpr std::uint64_t k_gib = 1ULL << 30;

FileSystemSpace space_of(const char* mount, std::uint64_t device, std::uint64_t total,
                         std::uint64_t free)
{
  FileSystemSpace space;
  space.known = true;
  space.mount_point = mount;
  space.device = device;
  space.total_bytes = total;
  space.free_bytes = free;
  space.used_bytes = total - free;
  return space;
}

}  // namespace

TEST_CASE("short of space for a compile: judged against what a compile needs, not the size",
          "[full_disk]")
{
  struct Case {
    std::uint64_t total;
    std::uint64_t free;
    Shortage expected;
  };
  const Case cases[] = {
    {20 * k_gib, 0, Shortage::full},          // the issue's /tmp
    {20 * k_gib, 5 * k_mib, Shortage::full},  // a little left after the failing compile cleaned up
    {20 * k_gib, 100 * k_mib, Shortage::nearly_full},  // not enough for a big TU's temporaries
    {20 * k_gib, 255 * k_mib, Shortage::nearly_full},  //
    {20 * k_gib, 256 * k_mib, Shortage::none},    // room for a compile: a syntax error gets nothing
    {900 * k_gib, 3 * k_gib, Shortage::none},     // 99.7% used, yet room for compiles
    {64 * 1024, 0, Shortage::full},               // a tiny tmpfs, filled
    {1 * k_mib, 1 * k_mib, Shortage::too_small},  // nvcc filled it, then removed its files
    {100 * k_mib, 90 * k_mib, Shortage::too_small},  //
  };
  for (const auto& c : cases) {
    INFO("total " << c.total << " free " << c.free);
    CHECK(shortage_for_compile(space_of("/x", 1, c.total, c.free)) == c.expected);
  }
  FileSystemSpace no_inodes = space_of("/x", 1, 20 * k_gib, 10 * k_gib);
  no_inodes.total_inodes = 1000;
  CHECK(shortage_for_compile(no_inodes) == Shortage::full);
  CHECK(shortage_for_compile(FileSystemSpace{}) == Shortage::none);  // unknown: never blamed
}

TEST_CASE("the line for a failed compile names the full file system and what to do", "[full_disk]")
{
  auto tmp = space_of("/tmp", 1, 20 * k_gib, 0);
  auto home = space_of("/home", 2, 900 * k_gib, 300 * k_gib);
  CHECK(
    describe_space_failure(
      {{SpaceRole::temporary_files, tmp}, {SpaceRole::output, home}, {SpaceRole::records, home}}) ==
    "/tmp is full (0 B free of 20 GiB): nvcc keeps its temporary files there (TMPDIR); free space "
    "or set "
    "TMPDIR; see nvfresh space");
  CHECK(describe_space_failure({{SpaceRole::temporary_files, home}, {SpaceRole::output, home}})
          .empty());

  auto build = space_of("/build", 3, 20 * k_gib, 100 * k_mib);
  CHECK(describe_space_failure({{SpaceRole::temporary_files, home},
                                {SpaceRole::output, build},
                                {SpaceRole::depfile, build},
                                {SpaceRole::records, build}}) ==
        "/build is nearly full (100 MiB free of 20 GiB): the object goes there, and the depfile "
        "goes there, and "
        "nvfresh keeps its records there; free space or set NVFRESH_RECORD_DIR; see nvfresh space");

  auto small = space_of("/t", 4, 1 * k_mib, 1 * k_mib);
  CHECK(describe_space_failure({{SpaceRole::temporary_files, small}, {SpaceRole::output, tmp}}) ==
        "/t is too small for a compile (1.0 MiB free of 1.0 MiB): nvcc keeps its temporary files "
        "there (TMPDIR); "
        "set TMPDIR to a larger file system; /tmp is full (0 B free of 20 GiB): the object goes "
        "there; free space "
        "there; see nvfresh space");
}

TEST_CASE("the free-space floor: sizes and shares, any of them", "[full_disk]")
{
  std::string error;
  auto floor = parse_space_floor(k_default_space_floor, &error);
  REQUIRE(floor);
  CHECK(floor->bytes == 2 * k_gib);
  CHECK(floor->percent == 2.0);
  CHECK(parse_space_floor("500MiB", &error)->bytes == 500 * k_mib);
  CHECK(parse_space_floor("1.5TB", &error)->bytes == 1'500'000'000'000ULL);
  CHECK(parse_space_floor("10%", &error)->percent == 10.0);
  CHECK(parse_space_floor("0", &error)->bytes == 0);
  auto off = parse_space_floor("off", &error);
  CHECK((off && off->bytes == 0 && off->percent == 0));
  for (const char* bad : {"", "2", "2 GiB", "2gib", "x%", "101%", "2GiB,", "-1GiB", "GiB"}) {
    INFO(bad);
    CHECK_FALSE(parse_space_floor(bad, &error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("sync's warning: below the floor by size or by share, else nothing", "[full_disk]")
{
  std::string error;
  auto floor = *parse_space_floor(k_default_space_floor, &error);
  CHECK(describe_below_floor(space_of("/home", 1, 900 * k_gib, 100 * k_gib), floor).empty());
  CHECK(
    describe_below_floor(space_of("/home", 1, 900 * k_gib, 3 * k_gib), floor) ==
    "/home is nearly full: 3.0 GiB free of 900 GiB (99.7% used), below the free-space floor of "
    "2GiB or 2% "
    "(NVFRESH_SPACE_FLOOR); builds there may fail in ways that do not say so; see nvfresh space");
  CHECK_FALSE(describe_below_floor(space_of("/small", 1, 50 * k_gib, 1 * k_gib), floor).empty());
  CHECK_THAT(
    describe_below_floor(space_of("/t", 1, 64 * k_mib, 0), floor),
    Catch::StartsWith(
      "/t is full: 0 B free of 64 MiB (100.0% used), below the free-space floor of 2GiB or 2%"));
  CHECK(describe_below_floor(space_of("/small", 1, 50 * k_gib, 1 * k_gib),
                             *parse_space_floor("off", &error))
          .empty());
  CHECK(describe_below_floor(FileSystemSpace{}, floor).empty());
}

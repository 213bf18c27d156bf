#include "space/space_report.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_now = 1'800'000'000LL * 1'000'000'000;

// A tree that --clean may remove when older than 30 days: regenerable, idle, 40 days old, ours,
// used by no process and holding only what its build made. `tree` must exist.
TreeReport removable(const std::string& tree = "/b/old")
{
  TreeReport report;
  report.entry = {tree, tree + "/.nvfresh", "/src/p", "/s/old.tree", 0};
  report.exists = true;
  report.real_path = tree;
  report.owner_uid = 1000;
  report.origin = {true, "/src/p", ""};
  report.lock = LockState::idle;
  report.last_build_ns = k_now - 40 * k_day_ns;
  report.size.exists = true;
  report.size.bytes = 1ULL << 30;
  report.process_use = "";
  report.foreign_content = "";
  return report;
}

}  // namespace

TEST_CASE("clean: only regenerable, idle, old trees of the user are removed", "[space_report]")
{
  test::TempDir dir;
  const std::string tree = std::filesystem::canonical(dir.path()).string();
  auto removable = [&] { return ::removable(tree); };
  const CleanRule rule{30, k_now, 1000};
  CHECK(reason_to_keep(removable(), rule).empty());

  struct Case {
    const char* what;
    void (*change)(TreeReport&);
    const char* reason;
  };
  const Case cases[] = {
    {"gone", [](TreeReport& r) { r.exists = false; }, "it is gone"},
    {"running", [](TreeReport& r) { r.lock = LockState::held; }, "a build is running there"},
    {"recent", [](TreeReport& r) { r.last_build_ns = k_now - 5 * 60'000'000'000LL; },
     "built 5 minutes ago"},
    {"ambiguous",
     [](TreeReport& r) {
       r.origin = {false, "/src/gone", "its source dir /src/gone is gone"};
     },
     "ambiguous: its source dir /src/gone is gone"},
    {"someone else's", [](TreeReport& r) { r.owner_uid = 1001; },
     "belongs to uid 1001, not to you (uid 1000)"},
    {"young", [](TreeReport& r) { r.last_build_ns = k_now - 20 * k_day_ns; },
     "built 20 days ago, not more than 30 days"},
    {"a mount inside", [](TreeReport& r) { r.size.mount_inside = "/b/old/mnt"; },
     "mounted inside it (/b/old/mnt)"},
    {"unreadable", [](TreeReport& r) { r.size.unreadable = "/b/old/x"; },
     "cannot be read (/b/old/x)"},
    {"in use", [](TreeReport& r) { r.process_use = "process 7 (ninja) has its working directory"; },
     "it is in use: process 7 (ninja) has its working directory"},
    {"processes not looked at", [](TreeReport& r) { r.process_use.reset(); },
     "the processes using it were not looked at"},
    {"foreign content", [](TreeReport& r) { r.foreign_content = "a git checkout (/b/old/w/.git)"; },
     "it holds a git checkout (/b/old/w/.git)"},
    {"contents not looked at", [](TreeReport& r) { r.foreign_content.reset(); },
     "its contents were not looked at"},
    {"unresolvable",
     [](TreeReport& r) {
       r.real_path.clear();
       r.real_path_error = "No such file or directory";
     },
     "its path cannot be resolved (No such file or directory)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    TreeReport report = removable();
    c.change(report);
    CHECK_THAT(reason_to_keep(report, rule), Catch::Contains(c.reason));
  }
  // Never the user's home or the working directory, nor what holds them.
  TreeReport holding = removable();
  CHECK(reason_to_keep(holding, {30, k_now, 1000, {tree + "/home/u"}}) ==
        "it holds " + tree + "/home/u");
  CHECK(reason_to_keep(holding, {30, k_now, 1000, {tree}}) == "it holds " + tree);
  CHECK(reason_to_keep(holding, {30, k_now, 1000, {tree + "-sibling"}}).empty());

  // The running lock wins over everything, even on an old tree.
  TreeReport running_and_old = removable();
  running_and_old.lock = LockState::held;
  running_and_old.last_build_ns = k_now - 400 * k_day_ns;
  CHECK(activity_of(running_and_old, k_now) == Activity::running);
  CHECK(reason_to_keep(removable(), {0, k_now, 1000}).empty());

  // A process using the tree makes it running, as the build lock does.
  TreeReport in_use = removable();
  in_use.process_use = "process 7 (sleep) has its working directory there (/b/old)";
  CHECK(activity_of(in_use, k_now) == Activity::running);
}

TEST_CASE("clean: never another registered tree or its source dir", "[space_report]")
{
  test::TempDir dir;
  const std::string outer = std::filesystem::canonical(dir.path()).string();
  const TreeReport report = removable(outer);
  const RegisteredTree self{outer, "/src/p"};
  auto rule = [&](std::vector<RegisteredTree> others) {
    others.insert(others.begin(), self);
    return CleanRule{30, k_now, 1000, {}, others};
  };
  CHECK(reason_to_keep(report, rule({})).empty());
  CHECK(reason_to_keep(report, rule({{outer + "/inner", "/src/p"}})) ==
        "it holds registered build tree " + outer + "/inner");
  CHECK(reason_to_keep(report, rule({{"/b/other", outer + "/src2"}})) ==
        "it holds " + outer + "/src2, the source dir of registered build tree /b/other");
  CHECK(reason_to_keep(report, rule({{"/b/other", outer}})) ==
        "it holds " + outer + ", the source dir of registered build tree /b/other");
  // Outside it, or a name that only starts the same: removable.
  CHECK(reason_to_keep(report, rule({{outer + "-2", outer + "-src"}, {"/b/x", ""}})).empty());
}

TEST_CASE("clean: an age that is not a number keeps every tree", "[space_report]")
{
  test::TempDir dir;
  const TreeReport report = removable(std::filesystem::canonical(dir.path()).string());
  CHECK(reason_to_keep(report, {30, k_now, 1000}).empty());
  CHECK_THAT(reason_to_keep(report, {std::numeric_limits<double>::quiet_NaN(), k_now, 1000}),
             Catch::Contains("not more than nan days"));
}

TEST_CASE("the last build is the newest trace nvfresh left in the tree", "[space_report]")
{
  test::TempDir dir;
  RegistryEntry entry{dir.path("b"), dir.path("b/.nvfresh"), "", "", 100};
  CHECK(last_build_ns(entry) == 100);  // only the registry's refresh
  dir.write("b/.nvfresh/events.log", "x\n");
  std::filesystem::create_directories(dir.path("b/.nvfresh/records"));
  set_mtime_ns(dir.path("b/.nvfresh/events.log"), 5'000);
  set_mtime_ns(dir.path("b/.nvfresh/records"), 7'000);
  CHECK(last_build_ns(entry) == 7'000);
  entry.refreshed_ns = 9'000;
  CHECK(last_build_ns(entry) == 9'000);
}

TEST_CASE("examine_tree: a registered CMake tree, with its lock and file system", "[space_report]")
{
  test::TempDir dir;
  dir.write("src/CMakeLists.txt", "project(p)\n");
  dir.write("b/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir.path("src") + "\n");
  TreeReport report = examine_tree({dir.path("b"), dir.path("b/.nvfresh"), "", "", 1});
  CHECK(report.exists);
  CHECK(report.origin.regenerable);
  CHECK(report.lock == LockState::no_lock_file);
  CHECK(report.file_system.known);
  CHECK(report.real_path == std::filesystem::canonical(dir.path("b")).string());
  std::filesystem::create_directory_symlink(dir.path("b"), dir.path("link"));
  CHECK(examine_tree({dir.path("link"), dir.path("b/.nvfresh"), "", "", 1}).real_path ==
        report.real_path);
  TreeReport gone = examine_tree({dir.path("gone"), dir.path("gone/.nvfresh"), "/src/was", "", 1});
  CHECK_FALSE(gone.exists);
  CHECK(gone.real_path.empty());
  CHECK_FALSE(gone.real_path_error.empty());
  CHECK(gone.origin.source_dir == "/src/was");
  CHECK(reason_to_keep(gone, {0, now_ns(), 0}) == "it is gone");
}

TEST_CASE("footprint: records per tree and the registry, one line per store", "[space_report]")
{
  test::TempDir dir;
  dir.write("trees/a.tree", "x");
  TreeReport with_records = removable();
  with_records.records.exists = true;
  with_records.records.bytes = 4096;
  TreeReport without = removable();
  auto entries = footprint({with_records, without}, dir.path("trees"));
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].store == "records");
  CHECK(entries[0].path == "/b/old/.nvfresh");
  CHECK(entries[0].bytes == 4096);
  CHECK(entries[1].store == "registry");
  CHECK(entries[1].bytes > 0);
  CHECK(footprint({}, dir.path("none")).empty());
}

TEST_CASE("ages are said in the largest unit that fits", "[space_report]")
{
  const std::int64_t minute = 60'000'000'000LL;
  CHECK(describe_age(10'000'000'000LL) == "less than a minute");
  CHECK(describe_age(minute) == "1 minute");
  CHECK(describe_age(90 * minute) == "90 minutes");
  CHECK(describe_age(minute * 5 * 60) == "5 hours");
  CHECK(describe_age(40 * k_day_ns) == "40 days");
  CHECK(describe_age(-5) == "less than a minute");
}

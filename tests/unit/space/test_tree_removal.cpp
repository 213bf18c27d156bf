#include "space/tree_removal.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_now = 1'800'000'000LL * 1'000'000'000;
constexpr unsigned k_uid = 1000;

// A tree the rule lets --clean remove: regenerable, idle, 40 days old, ours, used by no process,
// holding only what its build made.
TreeReport removable(const std::string& tree)
{
  TreeReport report;
  report.entry = {tree, tree + "/.nvfresh", "/src/p", "/state/trees/t.tree", 0};
  report.exists = true;
  report.real_path = tree;
  report.owner_uid = k_uid;
  report.origin = {true, "/src/p", ""};
  report.lock = LockState::idle;
  report.last_build_ns = k_now - 40 * k_day_ns;
  report.size.exists = true;
  report.size.bytes = 3ULL << 30;
  report.process_use = "";
  report.foreign_content = "";
  return report;
}

// A disk that removes nothing: it answers from the trees it was given and logs every action, in
// order ("release build /b/old/.nvfresh" when a build lock's holder lets it go).
class FakeTreeDisk : public TreeDisk {
public:
  std::map<std::string, TreeReport> trees;         // by entry.tree: what look_again sees
  std::map<std::string, std::string> resolves_to;  // resolve()'s answer where not real_path
  std::vector<RegisteredTree> registered;
  std::vector<std::string> must_survive{"/home/u"};
  bool clean_lock_free = true;
  bool build_locks_free = true;
  std::string remove_error;
  std::vector<std::string> log;

  std::unique_ptr<HeldLock> lock_clean() override
  {
    log.push_back("lock clean");
    return clean_lock_free ? std::make_unique<Held>(log, "clean") : nullptr;
  }
  std::unique_ptr<HeldLock> lock_build(const std::string& record_root) override
  {
    log.push_back("lock build " + record_root);
    return build_locks_free ? std::make_unique<Held>(log, "build " + record_root) : nullptr;
  }
  TreeReport look_again(const RegistryEntry& entry) override
  {
    log.push_back("look " + entry.tree);
    return trees.at(entry.tree);
  }
  CleanRule rule_now() override { return {30, k_now, k_uid, must_survive, registered}; }
  std::string resolve(const std::string& path, std::string& error) override
  {
    log.push_back("resolve " + path);
    if (auto it = resolves_to.find(path); it != resolves_to.end()) {
      error = it->second.empty() ? "No such file or directory" : "";
      return it->second;
    }
    return trees.at(path).real_path;
  }
  std::string remove_all(const std::string& dir) override
  {
    log.push_back("remove " + dir);
    return remove_error;
  }
  void unregister(const RegistryEntry& entry) override
  {
    log.push_back("unregister " + entry.tree);
  }

  // Adds a registered, removable tree.
  TreeReport& add(const std::string& tree)
  {
    registered.push_back({tree, "/src/p"});
    return trees[tree] = removable(tree);
  }

private:
  class Held : public HeldLock {
  public:
    Held(std::vector<std::string>& log, std::string what) : m_log(log), m_what(std::move(what)) {}
    ~Held() override { m_log.push_back("release " + m_what); }

  private:
    std::vector<std::string>& m_log;
    std::string m_what;
  };
};

using Log = std::vector<std::string>;

}  // namespace

TEST_CASE("removal: a tree the rule allows goes, under its build lock, and leaves the registry",
          "[tree_removal]")
{
  FakeTreeDisk disk;
  const TreeReport planned = disk.add("/b/old");
  {
    TreeRemoval removal(disk);
    REQUIRE(removal.exclusive());
    removal.remove(planned);
    CHECK(removal.outcome().removed == std::vector<std::string>{"/b/old"});
    CHECK(removal.outcome().errors.empty());
    CHECK(removal.outcome().freed_bytes == 3ULL << 30);
  }
  CHECK(disk.log == Log{"lock clean", "lock build /b/old/.nvfresh", "look /b/old", "resolve /b/old",
                        "remove /b/old", "unregister /b/old", "release build /b/old/.nvfresh",
                        "release clean"});
}

TEST_CASE("removal: the directory removed is the one a symlinked entry names", "[tree_removal]")
{
  FakeTreeDisk disk;
  disk.add("/b/link").real_path = "/data/b/real";
  disk.registered = {{"/data/b/real", "/src/p"}};
  TreeRemoval removal(disk);
  removal.remove(disk.trees.at("/b/link"));
  CHECK(removal.outcome().removed == std::vector<std::string>{"/b/link"});
  CHECK(std::count(disk.log.begin(), disk.log.end(), "remove /data/b/real") == 1);
  CHECK(std::count(disk.log.begin(), disk.log.end(), "remove /b/link") == 0);
}

TEST_CASE("removal: our own build lock does not read as a build", "[tree_removal]")
{
  // Looking again probes the build lock, which this process holds exclusively.
  FakeTreeDisk disk;
  disk.add("/b/old").lock = LockState::held;
  TreeReport planned = disk.trees.at("/b/old");
  planned.lock = LockState::idle;
  TreeRemoval removal(disk);
  removal.remove(planned);
  CHECK(removal.outcome().removed.size() == 1);
}

TEST_CASE("removal: a build that started since the dry run keeps the tree", "[tree_removal]")
{
  FakeTreeDisk disk;
  const TreeReport planned = disk.add("/b/old");
  disk.build_locks_free = false;
  TreeRemoval removal(disk);
  removal.remove(planned);
  CHECK(removal.outcome().removed.empty());
  CHECK(removal.outcome().freed_bytes == 0);
  CHECK(removal.outcome().errors ==
        std::vector<std::string>{
          "/b/old not removed: its build lock is held (a build started) or cannot be made"});
  CHECK(disk.log == Log{"lock clean", "lock build /b/old/.nvfresh"});
}

TEST_CASE("removal: what changed since the dry run, seen under the lock, keeps the tree",
          "[tree_removal]")
{
  struct Case {
    const char* what;
    void (*change)(FakeTreeDisk&, TreeReport&);
    const char* reason;
  };
  const Case cases[] = {
    {"a process came", [](FakeTreeDisk&, TreeReport& r) { r.process_use = "process 7 (vim)"; },
     "it is in use: process 7 (vim)"},
    {"a recent build",
     [](FakeTreeDisk&, TreeReport& r) { r.last_build_ns = k_now - 60'000'000'000; },
     "built 1 minute ago"},
    {"new files no build makes",
     [](FakeTreeDisk&, TreeReport& r) { r.foreign_content = "a git checkout (/b/old/w/.git)"; },
     "it holds a git checkout (/b/old/w/.git)"},
    {"its contents could not be looked at",
     [](FakeTreeDisk&, TreeReport& r) { r.foreign_content.reset(); },
     "its contents were not looked at"},
    {"another tree was registered inside it",
     [](FakeTreeDisk& d, TreeReport&) {
       d.registered.push_back({"/b/old/sub", "/src/q"});
     },
     "it holds registered build tree /b/old/sub"},
    {"it became another tree's source dir",
     [](FakeTreeDisk& d, TreeReport&) {
       d.registered.push_back({"/b/other", "/b/old/src"});
     },
     "it holds /b/old/src, the source dir of registered build tree /b/other"},
    {"its CMakeCache.txt changed",
     [](FakeTreeDisk&, TreeReport& r) {
       r.origin = {false, "", "its source dir /s is gone"};
     },
     "ambiguous: its source dir /s is gone"},
    {"it holds the user's home", [](FakeTreeDisk&, TreeReport& r) { r.real_path = "/home"; },
     "it holds /home/u"},
    {"it is gone",
     [](FakeTreeDisk&, TreeReport& r) {
       r.exists = false;
       r.real_path.clear();
     },
     "it is gone"},
    {"it is no longer registered", [](FakeTreeDisk& d, TreeReport&) { d.registered.clear(); },
     "/b/old is no longer in the registry of build trees"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    FakeTreeDisk disk;
    const TreeReport planned = disk.add("/b/old");
    c.change(disk, disk.trees.at("/b/old"));
    TreeRemoval removal(disk);
    removal.remove(planned);
    CHECK(removal.outcome().removed.empty());
    REQUIRE(removal.outcome().errors.size() == 1);
    CHECK_THAT(removal.outcome().errors[0],
               Catch::StartsWith("/b/old not removed: ") && Catch::Contains(c.reason));
    CHECK(std::none_of(disk.log.begin(), disk.log.end(), [](const std::string& action) {
      return action.rfind("remove ", 0) == 0 || action.rfind("unregister ", 0) == 0;
    }));
  }
}

TEST_CASE("removal: only the directory the rule was checked on is removed", "[tree_removal]")
{
  struct Case {
    const char* what;
    std::string resolves_to;
    const char* reason;
  };
  const Case cases[] = {
    {"a symlink on its path now points elsewhere", "/home/u",
     "it resolves to /home/u now, not to /b/old as checked"},
    {"its path cannot be resolved any more", "", "its path cannot be resolved"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    FakeTreeDisk disk;
    const TreeReport planned = disk.add("/b/old");
    disk.resolves_to["/b/old"] = c.resolves_to;
    TreeRemoval removal(disk);
    removal.remove(planned);
    CHECK(removal.outcome().removed.empty());
    REQUIRE(removal.outcome().errors.size() == 1);
    CHECK_THAT(removal.outcome().errors[0], Catch::Contains(c.reason));
    CHECK(disk.log.back() == "release build /b/old/.nvfresh");
    CHECK(std::count(disk.log.begin(), disk.log.end(), "remove " + c.resolves_to) == 0);
  }

  // The root of the file system never, whatever the registry and the rule say.
  FakeTreeDisk disk;
  disk.add("/b/root").real_path = "/";
  disk.registered = {{"/", ""}};
  disk.must_survive.clear();
  TreeRemoval removal(disk);
  removal.remove(disk.trees.at("/b/root"));
  CHECK(removal.outcome().removed.empty());
  CHECK_THAT(removal.outcome().errors.at(0), Catch::Contains("/ is not a directory below /"));
}

TEST_CASE("removal: a removal that fails part way keeps the registry entry", "[tree_removal]")
{
  FakeTreeDisk disk;
  const TreeReport planned = disk.add("/b/old");
  disk.remove_error = "Permission denied";
  TreeRemoval removal(disk);
  removal.remove(planned);
  CHECK(removal.outcome().removed.empty());
  CHECK(removal.outcome().freed_bytes == 0);
  CHECK(removal.outcome().errors ==
        std::vector<std::string>{"/b/old only partly removed: Permission denied"});
  CHECK(std::count(disk.log.begin(), disk.log.end(), "unregister /b/old") == 0);
}

TEST_CASE("removal: while another clean removes trees, a second one removes nothing and says so",
          "[tree_removal]")
{
  FakeTreeDisk disk;
  const TreeReport planned = disk.add("/b/old");
  disk.clean_lock_free = false;
  TreeRemoval removal(disk);
  CHECK_FALSE(removal.exclusive());
  removal.remove(planned);
  CHECK(removal.outcome().removed.empty());
  REQUIRE(removal.outcome().errors.size() == 1);
  CHECK_THAT(removal.outcome().errors[0],
             Catch::StartsWith("another `nvfresh space --clean --yes` is removing trees"));
  CHECK_THAT(removal.outcome().errors[0], !Catch::Contains("build"));
  CHECK(disk.log == Log{"lock clean"});
}

TEST_CASE("removal: several trees, each judged on its own", "[tree_removal]")
{
  FakeTreeDisk disk;
  const TreeReport a = disk.add("/b/a");
  const TreeReport b = disk.add("/b/b");
  const TreeReport c = disk.add("/b/c");
  disk.trees.at("/b/b").process_use = "process 9 (ninja)";
  TreeRemoval removal(disk);
  for (const auto* planned : {&a, &b, &c}) {
    removal.remove(*planned);
  }
  CHECK(removal.outcome().removed == std::vector<std::string>{"/b/a", "/b/c"});
  CHECK(removal.outcome().freed_bytes == 2 * (3ULL << 30));
  CHECK(removal.outcome().errors.size() == 1);
}

TEST_CASE("the system disk removes a tree without following its symlinks", "[tree_removal]")
{
  test::TempDir dir;
  const std::string root = std::filesystem::canonical(dir.path()).string();
  dir.write("outside/keep.txt", "the user's");
  dir.write("build/obj/a.o", "object");
  std::filesystem::create_directory_symlink(root + "/outside", root + "/build/obj/out");
  std::filesystem::create_symlink(root + "/outside/keep.txt", root + "/build/keep.txt");
  std::filesystem::create_directory_symlink(root + "/build", root + "/link");

  SystemTreeDisk disk(root + "/state/trees", 30);
  std::string error;
  CHECK(disk.resolve(root + "/link", error) == root + "/build");
  CHECK(error.empty());
  CHECK(disk.resolve(root + "/missing", error).empty());
  CHECK_FALSE(error.empty());

  CHECK(disk.remove_all(root + "/build").empty());
  CHECK_FALSE(std::filesystem::exists(root + "/build"));
  CHECK(std::filesystem::exists(root + "/outside/keep.txt"));
  CHECK(std::filesystem::is_directory(root + "/outside"));
}

TEST_CASE("the system disk's clean lock admits one clean at a time", "[tree_removal]")
{
  test::TempDir dir;
  SystemTreeDisk disk(dir.path("state/nvfresh/trees"), 30);
  CHECK(clean_lock_file(dir.path("state/nvfresh/trees")) == dir.path("state/nvfresh/clean.lock"));
  {
    auto first = disk.lock_clean();
    REQUIRE(first != nullptr);
    CHECK(std::filesystem::exists(dir.path("state/nvfresh/clean.lock")));
    CHECK(disk.lock_clean() == nullptr);
  }
  CHECK(disk.lock_clean() != nullptr);
}

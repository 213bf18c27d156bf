#include "space/process_use.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nvfresh;

namespace {

// A `sleep` child whose working directory is `cwd` and whose stdin is `open_file` ("" for none);
// killed and reaped on destruction.
class SleepingChild {
public:
  SleepingChild(const std::string& cwd, const std::string& open_file)
  {
    m_pid = ::fork();
    if (m_pid == 0) {
      int fd = open_file.empty() ? -1 : ::open(open_file.c_str(), O_RDONLY);
      if (::chdir(cwd.c_str()) != 0 || (fd >= 0 && ::dup2(fd, 0) < 0)) {
        ::_exit(127);
      }
      ::execlp("sleep", "sleep", "300", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~SleepingChild()
  {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }
  SleepingChild(const SleepingChild&) = delete;
  SleepingChild& operator=(const SleepingChild&) = delete;
  int pid() const { return m_pid; }

private:
  int m_pid = -1;
};

// Waits until the child has exec'd sleep (its comm says so), without a time limit of its own.
ProcessSnapshot snapshot_once_sleeping(int pid)
{
  for (;;) {
    ProcessSnapshot snapshot = snapshot_process_paths();
    for (const auto& use : snapshot.paths) {
      if (use.pid == pid && use.command == "sleep") {
        return snapshot;
      }
    }
    ::usleep(10'000);
  }
}

}  // namespace

TEST_CASE("process_use: a real child's working directory and open file are seen", "[process_use]")
{
  test::TempDir dir;
  const std::string tree = std::filesystem::canonical(dir.path()).string();
  std::filesystem::create_directories(tree + "/work/sub");
  std::filesystem::create_directories(tree + "/other");
  const std::string file = dir.write("held/data.txt", "x");
  SleepingChild child(tree + "/work/sub", file);
  REQUIRE(child.pid() > 0);
  ProcessSnapshot snapshot = snapshot_once_sleeping(child.pid());
  CHECK(snapshot.readable);
  CHECK(process_using(snapshot, tree + "/work") == "process " + std::to_string(child.pid()) +
                                                     " (sleep) has its working directory there (" +
                                                     tree + "/work/sub)");
  CHECK_THAT(process_using(snapshot, tree + "/held"), Catch::Contains("(sleep) has open there"));
  CHECK(process_using(snapshot, tree + "/other").empty());
  CHECK(process_using(snapshot, tree + "/wor").empty());  // a prefix of a name is not "inside"
}

TEST_CASE("process_use: links of a /proc tree, deleted files, sockets", "[process_use]")
{
  test::TempDir proc;
  std::filesystem::create_directories(proc.path("12/fd"));
  std::filesystem::create_directories(proc.path("13/fd"));
  std::filesystem::create_directories(proc.path("self"));
  proc.write("12/comm", "ninja\n");
  std::filesystem::create_symlink("/home/u", proc.path("12/cwd"));
  std::filesystem::create_symlink("socket:[4242]", proc.path("12/fd/3"));
  std::filesystem::create_symlink("/b/t/.ninja_log (deleted)", proc.path("13/fd/4"));
  ProcessSnapshot snapshot = snapshot_process_paths(proc.path());
  CHECK(snapshot.readable);
  CHECK(snapshot.paths.size() == 2);
  CHECK(process_using(snapshot, "/b/t") == "process 13 (?) has open there (/b/t/.ninja_log)");
  CHECK(process_using(snapshot, "/home/u") ==
        "process 12 (ninja) has its working directory there (/home/u)");
  CHECK(process_using(snapshot, "/b/x").empty());

  ProcessSnapshot unreadable = snapshot_process_paths(proc.path("missing"));
  CHECK_FALSE(unreadable.readable);
  CHECK_THAT(process_using(unreadable, "/b/t"), Catch::Contains("cannot be listed"));
}

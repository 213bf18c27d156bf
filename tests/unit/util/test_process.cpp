#include "temp_dir.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

using namespace nvfresh;

TEST_CASE("capture_output returns a program's whole stdout every time", "[process]")
{
  // Once a third of these came back empty: wait() kept the read loop's end-of-file error.
  Environment env = current_environment();
  for (int attempt = 0; attempt < 40; ++attempt) {
    auto text = capture_output({"sh", "-c", "printf 'line one\\nrelease 13.0\\n'"}, env);
    REQUIRE(text.has_value());
    REQUIRE(*text == "line one\nrelease 13.0\n");
  }
}

TEST_CASE("capture_output reports a failing program and a missing one as nothing", "[process]")
{
  Environment env = current_environment();
  REQUIRE_FALSE(capture_output({"sh", "-c", "echo partial; exit 3"}, env).has_value());
  REQUIRE_FALSE(capture_output({"nvfresh-no-such-program-here"}, env).has_value());
}

namespace {

// A process that was killed and reparented to an init that does not reap it stays a zombie: dead.
bool process_alive(const std::string& pid)
{
  const auto stat = nvfresh::try_read_file("/proc/" + pid + "/stat");
  return stat && stat->substr(stat->rfind(')') + 2, 1) != "Z";
}

// Polls until the process is gone or a zombie; false if it still runs after 30 s (it was not
// killed: the test fails, it does not hang).
bool eventually_dead(const std::string& pid)
{
  for (int tries = 0; tries < 3000; ++tries) {
    if (!process_alive(pid)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("run_redirected: past its timeout the child's whole process group is killed", "[process]")
{
  nvfresh::test::TempDir dir;
  const std::string pid_file = dir.path("grandchild.pid");
  const ProcessResult result = run_redirected(
    {"sh", "-c", "sleep 1000 & echo $! > " + pid_file + "; wait"}, current_environment(),
    dir.path("out"), dir.path("err"), {}, RedirectLimits{true, 1});
  CHECK(result.timed_out);
  CHECK(result.term_signal == SIGKILL);
  CHECK_FALSE(result.succeeded());
  // On a loaded machine the shell may not have written the pid before the kill: then there is no
  // grandchild to look at. SIGKILL is delivered asynchronously, so its death is waited for.
  const auto pid_text = nvfresh::try_read_file(pid_file);
  const std::string grandchild =
    pid_text ? pid_text->substr(0, pid_text->find('\n')) : std::string();
  if (!grandchild.empty()) {
    CHECK(eventually_dead(grandchild));
  }
}

TEST_CASE("run_redirected: a child within its timeout, or without one, runs as before", "[process]")
{
  nvfresh::test::TempDir dir;
  const Environment env = current_environment();
  const ProcessResult within =
    run_redirected({"sh", "-c", "echo hi; exit 3"}, env, dir.path("out"), dir.path("err"),
                   dir.path(), RedirectLimits{true, 600});
  CHECK_FALSE(within.timed_out);
  CHECK(within.exit_code == 3);
  CHECK(nvfresh::read_file(dir.path("out")) == "hi\n");
  const ProcessResult plain =
    run_redirected({"sh", "-c", "pwd"}, env, dir.path("out"), dir.path("err"), dir.path());
  CHECK(plain.succeeded());
  CHECK(nvfresh::read_file(dir.path("out")) ==
        std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST_CASE("run_redirected: stop_redirected_children kills the groups of the children running",
          "[process]")
{
  nvfresh::test::TempDir dir;
  std::thread stopper([] {
    // Stopped before or after the child starts: either way it is killed (a child started after
    // the stop is killed at once), so the test cannot hang on the sleep.
    nvfresh::stop_redirected_children();
  });
  const ProcessResult result =
    run_redirected({"sleep", "1000"}, current_environment(), dir.path("out"), dir.path("err"), {},
                   RedirectLimits{true, 0});
  stopper.join();
  nvfresh::allow_redirected_children();
  CHECK(result.term_signal == SIGKILL);
  CHECK_FALSE(result.timed_out);
}

TEST_CASE("replace_process_with becomes the program, or says why it cannot", "[process]")
{
  CHECK(replace_process_with({"nvfresh-no-such-program-here"}) == ENOENT);
  nvfresh::test::TempDir dir;
  const std::string not_executable = dir.write("tool", "#!/bin/sh\nexit 0\n");
  CHECK(replace_process_with({not_executable}) == EACCES);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the child becomes sh, whose status the parent sees
    replace_process_with({"sh", "-c", "exit 7"});
    std::_Exit(99);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
}

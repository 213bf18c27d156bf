#include "trace/trace_line.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

using namespace nvfresh;

namespace {

std::vector<TraceLine> every_kind()
{
  return {process_line(100, 1, "", "/cuda/bin/nvcc"),
          process_line(101, 100, "compute_90a", "/cuda/nvvm/bin/cicc"),
          invoked_line(100, "/usr/local/bin/nvcc wrapper"),
          access_line(AccessKind::read, 101, "/src/a dir/k.cuh"),
          access_line(AccessKind::directory, 101, "/src"),
          access_line(AccessKind::write, 101, "/tmp/tmpxft_00001_k.ptx"),
          access_line(AccessKind::missing, 101, "/src/missing.h"),
          times_line(101, 1000, 2500, false),
          times_line(102, 3000, 3000, true),
          lost_line(101, NVFRESH_TRACE_LOST_UNRESOLVABLE)};
}

}  // namespace

TEST_CASE("trace line: every kind survives the writer and the reader")
{
  for (const TraceLine& line : every_kind()) {
    const std::string text = format_trace_line(line);
    REQUIRE(text.ends_with('\n'));
    CHECK(parse_trace_line(std::string_view(text).substr(0, text.size() - 1)) == line);
  }
}

TEST_CASE("trace line: the writer spells the grammar")
{
  CHECK(format_trace_line(process_line(7, 1, "", "/bin/sh")) == "X 7 1 - /bin/sh\n");
  CHECK(format_trace_line(process_line(7, 1, "sm_80", "/p/ptxas")) == "X 7 1 sm_80 /p/ptxas\n");
  CHECK(format_trace_line(invoked_line(7, "/a/nvcc")) == "I 7 /a/nvcc\n");
  CHECK(format_trace_line(access_line(AccessKind::missing, 7, "/a b")) == "M 7 /a b\n");
  CHECK(format_trace_line(times_line(7, 10, 20, false)) == "T 7 10 20\n");
  CHECK(format_trace_line(times_line(7, 10, 20, true)) == "T 7 10 20 served\n");
  CHECK(format_trace_line(lost_line(0, "lost-3-events")) == "L 0 lost-3-events\n");
  CHECK_THROWS_AS(access_line(AccessKind::exec, 7, "/bin/sh"), std::logic_error);
}

TEST_CASE("trace line: a path the grammar cannot carry becomes a lost line, as in the tracer")
{
  CHECK(format_trace_line(access_line(AccessKind::read, 7, "/a\nR 7 /etc/passwd")) ==
        "L 7 path-too-long-or-newline\n");
  CHECK(format_trace_line(access_line(AccessKind::read, 7, std::string("/a\0b", 4))) ==
        "L 7 path-too-long-or-newline\n");
}

TEST_CASE("trace line: the reader refuses what the grammar does not allow")
{
  for (std::string_view bad : {"", "R", "R ", "R 7", "R 7 relative/path", "R x /a", "RR 7 /a",
                               "Q 7 /a", "X 7 1 - relative", "X 7 1 /a", "X 7 x - /a", "T 7 20 10",
                               "T 7 10 20 later", "T 7 10", "I 7 sh", "R -7x /a"}) {
    INFO(bad);
    CHECK(!parse_trace_line(bad));
  }
  CHECK(!parse_trace_line(std::string_view("R 7 /a\0b", 8)));
}

TEST_CASE("trace line: read_trace_lines passes every whole line and says when the last is torn")
{
  std::vector<std::optional<TraceLine>> seen;
  auto keep = [&](std::optional<TraceLine> line) { seen.push_back(std::move(line)); };
  CHECK(read_trace_lines("R 1 /a\nbroken\nW 1 /b\n", keep));
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == access_line(AccessKind::read, 1, "/a"));
  CHECK(!seen[1]);
  CHECK(seen[2] == access_line(AccessKind::write, 1, "/b"));
  seen.clear();
  CHECK(!read_trace_lines("R 1 /a\nW 1 /b", keep));
  CHECK(seen.size() == 1);
}

TEST_CASE("trace line: what the C tracer writes reads back and writes again byte for byte")
{
  test::TempDir dir;
  const std::string input = dir.write("in put.txt", "x\n");
  const std::string trace_file = dir.path("trace");
  Environment env = current_environment();
  env["LD_PRELOAD"] = NVFRESH_TEST_TRACE_LIB;
  env["NVFRESH_TRACE_FILE"] = trace_file;
  env.erase("NVFRESH_TRACE_SOCKET");
  const std::string script = "cat '" + input + "' '" + dir.path("absent") + "' 2>/dev/null; : > '" +
                             dir.path("out") + "'; exit 0";
  run_redirected({"/bin/sh", "-c", script}, env, dir.path("stdout"), dir.path("stderr"));
  const std::string text = read_file(trace_file);
  std::vector<TraceLine> lines;
  CHECK(read_trace_lines(text, [&](std::optional<TraceLine> line) {
    REQUIRE(line);
    lines.push_back(std::move(*line));
  }));
  std::string again;
  for (const TraceLine& line : lines) {
    again += format_trace_line(line);
  }
  CHECK(again == text);
  auto has = [&](TraceLineKind kind, const std::string& text_of) {
    return std::any_of(lines.begin(), lines.end(), [&](const TraceLine& line) {
      return line.kind == kind && line.text == text_of;
    });
  };
  CHECK(has(TraceLineKind::read, input));
  CHECK(has(TraceLineKind::missing, dir.path("absent")));
  CHECK(has(TraceLineKind::write, dir.path("out")));
  CHECK(std::count_if(lines.begin(), lines.end(), [](const TraceLine& line) {
          return line.kind == TraceLineKind::process;
        }) >= 2);  // sh and cat
  CHECK(std::any_of(lines.begin(), lines.end(),
                    [](const TraceLine& line) { return line.kind == TraceLineKind::times; }));
}

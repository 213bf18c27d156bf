#include "trace/trace.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// A trace file with the given text in a fresh temporary directory.
class TraceFile {
public:
  explicit TraceFile(const std::string& text)
  {
    char pattern[] = "/tmp/nvfresh-test-trace-XXXXXX";
    m_dir = mkdtemp(pattern);
    m_path = m_dir + "/trace";
    nvfresh::write_file_atomically(m_path, text);
  }
  ~TraceFile() { std::filesystem::remove_all(m_dir); }
  const std::string& path() const { return m_path; }

private:
  std::string m_dir;
  std::string m_path;
};

nvfresh::Trace trace_of(const std::string& text)
{
  TraceFile file(text);
  return nvfresh::read_trace(file.path());
}

nvfresh::TracedInputs summary_of(const std::string& text)
{
  return nvfresh::summarize_trace(trace_of(text));
}

using Passes = std::set<std::string>;

enum class Execs { included, left_out };

// The paths of a trace's accesses in trace order; the exec entries (one per program started) too,
// or not.
std::vector<std::string> accessed_paths(const nvfresh::Trace& trace, Execs execs)
{
  std::vector<std::string> paths;
  for (const auto& access : trace.accesses) {
    if (execs == Execs::included || access.kind != nvfresh::AccessKind::exec) {
      paths.push_back(access.path);
    }
  }
  return paths;
}

// What one nvcc -gencode 80 -gencode 90 compile writes, in the order the processes ran.
const std::string k_nvcc_trace = "X 100 1 - /cuda/bin/nvcc\n"
                                 "R 100 /cuda/bin/nvcc.profile\n"
                                 "X 101 100 - /usr/bin/dash\n"
                                 "X 102 101 - /usr/bin/gcc-12\n"
                                 "X 103 102 - /usr/lib/gcc/12/cc1plus\n"
                                 "R 103 /src/a.cu\n"
                                 "R 103 /src/host_only.h\n"
                                 "R 103 /src/common.h\n"
                                 "W 103 /scratch/tmp/tmpxft_0000abcd_00000000-5_a.cpp4.ii\n"
                                 "X 104 100 compute_80 /usr/bin/gcc-12\n"
                                 "X 105 104 compute_80 /usr/lib/gcc/12/cc1plus\n"
                                 "R 105 /src/a.cu\n"
                                 "R 105 /src/common.h\n"
                                 "X 106 100 compute_90 /usr/bin/gcc-12\n"
                                 "X 107 106 compute_90 /usr/lib/gcc/12/cc1plus\n"
                                 "R 107 /src/a.cu\n"
                                 "R 107 /src/common.h\n"
                                 "R 107 /src/hopper_only.h\n"
                                 "X 108 100 sm_90 /cuda/bin/ptxas\n"
                                 "R 108 /scratch/tmp/tmpxft_0000abcd_00000000-6_a.ptx\n"
                                 "R 108 /cuda/lib/libptx_extra.so\n";

}  // namespace

TEST_CASE("trace: read_trace parses every kind of line")
{
  nvfresh::Trace trace = trace_of("X 10 9 compute_80 /usr/bin/gcc\n"
                                  "R 10 /a/b.h\nD 10 /a\nW 10 /o.o\nM 10 /a/c.h\n");
  CHECK(trace.complete);
  REQUIRE(trace.processes.size() == 1);
  CHECK(trace.processes[0].pid == 10);
  CHECK(trace.processes[0].parent_pid == 9);
  CHECK(trace.processes[0].pass == "compute_80");
  CHECK(trace.processes[0].executable == "/usr/bin/gcc");
  REQUIRE(trace.accesses.size() == 5);
  CHECK(trace.accesses[0].kind == nvfresh::AccessKind::exec);
  CHECK(trace.accesses[1].kind == nvfresh::AccessKind::read);
  CHECK(trace.accesses[2].kind == nvfresh::AccessKind::directory);
  CHECK(trace.accesses[3].kind == nvfresh::AccessKind::write);
  CHECK(trace.accesses[4].kind == nvfresh::AccessKind::missing);
  CHECK(trace.accesses[4].path == "/a/c.h");
}

TEST_CASE("trace: read_trace keeps spaces in paths and executables, and normalizes paths")
{
  nvfresh::Trace trace = trace_of("X 7 1 - /opt/my tools/nvcc\nR 7 /src/my dir/../inc/a b.h\n"
                                  "M 7 /src/./x//y.h\n");
  CHECK(trace.complete);
  CHECK(trace.processes.at(0).executable == "/opt/my tools/nvcc");
  CHECK(trace.processes.at(0).pass.empty());
  CHECK(trace.accesses.at(1).path == "/src/inc/a b.h");
  CHECK(trace.accesses.at(2).path == "/src/x/y.h");
}

TEST_CASE("trace: read_trace marks the trace incomplete on lost, malformed and torn lines")
{
  SECTION("a lost event")
  {
    nvfresh::Trace trace = trace_of("R 1 /a.h\nL 1 path-too-long-or-newline\nR 1 /b.h\n");
    CHECK_FALSE(trace.complete);
    CHECK(trace.accesses.size() == 2);
  }
  SECTION("a relative path: the tracer always resolves, so this is damage")
  {
    nvfresh::Trace trace = trace_of("R 1 inc/a.h\nR 1 /b.h\n");
    CHECK_FALSE(trace.complete);
    REQUIRE(trace.accesses.size() == 1);
    CHECK(trace.accesses[0].path == "/b.h");
  }
  SECTION("a relative executable: /proc/self/exe is always absolute (found by fuzz_trace)")
  {
    nvfresh::Trace trace = trace_of("X 1 0 - bin/nvcc\nR 1 /b.h\n");
    CHECK_FALSE(trace.complete);
    CHECK(trace.processes.empty());
    REQUIRE(trace.accesses.size() == 1);
    CHECK(trace.accesses[0].path == "/b.h");
  }
  SECTION("a NUL byte: the tracer writes C strings (found by fuzz_trace)")
  {
    const char text[] = "R 1 /a.h\0/b.h\nX 2 1 - /bin/s\0h\nR 1 /c.h\n";
    nvfresh::Trace trace = trace_of(std::string(text, sizeof text - 1));
    CHECK_FALSE(trace.complete);
    CHECK(trace.processes.empty());
    REQUIRE(trace.accesses.size() == 1);
    CHECK(trace.accesses[0].path == "/c.h");
  }
  SECTION("a torn last line")
  {
    nvfresh::Trace trace = trace_of("R 1 /a.h\nR 1 /b");
    CHECK_FALSE(trace.complete);
    CHECK(trace.accesses.size() == 1);
  }
  SECTION("bad numbers, unknown letters, missing fields")
  {
    for (const char* bad :
         {"R x /a.h\n", "Q 1 /a.h\n", "R 1\n", "X 1 2 -\n", "X 1 -2x - /e\n", "\n"}) {
      INFO(bad);
      CHECK_FALSE(trace_of(bad).complete);
    }
  }
  SECTION("an empty trace is complete and empty")
  {
    nvfresh::Trace trace = trace_of("");
    CHECK(trace.complete);
    CHECK(trace.accesses.empty());
  }
}

TEST_CASE("trace: read_trace throws when the file cannot be read")
{
  CHECK_THROWS_AS(nvfresh::read_trace("/nonexistent/nvfresh/trace"), std::runtime_error);
}

TEST_CASE("trace: resolve_passes: own pass, else the nearest ancestor's, else host")
{
  std::map<int, std::string> passes = nvfresh::resolve_passes(
    trace_of("X 1 0 - /nvcc\nX 2 1 - /sh\nX 3 2 compute_90a /gcc\nX 4 3 - /cc1plus\n"
             "X 5 2 - /gcc\nX 6 5 - /cc1plus\nX 7 99 sm_80 /ptxas\n"));
  CHECK(passes.at(1) == "host");
  CHECK(passes.at(2) == "host");
  CHECK(passes.at(3) == "compute_90a");
  CHECK(passes.at(4) == "compute_90a");
  CHECK(passes.at(6) == "host");
  CHECK(passes.at(7) == "sm_80");
}

TEST_CASE("trace: resolve_passes survives a parent cycle from reused pids")
{
  std::map<int, std::string> passes = nvfresh::resolve_passes(trace_of("X 1 2 - /a\nX 2 1 - /b\n"));
  CHECK(passes.at(1) == "host");
  CHECK(passes.at(2) == "host");
}

TEST_CASE("trace: summarize_trace maps every file to the passes that read it")
{
  nvfresh::TracedInputs inputs = summary_of(k_nvcc_trace);
  CHECK(inputs.files_read.at("/src/a.cu") == Passes{"host", "compute_80", "compute_90"});
  CHECK(inputs.files_read.at("/src/common.h") == Passes{"host", "compute_80", "compute_90"});
  CHECK(inputs.files_read.at("/src/host_only.h") == Passes{"host"});
  CHECK(inputs.files_read.at("/src/hopper_only.h") == Passes{"compute_90"});
  CHECK(inputs.files_read.at("/cuda/bin/nvcc.profile") == Passes{"host"});
  CHECK(inputs.files_read.at("/cuda/lib/libptx_extra.so") == Passes{"sm_90"});
  CHECK(inputs.executables == std::set<std::string>{"/cuda/bin/nvcc", "/usr/bin/dash",
                                                    "/usr/bin/gcc-12", "/usr/lib/gcc/12/cc1plus",
                                                    "/cuda/bin/ptxas"});
}

TEST_CASE("trace: summarize_trace drops nvcc's temporaries, written files, directories and noise")
{
  nvfresh::TracedInputs inputs = summary_of(
    "X 1 0 - /nvcc\nR 1 /tmp/tmpxft_00001234_00000000-6_a.cudafe1.cpp\nR 1 /tmp/tmpfile.h\n"
    "W 1 /out/a.o\nR 1 /out/a.o\n"
    "D 1 /src\nR 1 /proc/self/exe\nR 1 /dev/urandom\nR 1 /sys/x\nR 1 /proc\n"
    "R 1 /usr/lib/locale/C.utf8/LC_CTYPE\nM 1 /usr/share/locale/C/LC_MESSAGES/gcc-12.mo\n"
    "R 1 /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache\nM 1 /etc/ld.so.preload\n"
    "M 1 /tmp/tmpxft_00001234_00000000-6_a.cudafe1.cpp.gch\nM 1 /out/a.o\n"
    "M 1 /tmp/fatbinary_section.h\n");
  CHECK(inputs.files_read.size() == 1);
  CHECK(inputs.files_read.contains("/tmp/tmpfile.h"));  // any other file in TMPDIR stays
  // a probe of a fixed name in TMPDIR is a real lookup (the stub's #include "fatbinary_section.h"
  // looks in the directory of the including file first); one of a tmpxft_ name is not
  CHECK(inputs.missing == std::set<std::string>{"/tmp/fatbinary_section.h"});
}

TEST_CASE("trace: summarize_trace keeps failed lookups that could later appear")
{
  nvfresh::TracedInputs inputs =
    summary_of("X 1 0 - /gcc\nM 1 /src/cfg.h\nM 1 /src/inc1/cfg.h\nR 1 /src/inc2/cfg.h\n"
               "M 1 /src/maybe.h\nM 1 /home/dev/.local/bin/gcc\nM 1 /usr/lib/gcc/12/specs\n");
  CHECK(inputs.missing == std::set<std::string>{"/src/cfg.h", "/src/inc1/cfg.h", "/src/maybe.h",
                                                "/home/dev/.local/bin/gcc",
                                                "/usr/lib/gcc/12/specs"});
  CHECK(inputs.files_read.contains("/src/inc2/cfg.h"));
}

TEST_CASE("trace: summarize_trace: a file missing first and read later is an input, not a probe")
{
  nvfresh::TracedInputs inputs = summary_of("X 1 0 - /gcc\nM 1 /src/gen.h\nR 1 /src/gen.h\n");
  CHECK(inputs.missing.empty());
  CHECK(inputs.files_read.at("/src/gen.h") == Passes{"host"});
}

TEST_CASE("trace: summarize_trace: accesses before a process's X line still get its pass")
{
  nvfresh::TracedInputs inputs =
    summary_of("R 5 /src/early.h\nX 5 4 compute_80 /cc1plus\nX 4 0 - /nvcc\nR 6 /src/orphan.h\n");
  CHECK(inputs.files_read.at("/src/early.h") == Passes{"compute_80"});
  CHECK(inputs.files_read.at("/src/orphan.h") == Passes{"host"});
}

TEST_CASE("trace: parse_trace reads a trace from memory; lost-event lines make it incomplete")
{
  auto complete = nvfresh::parse_trace("X 1 0 - /nvcc\nR 1 /a.h\n");
  CHECK(complete.complete);
  CHECK(complete.accesses.size() == 2);
  CHECK_FALSE(nvfresh::parse_trace("X 1 0 - /nvcc\nL 1 lost-2-events\nR 1 /a.h\n").complete);
  CHECK_FALSE(nvfresh::parse_trace("X 1 0 - /nvcc\nR 1 /a.h").complete);  // torn last line
  CHECK_FALSE(nvfresh::parse_trace("X 1 0 - /nvcc\nR 1 relative.h\n").complete);
}

TEST_CASE("trace: restrict_to_subtree keeps nvcc and its descendants only", "[trace]")
{
  auto trace = trace_of("X 10 1 - /usr/bin/ccache\n"
                        "W 10 /ccache/tmp/stdout.tmp\n"
                        "X 11 10 - /cuda/bin/nvcc\n"
                        "R 11 /cuda/bin/nvcc.profile\n"
                        "X 12 11 compute_80 /cuda/nvvm/bin/cicc\n"
                        "R 12 /src/kernel.h\n"
                        "X 13 10 - /usr/bin/ccache-helper\n"
                        "M 13 /ccache/3/7\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, "/cuda/bin/nvcc");
  REQUIRE(subtree.processes.size() == 2);
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::left_out);
  CHECK(paths == std::vector<std::string>{"/cuda/bin/nvcc.profile", "/src/kernel.h"});
  auto unchanged = nvfresh::restrict_to_subtree(trace, "/not/run");
  CHECK(unchanged.accesses.size() == trace.accesses.size());
}

TEST_CASE("trace: what a launcher did before it exec'ed nvcc in its own process is not nvcc's",
          "[trace]")
{
  // ccache falling back (or a wrapper's `exec nvcc`): pid 10 reads its own state, then becomes nvcc.
  auto trace = trace_of("X 10 1 - /usr/bin/ccache\n"
                        "R 10 /ccache/a/stats\n"
                        "R 10 /home/u/.config/ccache/ccache.conf\n"
                        "X 10 1 - /cuda/bin/nvcc\n"
                        "R 10 /cuda/bin/nvcc.profile\n"
                        "X 11 10 compute_80 /cuda/nvvm/bin/cicc\n"
                        "R 11 /src/kernel.h\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, "/cuda/bin/nvcc");
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::included);
  CHECK(paths == std::vector<std::string>{"/cuda/bin/nvcc", "/cuda/bin/nvcc.profile",
                                          "/cuda/nvvm/bin/cicc", "/src/kernel.h"});
  REQUIRE(subtree.processes.size() == 2);
  CHECK(subtree.processes[0].executable == "/cuda/bin/nvcc");
}

TEST_CASE("trace: a forked child's accesses before its exec belong to its parent's image",
          "[trace]")
{
  // Between fork and exec the child runs its parent's code: nvcc's counts, ccache's does not (it
  // opens the file nvcc's output goes to, then execs nvcc).
  auto trace = trace_of("X 10 1 - /usr/bin/ccache\n"
                        "R 11 /ccache/tmp/stdout.redirect\n"
                        "X 11 10 - /cuda/bin/nvcc\n"
                        "R 12 /early/read/before/cicc\n"
                        "R 13 /early/read/before/unrelated\n"
                        "X 12 11 compute_80 /cuda/nvvm/bin/cicc\n"
                        "X 13 10 - /usr/bin/unrelated\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, "/cuda/bin/nvcc");
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::included);
  CHECK(paths == std::vector<std::string>{"/cuda/bin/nvcc", "/early/read/before/cicc",
                                          "/cuda/nvvm/bin/cicc"});
}

TEST_CASE("trace: read_trace attaches an I line to the latest process of its pid", "[trace]")
{
  auto trace = trace_of("X 10 1 - /usr/bin/dash\n"
                        "X 20 10 - /usr/bin/dash\n"
                        "I 20 /opt/bin/../bin/nvcc\n"
                        "R 20 /opt/bin/nvcc\n");
  CHECK(trace.complete);
  REQUIRE(trace.processes.size() == 2);
  CHECK(trace.processes[0].invoked_as.empty());
  CHECK(trace.processes[1].invoked_as == "/opt/bin/nvcc");
  CHECK_FALSE(trace_of("I 30 /opt/bin/nvcc\n").complete);  // no process 30 started
  CHECK_FALSE(trace_of("X 30 1 - /usr/bin/dash\nI 30 relative/nvcc\n").complete);
}

TEST_CASE("trace: an nvcc wrapper script is the root, and the nvcc it execs stays in the subtree",
          "[trace]")
{
  // /usr/local/bin/nvcc is `#!/bin/sh` + `exec /cuda/bin/nvcc "$@"`, behind a launcher that execs it.
  // The tracer sees dash (its /proc/self/exe) invoked as the script. The script path is resolved on
  // disk, so the test writes a real one.
  char pattern[] = "/tmp/nvfresh-test-wrapper-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string wrapper = dir + "/nvcc";
  nvfresh::write_file_atomically(wrapper, "#!/bin/sh\nexec /cuda/bin/nvcc \"$@\"\n");
  auto trace = trace_of("X 10 1 - /usr/bin/dash\n"
                        "I 10 /build/exec-launcher\n"
                        "R 10 /build/launcher-state\n"
                        "X 10 1 - /usr/bin/dash\n"
                        "I 10 " +
                        wrapper +
                        "\n"
                        "R 10 " +
                        wrapper +
                        "\n"
                        "X 10 1 - /cuda/bin/nvcc\n"
                        "R 10 /cuda/bin/nvcc.profile\n"
                        "X 11 10 compute_80 /cuda/nvvm/bin/cicc\n"
                        "R 11 /src/kernel.h\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, std::filesystem::canonical(wrapper).string());
  std::filesystem::remove_all(dir);
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::left_out);
  CHECK(paths == std::vector<std::string>{wrapper, "/cuda/bin/nvcc.profile", "/src/kernel.h"});
  CHECK(subtree.processes.size() == 3);
}

TEST_CASE("trace: a compiler cache inside nvcc's tree is transparent: what it runs counts, its "
          "cache does not",
          "[trace]")
{
  // /usr/lib/ccache first on PATH: nvcc's `gcc` is ccache, which forks, opens its stdout file in the
  // child and execs the real gcc; its own reads and lookups are of its cache.
  auto trace = trace_of("X 10 1 - /cuda/bin/nvcc\n"
                        "R 10 /cuda/bin/nvcc.profile\n"
                        "X 11 10 compute_80 /usr/bin/ccache\n"
                        "I 11 /usr/lib/ccache/gcc\n"
                        "R 11 /home/u/.config/ccache/ccache.conf\n"
                        "M 11 /home/u/.cache/ccache/3/7/manifest\n"
                        "W 12 /home/u/.cache/ccache/tmp/stdout.tmp\n"
                        "X 12 11 compute_80 /usr/bin/x86_64-linux-gnu-gcc-12\n"
                        "X 13 12 compute_80 /usr/lib/gcc/12/cc1plus\n"
                        "R 13 /src/kernel.h\n"
                        "R 11 /home/u/.cache/ccache/3/stats\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, "/cuda/bin/nvcc");
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::included);
  CHECK(paths == std::vector<std::string>{"/cuda/bin/nvcc", "/cuda/bin/nvcc.profile",
                                          "/usr/bin/x86_64-linux-gnu-gcc-12",
                                          "/usr/lib/gcc/12/cc1plus", "/src/kernel.h"});
  CHECK(subtree.processes.size() == 4);
  auto inputs = nvfresh::summarize_trace(subtree);
  CHECK(inputs.files_read.at("/src/kernel.h") == Passes{"compute_80"});
}

TEST_CASE("trace: ccache masquerading as nvcc: the nvcc it runs is the compile, its cache is not",
          "[trace]")
{
  // CMAKE_CUDA_COMPILER=~/ccache/nvcc, a symlink to ccache: the compiler nvfresh plans is ccache.
  auto trace = trace_of("X 10 1 - /usr/bin/ccache\n"
                        "I 10 /home/u/ccache/nvcc\n"
                        "R 10 /home/u/.cache/ccache/a/stats\n"
                        "X 11 10 - /cuda/bin/nvcc\n"
                        "R 11 /cuda/bin/nvcc.profile\n"
                        "X 12 11 compute_80 /cuda/nvvm/bin/cicc\n"
                        "R 12 /src/kernel.h\n");
  auto subtree = nvfresh::restrict_to_subtree(trace, "/usr/bin/ccache");
  const std::vector<std::string> paths = accessed_paths(subtree, Execs::included);
  CHECK(paths == std::vector<std::string>{"/cuda/bin/nvcc", "/cuda/bin/nvcc.profile",
                                          "/cuda/nvvm/bin/cicc", "/src/kernel.h"});
}

TEST_CASE("T lines give the latest process of their pid its times", "[trace]")
{
  auto trace = nvfresh::parse_trace("X 10 1 - /usr/bin/bash\n"
                                    "T 10 100 150\n"  // bash execs nvcc: its image ends
                                    "X 10 1 - /cuda/bin/nvcc\n"
                                    "X 11 10 compute_80 /cuda/nvvm/bin/cicc\n"
                                    "T 11 300 700\n"
                                    "X 12 10 sm_80 /cuda/bin/ptxas\n"
                                    "T 12 710 720 served\n"
                                    "T 99 1 2\n"  // a forked child that never exec'd: no process
                                    "T 10 150 900\n");
  CHECK(trace.complete);
  REQUIRE(trace.processes.size() == 4);
  CHECK(trace.processes[0].start_ns == 100);
  CHECK(trace.processes[0].end_ns == 150);
  CHECK(trace.processes[1].start_ns == 150);
  CHECK(trace.processes[1].end_ns == 900);
  CHECK(trace.processes[2].start_ns == 300);
  CHECK(trace.processes[2].end_ns == 700);
  CHECK_FALSE(trace.processes[2].served);
  CHECK(trace.processes[3].served);
}

TEST_CASE("a malformed T line makes the trace incomplete", "[trace]")
{
  for (const char* line : {"T 11 300\n", "T 11 700 300\n", "T 11 a 700\n", "T 11 300 700 x\n"}) {
    INFO(line);
    auto trace =
      nvfresh::parse_trace(std::string("X 11 10 compute_80 /cuda/nvvm/bin/cicc\n") + line);
    CHECK_FALSE(trace.complete);
    CHECK(trace.processes.at(0).end_ns == 0);
  }
}

TEST_CASE("a process without a T line has no times", "[trace]")
{
  auto trace = nvfresh::parse_trace("X 11 10 compute_80 /cuda/nvvm/bin/cicc\n");
  CHECK(trace.complete);
  CHECK(trace.processes.at(0).start_ns == 0);
  CHECK(trace.processes.at(0).end_ns == 0);
}

TEST_CASE("trace: summarize_trace names the files a program that is no C/C++ front end read")
{
  // The host compile: cc1plus reads the headers; the assembler reads a file an .incbin names.
  const auto inputs = summary_of("X 100 1 - /cuda/bin/nvcc\n"
                                 "X 101 100 - /usr/bin/dash\n"
                                 "X 102 101 - /usr/bin/x86_64-linux-gnu-g++-12\n"
                                 "X 103 102 - /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus\n"
                                 "R 103 /src/a.cu\n"
                                 "R 103 /src/a.h\n"
                                 "X 104 102 - /usr/bin/x86_64-linux-gnu-as\n"
                                 "R 104 /src/blob.glsl\n"
                                 "X 105 100 sm_80 /cuda/bin/ptxas\n"
                                 "R 105 /cuda/lib/libptx_extra.so\n");
  CHECK(inputs.read_as_data ==
        std::set<std::string>{"/src/blob.glsl", "/cuda/lib/libptx_extra.so"});
  CHECK(inputs.files_read.contains("/src/blob.glsl"));
  // A pid that ran a shell and then exec'd the compiler reads as the compiler does.
  const auto exec_chain = summary_of("X 200 1 - /bin/sh\nX 200 1 - /usr/bin/gcc\nR 200 /src/b.h\n");
  CHECK(exec_chain.read_as_data.empty());
}

TEST_CASE("trace: is_source_reader knows the front ends and drivers by name")
{
  for (const char* reader :
       {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "/usr/lib/gcc/x/12/cc1", "/cuda/bin/cudafe++",
        "/cuda/nvvm/bin/cicc", "/cuda/bin/nvcc", "/usr/bin/g++", "/usr/bin/x86_64-linux-gnu-g++-12",
        "/usr/bin/gcc-12", "/usr/bin/clang++-14", "/usr/bin/c++", "/usr/bin/cc"}) {
    CHECK(nvfresh::is_source_reader(reader));
  }
  for (const char* other :
       {"/usr/bin/x86_64-linux-gnu-as", "/usr/bin/as", "/cuda/bin/ptxas", "/cuda/bin/fatbinary",
        "/usr/bin/dash", "/usr/bin/python3.11", "/usr/bin/ld"}) {
    CHECK_FALSE(nvfresh::is_source_reader(other));
  }
}

#include "repro/run_artifacts.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using nvfresh::find_artifacts;
using nvfresh::glob_match;
using nvfresh::test::TempDir;

namespace {

std::string load_ptx(const std::string& name)
{
  return nvfresh::read_file(std::string(NVFRESH_TEST_DATA_DIR) + "/ptx/" + name);
}

}  // namespace

TEST_CASE("artifacts: globs match within a segment, ** across segments", "[artifacts]")
{
  CHECK(glob_match("*.ptx", "k.ptx"));
  CHECK_FALSE(glob_match("*.ptx", "out/k.ptx"));
  CHECK(glob_match("*/*.ptx", "out/k.ptx"));
  CHECK(glob_match("**/*.ptx", "k.ptx"));
  CHECK(glob_match("**/*.ptx", "a/b/c/k.ptx"));
  CHECK(glob_match("build/**/*.o", "build/CMakeFiles/app.dir/src/k.cu.o"));
  CHECK(glob_match("build/**", "build/x/y"));
  CHECK_FALSE(glob_match("build/**/*.o", "other/k.o"));
  CHECK(glob_match("k?.cubin", "k1.cubin"));
  CHECK(glob_match("[ab].o", "b.o"));
  CHECK_FALSE(glob_match("[ab].o", "c.o"));
  CHECK_FALSE(glob_match("*", ".hidden"));
  CHECK(glob_match(".*", ".hidden"));
  CHECK(glob_match("a//b.o", "a/b.o"));
}

TEST_CASE("artifacts: patterns that leave the run are refused", "[artifacts]")
{
  CHECK(nvfresh::check_artifact_pattern("out/*.ptx").empty());
  CHECK_THAT(nvfresh::check_artifact_pattern("/tmp/*.ptx"),
             Catch::Contains("relative to the run's working directory"));
  CHECK_THAT(nvfresh::check_artifact_pattern("../shared/*.o"), Catch::Contains("'..'"));
  CHECK_THAT(nvfresh::check_artifact_pattern(""), Catch::Contains("empty"));
}

TEST_CASE("artifacts: found files are sorted, each once; unmatched patterns are named",
          "[artifacts]")
{
  TempDir dir;
  dir.write("b.ptx", "x");
  dir.write("a.ptx", "x");
  dir.write("sub/c.cubin", "x");
  dir.write("sub/deeper/d.ptx", "x");
  std::filesystem::create_directory_symlink(dir.path("sub"), dir.path("link"));
  const auto found = find_artifacts(dir.path(), {"*.ptx", "**/*.ptx", "**/*.cubin", "*.fatbin"});
  CHECK(found.files ==
        std::vector<std::string>{"a.ptx", "b.ptx", "sub/c.cubin", "sub/deeper/d.ptx"});
  CHECK(found.unmatched == std::vector<std::string>{"*.fatbin"});
}

TEST_CASE("artifacts: sample directories by index, other names ignored", "[artifacts]")
{
  TempDir dir;
  for (const char* name : {"nvfresh-sample-00010/k.ptx", "nvfresh-sample-00002/k.ptx",
                           "nvfresh-sample-x/k.ptx", "nvfresh-sample-/k.ptx", "other/k.ptx"}) {
    dir.write(name, "x");
  }
  dir.write("nvfresh-sample-00003", "a file, not a sample");
  const auto samples = nvfresh::sample_directories(dir.path());
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].index == 2);
  CHECK(samples[1].index == 10);
  CHECK(samples[1].path == dir.path("nvfresh-sample-00010"));
  CHECK(nvfresh::sample_directory_name(17) == "nvfresh-sample-00017");
  CHECK(nvfresh::sample_directories(dir.path("missing")).empty());
}

TEST_CASE("artifacts: CUDA artifacts by components, other files by bytes, run names rewritten",
          "[artifacts]")
{
  TempDir dir;
  dir.write("run-00001/kernel.ptx", load_ptx("variant_a.ptx"));
  dir.write("run-00001/log.txt", "compiled in /scratch/run-00001/work\n");
  dir.write("run-00002/log.txt", "compiled in /scratch/run-00002/work\n");
  const nvfresh::Rewrites one{{"/scratch/run-00001", "/scratch/run-XXXXX"}};
  const nvfresh::Rewrites two{{"/scratch/run-00002", "/scratch/run-XXXXX"}};
  const auto ptx = nvfresh::digest_run_artifact(dir.path("run-00001"), "kernel.ptx", one);
  REQUIRE(ptx.digests.has_value());
  CHECK(ptx.source == dir.path("run-00001/kernel.ptx"));
  const auto log_one = nvfresh::digest_run_artifact(dir.path("run-00001"), "log.txt", one);
  const auto log_two = nvfresh::digest_run_artifact(dir.path("run-00002"), "log.txt", two);
  CHECK_FALSE(log_one.digests.has_value());
  CHECK(log_one.content == log_two.content);
  CHECK_FALSE(log_one.content ==
              nvfresh::digest_run_artifact(dir.path("run-00002"), "log.txt", one).content);
  const auto list = nvfresh::artifact_component_list({ptx, log_one});
  REQUIRE(list.size() == 2);
  CHECK(list[0].first == "kernel.ptx: sm_100a ptx");
  CHECK(list[1].first == "log.txt: bytes");
  CHECK_THROWS_WITH(nvfresh::digest_run_artifact(dir.path(), "missing.ptx", {}),
                    Catch::Contains("cannot be read: No such file or directory"));
}

TEST_CASE("artifacts: a large artifact is digested; one over the limit names the limit",
          "[artifacts]")
{
  TempDir dir;
  // Sparse files: cheap to make. 300 MiB used to fail as "cannot be read" (a 256 MiB read limit).
  const std::string large = dir.path("large.so");
  dir.write("large.so", "");
  std::filesystem::resize_file(large, std::uintmax_t{300} << 20);
  const auto digested = nvfresh::digest_run_artifact(dir.path(), "large.so", {});
  CHECK_FALSE(digested.digests.has_value());
  CHECK_FALSE(digested.content == nvfresh::hash_bytes(""));
  dir.write("huge.so", "");
  std::filesystem::resize_file(dir.path("huge.so"), nvfresh::k_max_artifact_bytes + 1);
  CHECK_THROWS_WITH(nvfresh::digest_run_artifact(dir.path(), "huge.so", {}),
                    Catch::Contains("huge.so: 4096 MiB, larger than the 4096 MiB limit"));
}

TEST_CASE("artifacts: a text file diff, and binary files", "[artifacts]")
{
  TempDir dir;
  const auto a = dir.write("a.txt", "one\ntwo\nthree\n");
  const auto b = dir.write("b.txt", "one\nTWO\nthree\n");
  CHECK(nvfresh::file_diff(a, b, 0) ==
        std::vector<std::string>{"@@ -1,3 +1,3 @@", " one", "-two", "+TWO", " three"});
  const auto x = dir.write("x.bin", std::string("a\0b", 3));
  const auto y = dir.write("y.bin", std::string("a\0c", 3));
  CHECK(nvfresh::file_diff(x, y, 0) == std::vector<std::string>{"binary files differ"});
}

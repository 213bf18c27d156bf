#include "freshness/path_lookups.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

RecordedInput input_at(const std::string& path)
{
  RecordedInput input;
  input.file.path = path;
  return input;
}

}  // namespace

TEST_CASE("path_lookups_of reads PATH walks back from probes and the file found", "[path_lookups]")
{
  Record record;
  record.working_dir = "/work";
  record.env["PATH"] = "/a:/b:/c";
  record.probes = group_probes({"/a/gcc", "/b/gcc", "/a/as", "/b/as", "/c/as", "/a/ld"});
  record.inputs = {input_at("/c/gcc"), input_at("/b/header_in_a_bin_dir.h"), input_at("/a/first")};
  auto lookups = path_lookups_of(record);
  std::map<std::string, std::string> by_name;
  for (const auto& lookup : lookups) {
    by_name[lookup.name] = lookup.resolved;
  }
  CHECK(by_name.at("gcc") == "/c/gcc");                // probed in /a and /b, found in /c
  CHECK(by_name.at("as").empty());                     // probed everywhere, found nowhere
  CHECK(by_name.at("first") == "/a/first");            // found in the first directory
  CHECK(by_name.count("header_in_a_bin_dir.h") == 0);  // /a was never searched for it
  CHECK(by_name.count("ld") == 0);                     // the walk stopped: /b was not searched
  record.env.erase("PATH");
  CHECK(path_lookups_of(record).empty());
}

TEST_CASE("resolve_in_path takes the first executable, an empty entry is the working directory",
          "[path_lookups]")
{
  test::TempDir dir;
  auto make = [&](const std::string& relative, bool executable) {
    auto path = dir.write(relative, "#!/bin/sh\n");
    if (executable) {
      std::filesystem::permissions(path, std::filesystem::perms::owner_exec,
                                   std::filesystem::perm_options::add);
    }
    return path;
  };
  make("one/gcc", false);  // not executable: skipped, as execvp skips it
  auto two = make("two/gcc", true);
  auto here = make("cwd/gcc", true);
  const std::string path = dir.path("one") + ":" + dir.path("two");
  CHECK(resolve_in_path("gcc", path, dir.path("cwd")) == two);
  CHECK(resolve_in_path("gcc", ":" + path, dir.path("cwd")) == here);
  CHECK(resolve_in_path("g++", path, dir.path("cwd")).empty());
}

TEST_CASE("a data file nvcc found along PATH (nvcc.profile) is resolved by existence",
          "[path_lookups]")
{
  // nvcc looks for nvcc.profile in each PATH directory: the lookup is recorded, but the file is no
  // program. An empty venv bin prepended to PATH must not make it "not found".
  test::TempDir dir;
  auto profile = dir.write("cuda/bin/nvcc.profile", "TOP = $(_HERE_)/..\n");
  auto nvcc = dir.write("cuda/bin/nvcc", "#!/bin/sh\n");
  std::filesystem::permissions(nvcc, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  std::filesystem::create_directories(dir.path("venv/bin"));
  Record record;
  record.working_dir = dir.path();
  record.env["PATH"] = dir.path("cuda/bin");
  RecordedInput profile_input = input_at(profile);
  RecordedInput nvcc_input = input_at(nvcc);
  nvcc_input.role = InputRole::tool;
  record.inputs = {profile_input, nvcc_input};
  std::map<std::string, PathLookup> by_name;
  for (const auto& lookup : path_lookups_of(record)) {
    by_name[lookup.name] = lookup;
  }
  REQUIRE(by_name.count("nvcc.profile") == 1);
  CHECK_FALSE(by_name.at("nvcc.profile").program);
  CHECK(by_name.at("nvcc").program);
  const std::string venv_first = dir.path("venv/bin") + ":" + dir.path("cuda/bin");
  CHECK(resolve_in_path("nvcc.profile", venv_first, dir.path(), false) == profile);
  CHECK(resolve_in_path("nvcc.profile", venv_first, dir.path(), true).empty());
}

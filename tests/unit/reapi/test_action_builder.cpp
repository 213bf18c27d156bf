#include "reapi/action_builder.hpp"

#include "temp_dir.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <build/bazel/remote/execution/v2/remote_execution.pb.h>
#include <catch2/catch.hpp>

using namespace nvfresh;
using namespace nvfresh::reapi;
namespace v2 = build::bazel::remote::execution::v2;

namespace {

ActionSpec spec_with(const test::TempDir& dir)
{
  ActionSpec spec;
  spec.salt = "nvfresh-cache-1/result";
  spec.arguments = {"/usr/local/cuda/bin/nvcc", "-c", "\x02SOURCE\x03/k.cu"};
  spec.environment = {{"NVCC_APPEND_FLAGS", "-lineinfo"}, {"A_FIRST", "1"}};
  spec.working_directory = "build";
  spec.output_paths = {"k.o", "nvfresh.entry"};
  spec.input_files = {{"src/k.cu", dir.write("k.cu", "__global__ void k() {}\n")},
                      {"src/include/k.h", dir.write("k.h", "#pragma once\n")},
                      {"abs/usr/include/stdio.h", dir.write("stdio.h", "int printf();\n")}};
  spec.input_blobs = {{".nvfresh/note", "seen"}};
  return spec;
}

template <typename Message>
Message parse_blob(const BuiltAction& built, const BlobDigest& digest)
{
  Message message;
  REQUIRE(built.blobs.count(digest) == 1);
  REQUIRE(message.ParseFromString(built.blobs.at(digest)));
  return message;
}

}  // namespace

TEST_CASE("SHA-256 digests are lowercase hex with the size")
{
  CHECK(digest_of("abc") ==
        BlobDigest{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 3});
  CHECK(digest_of("").hash == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  test::TempDir dir;
  CHECK(digest_of_file(dir.write("abc", "abc")) == digest_of("abc"));
  CHECK_THROWS_AS(digest_of_file(dir.path("missing")), std::runtime_error);
}

TEST_CASE("an Action names its Command and its input root, salted")
{
  test::TempDir dir;
  const BuiltAction built = build_action(spec_with(dir));
  const auto action = parse_blob<v2::Action>(built, built.action_digest);
  CHECK(action.command_digest().hash() == built.command_digest.hash);
  CHECK(action.input_root_digest().hash() == built.input_root_digest.hash);
  CHECK(action.salt() == "nvfresh-cache-1/result");

  const auto command = parse_blob<v2::Command>(built, built.command_digest);
  REQUIRE(command.arguments_size() == 3);
  CHECK(command.arguments(2) == "\x02SOURCE\x03/k.cu");
  REQUIRE(command.environment_variables_size() == 2);
  CHECK(command.environment_variables(0).name() == "A_FIRST");  // sorted by name
  CHECK(command.environment_variables(1).name() == "NVCC_APPEND_FLAGS");
  REQUIRE(command.output_paths_size() == 2);
  CHECK(command.output_paths(0) == "k.o");
  CHECK(command.working_directory() == "build");
}

TEST_CASE("an executed Action names its platform and asks not to be cached")
{
  test::TempDir dir;
  ActionSpec spec = spec_with(dir);
  const BuiltAction plain = build_action(spec);
  CHECK_FALSE(parse_blob<v2::Action>(plain, plain.action_digest).has_platform());
  CHECK(plain.input_files.size() == 3);
  spec.platform = {{"container-image", "cuda-13.0"}, {"OSFamily", "linux"}};
  spec.do_not_cache = true;
  const BuiltAction built = build_action(spec);
  const auto action = parse_blob<v2::Action>(built, built.action_digest);
  CHECK(action.do_not_cache());
  REQUIRE(action.platform().properties_size() == 2);
  CHECK(action.platform().properties(0).name() == "OSFamily");  // sorted by name
  const auto command = parse_blob<v2::Command>(built, built.command_digest);
  REQUIRE(command.platform().properties_size() == 2);
  CHECK(command.platform().properties(1).value() == "cuda-13.0");
  CHECK(built.action_digest != plain.action_digest);
}

TEST_CASE("the input root is a canonical Merkle tree of the inputs' SHA-256")
{
  test::TempDir dir;
  const BuiltAction built = build_action(spec_with(dir));
  const auto root = parse_blob<v2::Directory>(built, built.input_root_digest);
  REQUIRE(root.files_size() == 0);
  REQUIRE(root.directories_size() == 3);  // sorted: ".nvfresh", "abs", "src"
  CHECK(root.directories(0).name() == ".nvfresh");
  CHECK(root.directories(1).name() == "abs");
  CHECK(root.directories(2).name() == "src");
  BlobDigest src_digest{root.directories(2).digest().hash(),
                        root.directories(2).digest().size_bytes()};
  const auto src = parse_blob<v2::Directory>(built, src_digest);
  REQUIRE(src.files_size() == 1);
  CHECK(src.files(0).name() == "k.cu");
  CHECK(src.files(0).digest().hash() == digest_of("__global__ void k() {}\n").hash);
  REQUIRE(src.directories_size() == 1);
  CHECK(src.directories(0).name() == "include");
  // The input blob is uploaded with the Action; the input files are not (cache-only).
  CHECK(built.blobs.count(digest_of("seen")) == 1);
  CHECK(built.blobs.count(digest_of("__global__ void k() {}\n")) == 0);
}

TEST_CASE("the Action digest changes with every part of the key and nothing else")
{
  test::TempDir dir;
  const ActionSpec base = spec_with(dir);
  const BlobDigest digest = build_action(base).action_digest;
  CHECK(build_action(base).action_digest == digest);  // deterministic

  ActionSpec reordered = base;
  reordered.output_paths = {"nvfresh.entry", "k.o", "k.o"};  // sorted and unique in the Command
  CHECK(build_action(reordered).action_digest == digest);

  ActionSpec salted = base;
  salted.salt = "nvfresh-cache-2/result";
  CHECK(build_action(salted).action_digest != digest);

  ActionSpec env = base;
  env.environment["NVCC_APPEND_FLAGS"] = "-G";
  CHECK(build_action(env).action_digest != digest);

  ActionSpec args = base;
  args.arguments.push_back("-O3");
  CHECK(build_action(args).action_digest != digest);

  ActionSpec content = base;
  content.input_files["src/include/k.h"] = dir.write("k2.h", "#pragma once // edited\n");
  CHECK(build_action(content).action_digest != digest);

  ActionSpec moved = base;
  moved.input_files.erase("src/include/k.h");
  moved.input_files["src/k.h"] = dir.path("k.h");
  CHECK(build_action(moved).action_digest != digest);
}

TEST_CASE("input paths that are not plain relative paths are refused")
{
  test::TempDir dir;
  const std::string file = dir.write("f", "x");
  for (const std::string bad : {"/abs/f", "", "a//b", "a/./b", "a/../b", "a/"}) {
    ActionSpec spec = spec_with(dir);
    spec.input_files = {{bad, file}};
    CHECK_THROWS_AS(build_action(spec), std::runtime_error);
  }
  ActionSpec clash = spec_with(dir);
  clash.input_files = {{"a", file}, {"a/b", file}};
  CHECK_THROWS_AS(build_action(clash), std::runtime_error);
  ActionSpec none = spec_with(dir);
  none.arguments.clear();
  CHECK_THROWS_AS(build_action(none), std::runtime_error);
}

TEST_CASE("an action spec through the launcher's codec is the same Action")
{
  test::TempDir dir;
  const ActionSpec spec = spec_with(dir);
  const ActionSpec back = action_spec_from_json(nlohmann::json::parse(to_json(spec).dump()));
  CHECK(build_action(back).action_digest == build_action(spec).action_digest);
  CHECK_THROWS_AS(action_spec_from_json(nlohmann::json::object()), ProtocolError);
}

TEST_CASE("the SHA-256 cache keeps large files by their stat, and only settled ones")
{
  test::TempDir dir;
  const std::string big(static_cast<size_t>(DigestCache::k_min_size) + 1, 'x');
  const std::string file = dir.write("tool", big);
  const std::string cache_file = dir.path("sha256-cache");
  {
    DigestCache fresh(cache_file);
    CHECK(fresh.digest_of_file(file) == digest_of(big));
    fresh.save();
    CHECK(!std::filesystem::exists(cache_file));  // modified just now: not kept
  }
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(file, old);
  ::sleep(2);  // its ctime (now) must be more than a second old too

  {
    DigestCache settled(cache_file);
    CHECK(settled.digest_of_file(file) == digest_of(big));
    settled.save();
  }
  CHECK(std::filesystem::exists(cache_file));
  std::ifstream in(cache_file);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line.rfind(file + "\t", 0) == 0);
  CHECK(line.substr(line.size() - 64) == digest_of(big).hash);
  // Changed content (size and stamp): hashed again, never the kept digest.
  const std::string edited = big + "y";
  dir.write("tool", edited);
  DigestCache again(cache_file);
  CHECK(again.digest_of_file(file) == digest_of(edited));
}

TEST_CASE("the SHA-256 cache is shared: an entry is saved at once, and no save drops another's")
{
  test::TempDir dir;
  const std::string big(static_cast<size_t>(DigestCache::k_min_size) + 1, 'x');
  const std::string one = dir.write("cicc", big);
  const std::string two = dir.write("ptxas", big + "z");
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(one, old);
  std::filesystem::last_write_time(two, old);
  ::sleep(2);  // their ctimes (now) must be more than a second old too
  const std::string cache_file = dir.path("sha256-cache");
  auto lines = [&] {
    std::ifstream in(cache_file);
    std::vector<std::string> kept;
    for (std::string line; std::getline(in, line);) {
      kept.push_back(line.substr(0, line.find('\t')));
    }
    return kept;
  };

  // Two processes' caches, both read before either hashed (a build's first compiles at once).
  DigestCache first(cache_file);
  DigestCache second(cache_file);
  CHECK(first.digest_of_file(one) == digest_of(big));
  CHECK(lines() == std::vector<std::string>{one});  // saved at once, for the others to find
  CHECK(second.digest_of_file(two) == digest_of(big + "z"));
  CHECK(lines() == std::vector<std::string>{one, two});  // merged: the first's entry stays
  CHECK(second.digest_of_file(one) == digest_of(big));   // the first's, read from the file
  first.save();
  second.save();
  CHECK(lines() == std::vector<std::string>{one, two});
}

TEST_CASE("the SHA-256 cache hashes a file reached by two paths once")
{
  test::TempDir dir;
  const std::string big(static_cast<size_t>(DigestCache::k_min_size) + 1, 'x');
  std::filesystem::create_directories(dir.path("cuda-13.0/bin"));
  const std::string real = dir.write("cuda-13.0/bin/ptxas", big);
  std::filesystem::create_directory_symlink(dir.path("cuda-13.0"), dir.path("cuda"));
  const std::string linked = dir.path("cuda/bin/ptxas");
  std::filesystem::last_write_time(real, std::filesystem::file_time_type::clock::now() -
                                           std::chrono::hours(1));
  ::sleep(2);  // its ctime (now) must be more than a second old too
  const std::string cache_file = dir.path("sha256-cache");
  {
    DigestCache first(cache_file);
    CHECK(first.digest_of_file(real) == digest_of(big));
  }
  // The kept digest stands in for the file's bytes: what the other path gets shows where from.
  const std::string stand_in(64, 'a');
  std::string text;
  {
    std::ifstream in(cache_file);
    REQUIRE(std::getline(in, text));
  }
  text.replace(text.size() - 64, 64, stand_in);
  std::ofstream(cache_file, std::ios::trunc) << text << '\n';

  DigestCache second(cache_file);
  CHECK(second.digest_of_file(linked).hash == stand_in);
  second.save();
  DigestCache third(cache_file);
  CHECK(third.digest_of_file(linked).hash == stand_in);  // kept under its own path too
}

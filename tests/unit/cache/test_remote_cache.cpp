#include "cache/remote_cache.hpp"
#include "util/file_io.hpp"

#include "temp_dir.hpp"

#include "cache/compile_identity.hpp"
#include "cache/step_entry.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

using namespace nvfresh;

namespace {

const std::string k_source(k_source_token);
const std::string k_build(k_build_token);

PathMap tree_map()
{
  return PathMap(TreeRoots{"/ck/build", "/ck", "", ""});
}

CompileIdentity identity()
{
  return {{"-c", "/ck/k.cu", "-I/ck/include"},
          {{"NVCC_APPEND_FLAGS", "-I/ck/extra"}, {"PATH", "/usr/bin"}},
          "/ck/build",
          "/ck/k.cu",
          "/usr/local/cuda/bin/nvcc",
          "/ck/build",
          "/ck/build/CMakeFiles/k.dir/k.cu.o"};
}

}  // namespace

TEST_CASE("inputs are named in the input root by the root they are under")
{
  CHECK(input_root_name(k_source + "/a/b.h") == "src/a/b.h");
  CHECK(input_root_name(k_build + "/gen.h") == "build/gen.h");
  CHECK(input_root_name(k_build) == "build");
  CHECK(input_root_name("/usr/include/stdio.h") == "abs/usr/include/stdio.h");
  CHECK(input_root_name("/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/vector") ==
        "abs/usr/include/c++/12/vector");
  CHECK(input_root_name(k_source + "/a/./b/../c.h") == "src/a/c.h");
}

TEST_CASE("the object is an output relative to the working directory")
{
  const PathMap map = tree_map();
  CHECK(object_output_path(identity(), "/ck/build/CMakeFiles/k.dir/k.cu.o", map) ==
        "CMakeFiles/k.dir/k.cu.o");
  CHECK(object_output_path(identity(), "/elsewhere/k.o", map) == "../abs/elsewhere/k.o");
}

TEST_CASE("the manifest Action is bound to the local manifest key, with the tree roots left out")
{
  const PathMap map = tree_map();
  const Digest key = hash_bytes("manifest");
  const auto action = manifest_action(key, identity(), map, k_cache_key_version);
  CHECK(action.salt == "nvfresh-cache-1/manifest");
  CHECK(action.environment.at("NVFRESH_MANIFEST_KEY") == key.to_hex());
  CHECK(action.environment.at("NVCC_APPEND_FLAGS") == "-I" + k_source + "/extra");
  CHECK(!action.environment.contains("PATH"));  // judged by what it resolves, as locally
  CHECK(action.arguments[0] == "/usr/local/cuda/bin/nvcc");
  CHECK(action.arguments[2] == k_source + "/k.cu");
  CHECK(action.working_directory == "build");
  CHECK(action.input_files.at("src/k.cu") == "/ck/k.cu");
  CHECK(action.output_paths == std::vector<std::string>{"nvfresh.manifest"});
}

TEST_CASE("the result Action names every input of the entry and its result key")
{
  const PathMap map = tree_map();
  ManifestEntry entry;
  entry.result = hash_bytes("result");
  entry.inputs = {{k_source + "/k.cu", hash_bytes("k"), "source", "-"},
                  {k_build + "/gen.h", hash_bytes("g"), "header", "-"},
                  {"/usr/local/cuda/bin/cicc", hash_bytes("c"), "tool", "-"}};
  const Digest key = hash_bytes("manifest");
  const CompileIdentity id = identity();
  const auto action = result_action(key, entry, id, id.object, map, k_cache_key_version);
  CHECK(action.salt == "nvfresh-cache-1/result");
  CHECK(action.environment.at("NVFRESH_RESULT_KEY") == entry.result.to_hex());
  CHECK(action.environment.at("NVFRESH_MANIFEST_KEY") == key.to_hex());
  CHECK(action.input_files.at("src/k.cu") == "/ck/k.cu");
  CHECK(action.input_files.at("build/gen.h") == "/ck/build/gen.h");
  CHECK(action.input_files.at("abs/usr/local/cuda/bin/cicc") == "/usr/local/cuda/bin/cicc");
  CHECK(action.output_paths ==
        std::vector<std::string>{"CMakeFiles/k.dir/k.cu.o", "nvfresh.entry"});
}

TEST_CASE("a step Action is bound to the local step key and names the step's command")
{
  const Digest key = hash_bytes("step");
  const std::vector<std::string> arguments{"ptxas", "-arch=sm_90", "\x02TMP\x03.ptx"};
  const auto action = step_action(key, arguments, k_step_key_version);
  CHECK(action.salt == "nvfresh-step-2/step");
  CHECK(action.environment ==
        std::map<std::string, std::string>{{"NVFRESH_STEP_KEY", key.to_hex()}});
  CHECK(action.arguments == arguments);
  CHECK(action.output_paths == std::vector<std::string>{"nvfresh.step"});
  CHECK(action.input_files.empty());
  CHECK(step_action(hash_bytes("other"), arguments, k_step_key_version) != action);
}

TEST_CASE("a remote is set by NVFRESH_REMOTE, read-only by NVFRESH_REMOTE_READ_ONLY")
{
  Config config;
  CHECK(!remote_settings(config));
  config.remote = "grpc://127.0.0.1:50051";
  config.remote_instance = "main";
  config.remote_read_only = "1";
  const auto settings = remote_settings(config);
  REQUIRE(settings);
  CHECK(settings->url == "grpc://127.0.0.1:50051");
  CHECK(settings->instance == "main");
  CHECK(settings->read_only);
}

TEST_CASE("the remote's budgets are NVFRESH_REMOTE_COMPILE_BUDGET and _BUILD_BUDGET, in seconds")
{
  Config config;
  config.remote = "grpc://127.0.0.1:50051";
  CHECK(remote_settings(config)->compile_budget_ns == k_default_compile_budget_ns);
  CHECK(remote_settings(config)->build_budget_ns == k_default_build_budget_ns);
  config.remote_compile_budget = "2";
  config.remote_build_budget = "0.5";
  CHECK(remote_settings(config)->compile_budget_ns == 2'000'000'000);
  CHECK(remote_settings(config)->build_budget_ns == 500'000'000);
  CHECK(remote_settings(config)->refusal.empty());
  config.remote_build_budget = "half a minute";
  CHECK(remote_settings(config)->refusal.find("NVFRESH_REMOTE_BUILD_BUDGET='half a minute'") !=
        std::string::npos);
}

TEST_CASE("remote execution is set by NVFRESH_REMOTE_EXEC, with the remote's instance")
{
  Config config;
  CHECK(!remote_exec_settings(config));
  config.remote_exec = "grpc://127.0.0.1:50052";
  config.remote_instance = "main";
  auto settings = remote_exec_settings(config);
  REQUIRE(settings);
  CHECK(settings->url == "grpc://127.0.0.1:50052");
  CHECK(settings->instance == "main");
  CHECK(settings->platform == std::map<std::string, std::string>{{"OSFamily", "linux"}});
  CHECK(settings->execute_deadline_ms == 300000);
  CHECK(settings->refusal.empty());
  config.remote_exec_platform = "container-image=docker://cuda:13.0,OSFamily=Linux";
  config.remote_exec_timeout = "2.5";
  settings = remote_exec_settings(config);
  CHECK(settings->platform == std::map<std::string, std::string>{
                                {"OSFamily", "Linux"}, {"container-image", "docker://cuda:13.0"}});
  CHECK(settings->execute_deadline_ms == 2500);
  config.remote_exec_timeout = "soon";
  CHECK(remote_exec_settings(config)->refusal.find("NVFRESH_REMOTE_EXEC_TIMEOUT") !=
        std::string::npos);
  config.remote_exec_timeout.clear();
  config.remote_exec_platform = "=linux";
  CHECK(remote_exec_settings(config)->refusal.find("NVFRESH_REMOTE_EXEC_PLATFORM") !=
        std::string::npos);
  CHECK(!parse_platform("OSFamily"));
  CHECK(parse_platform(",,")->size() == 1);
}

TEST_CASE("trusted keys are NVFRESH_REMOTE_TRUSTED_KEYS's files, ':' between")
{
  Config config;
  config.remote = "grpc://127.0.0.1:50051";
  CHECK(remote_settings(config)->trusted_keys.empty());
  config.remote_trusted_keys = "/keys/ci.pub:/keys/ci-next.pub:";
  CHECK(remote_settings(config)->trusted_keys ==
        std::vector<std::string>{"/keys/ci.pub", "/keys/ci-next.pub"});
  config.remote_trusted_keys = "::/k.pub";
  CHECK(remote_settings(config)->trusted_keys == std::vector<std::string>{"/k.pub"});
}

TEST_CASE("an uploaded entry leaves out what only its writer uses")
{
  CacheEntry entry;
  entry.manifest_key = hash_bytes("manifest");
  entry.result_key = hash_bytes("result");
  entry.object_digest = hash_bytes("object");
  entry.depfile_prerequisites = {k_source + "/k.cu"};
  entry.components = {{"host code", hash_bytes("host")}};
  entry.bound = CacheEntry::Binding{"/ck/build", "/ck"};
  entry.nvcc_version = "13.0";
  entry.origin_tree = "/home/alice/proj/build";
  entry.origin_cwd = "/home/alice/proj/build";
  entry.origin_object = "/home/alice/proj/build/k.o";
  entry.origin_command = {"/usr/local/cuda/bin/nvcc", "-c", "/home/alice/proj/k.cu"};
  entry.origin_env = {{"HOME", "/home/alice"}, {"PATH", "/home/alice/bin:/usr/bin"}};

  const CacheEntry shared = entry_for_readers(entry);
  const std::string text = serialize_cache_entry(shared);
  CHECK(text.find("/home/alice") == std::string::npos);
  CHECK(shared.origin_command.empty());
  CHECK(shared.origin_env.empty());
  CacheEntry kept = entry;
  kept.origin_tree = kept.origin_cwd = kept.origin_object = "";
  kept.origin_command.clear();
  kept.origin_env.clear();
  CHECK(shared == kept);  // keys, digests, depfile, bound roots and the rest unchanged
}

namespace {

// A RemoteCache whose helper is `script` (a shell script standing in for nvfresh-remote).
RemoteCache with_helper(const test::TempDir& dir, const std::string& script)
{
  const std::string helper = dir.write("nvfresh-remote", "#!/bin/sh\n" + script);
  std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
  RemoteSettings settings;
  settings.url = "grpc://127.0.0.1:1";
  settings.helper = helper;
  return RemoteCache(settings);
}

}  // namespace

TEST_CASE("the helper's request carries the protocol version, and the verb it is run with")
{
  test::TempDir dir;
  // A miss (1) only for a "get" whose request says this nvfresh's protocol version.
  RemoteCache remote = with_helper(
    dir, fmt::format("[ \"$1\" = get ] && grep -q '\"protocol_version\":{}' \"$2\" && exit 1\n"
                     "echo 'nvfresh-remote: not the request this test wants' >&2; exit 2\n",
                     k_helper_protocol_version));
  std::int64_t bytes = 0;
  CHECK(!remote.fetch_step(step_action(hash_bytes("step"), {"ptxas"}, k_cache_key_version), bytes));
}

TEST_CASE("a helper of another protocol version is a remote failure that says so")
{
  test::TempDir dir;
  RemoteCache remote = with_helper(
    dir, "echo 'nvfresh-remote: a request of protocol version 1, this nvfresh-remote speaks "
         "version 2: install nvfresh and nvfresh-remote from the same build' >&2\nexit 3\n");
  std::int64_t bytes = 0;
  const ActionSpec action = step_action(hash_bytes("step"), {"ptxas"}, k_cache_key_version);
  CHECK_THROWS_AS(remote.fetch_step(action, bytes), RemoteFailure);
  CHECK_THROWS_WITH(remote.fetch_step(action, bytes),
                    Catch::StartsWith("nvfresh-remote speaks another protocol version") &&
                      Catch::Contains("this nvfresh-remote speaks version 2"));
  CHECK_THROWS_AS(remote.publish_step(action, "entry"), RemoteFailure);
}

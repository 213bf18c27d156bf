#include "repro/repro.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <variant>

using nvfresh::ComponentDigestList;
using nvfresh::Digest;
using nvfresh::Environment;
using nvfresh::group_variants;
using nvfresh::hash_bytes;
using nvfresh::ReproTarget;
using nvfresh::RunDigests;

namespace {

ComponentDigestList components(const std::string& host, const std::string& cubin)
{
  return {{"host code", hash_bytes(host)}, {"sm_90a cubin", hash_bytes(cubin)}};
}

ReproTarget target_of(const std::vector<std::string>& command)
{
  auto result = nvfresh::prepare_repro_target(command, Environment{}, "/work");
  if (const auto* problem = std::get_if<std::string>(&result)) {
    FAIL(*problem);
  }
  return std::get<ReproTarget>(result);
}

std::string problem_of(const std::vector<std::string>& command)
{
  auto result = nvfresh::prepare_repro_target(command, Environment{}, "/work");
  REQUIRE(std::holds_alternative<std::string>(result));
  return std::get<std::string>(result);
}

}  // namespace

TEST_CASE("repro: identical runs form one variant", "[repro]")
{
  std::vector<RunDigests> runs;
  for (std::size_t i = 0; i < 4; ++i) {
    runs.push_back({i, components("h", "c")});
  }
  auto variants = group_variants(runs);
  REQUIRE(variants.size() == 1);
  CHECK(variants[0].runs == std::vector<std::size_t>{0, 1, 2, 3});
}

TEST_CASE("repro: variants are ordered by first run, runs ascending", "[repro]")
{
  // Given out of order, as parallel runs finish.
  std::vector<RunDigests> runs{{3, components("h", "B")},
                               {0, components("h", "A")},
                               {2, components("h", "A")},
                               {1, components("h", "B")},
                               {4, components("h2", "A")}};
  auto variants = group_variants(runs);
  REQUIRE(variants.size() == 3);
  CHECK(variants[0].runs == std::vector<std::size_t>{0, 2});
  CHECK(variants[1].runs == std::vector<std::size_t>{1, 3});
  CHECK(variants[2].runs == std::vector<std::size_t>{4});
  CHECK(nvfresh::differing_components(variants[0], variants[1]) ==
        std::vector<std::string>{"sm_90a cubin"});
  CHECK(nvfresh::differing_components(variants[0], variants[2]) ==
        std::vector<std::string>{"host code"});
}

TEST_CASE("repro: a component present in only some runs makes a variant", "[repro]")
{
  ComponentDigestList more = components("h", "c");
  more.emplace_back("compute_90a ptx", hash_bytes("p"));
  auto variants = group_variants({{0, components("h", "c")}, {1, more}});
  REQUIRE(variants.size() == 2);
  CHECK(nvfresh::differing_components(variants[0], variants[1]) ==
        std::vector<std::string>{"compute_90a ptx"});
}

TEST_CASE("repro: no successful runs, no variants", "[repro]")
{
  CHECK(group_variants({}).empty());
}

TEST_CASE("repro: run 0 is the ASLR-off control, the others are perturbed", "[repro]")
{
  auto plan = nvfresh::plan_perturbations(8, 42);
  REQUIRE(plan.size() == 8);
  CHECK(plan[0].aslr_off);
  CHECK(plan[0].heap_env.empty());
  CHECK(plan[0].env_pad_bytes == 0);
  CHECK(plan[0].heap_noise_seed == 0);
  std::set<std::string> heap_variables;
  std::set<std::uint64_t> noise_seeds;
  for (std::size_t i = 1; i < plan.size(); ++i) {
    CHECK_FALSE(plan[i].aslr_off);
    CHECK_FALSE(plan[i].heap_env.empty());
    CHECK(plan[i].env_pad_bytes > 0);
    CHECK(plan[i].heap_noise_seed != 0);
    noise_seeds.insert(plan[i].heap_noise_seed);
    for (const auto& [name, value] : plan[i].heap_env) {
      heap_variables.insert(name);
    }
  }
  CHECK(heap_variables ==
        std::set<std::string>{"GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_PERTURB_"});
  CHECK(noise_seeds.size() == plan.size() - 1);
  CHECK(nvfresh::plan_perturbations(8, 42)[5].describe() == plan[5].describe());
  CHECK(plan[0].describe() == "control: ASLR off");
}

TEST_CASE("repro: a perturbation sets TMPDIR, the heap variables and the padding", "[repro]")
{
  auto plan = nvfresh::plan_perturbations(2, 7);
  Environment env = plan[1].apply({{"PATH", "/bin"}, {"TMPDIR", "/tmp"}}, "/scratch/run-1/tmp", "");
  CHECK(env["TMPDIR"] == "/scratch/run-1/tmp");
  CHECK(env["PATH"] == "/bin");
  CHECK(env[std::string(nvfresh::k_repro_pad_variable)].size() == plan[1].env_pad_bytes);
  CHECK(env.count(plan[1].heap_env.front().first) == 1);
  CHECK(env.count("LD_PRELOAD") == 0);  // no heap-noise library: no preload
}

TEST_CASE("repro: heap noise preloads its library in front of an existing LD_PRELOAD", "[repro]")
{
  auto plan = nvfresh::plan_perturbations(2, 7);
  const std::string seed = std::to_string(plan[1].heap_noise_seed);
  Environment alone = plan[1].apply({{"PATH", "/bin"}}, "/t", "/opt/lib/libnvfresh_heap_noise.so");
  CHECK(alone["LD_PRELOAD"] == "/opt/lib/libnvfresh_heap_noise.so");
  CHECK(alone[std::string(nvfresh::k_heap_noise_variable)] == seed);
  Environment chained =
    plan[1].apply({{"LD_PRELOAD", "/x/libother.so"}}, "/t", "/opt/lib/libnvfresh_heap_noise.so");
  CHECK(chained["LD_PRELOAD"] == "/opt/lib/libnvfresh_heap_noise.so:/x/libother.so");
  Environment control =
    plan[0].apply({{"LD_PRELOAD", "/x/libother.so"}}, "/t", "/opt/lib/libnvfresh_heap_noise.so");
  CHECK(control["LD_PRELOAD"] == "/x/libother.so");
  CHECK(control.count(std::string(nvfresh::k_heap_noise_variable)) == 0);
  CHECK_THAT(plan[1].describe(), Catch::Contains("heap noise " + seed));
}

TEST_CASE("repro: the output option is replaced in every spelling", "[repro]")
{
  for (const auto& spelling : std::vector<std::vector<std::string>>{{"-o", "build/k.o"},
                                                                    {"-o=build/k.o"},
                                                                    {"--output-file", "build/k.o"},
                                                                    {"--output-file=build/k.o"}}) {
    std::vector<std::string> command{"nvcc", "-c", "k.cu", "-arch=sm_90a"};
    command.insert(command.end(), spelling.begin(), spelling.end());
    ReproTarget target = target_of(command);
    CHECK(target.output_name == "k.o");
    CHECK(nvfresh::run_command(target, "/r/k.o", "/r/k.d") ==
          std::vector<std::string>{"nvcc", "-c", "k.cu", "-arch=sm_90a", "-o", "/r/k.o"});
  }
}

TEST_CASE("repro: without -o the output is named as nvcc names it", "[repro]")
{
  CHECK(target_of({"nvcc", "-c", "dir/k.cu"}).output_name == "k.o");
  CHECK(target_of({"nvcc", "-ptx", "k.cu"}).output_name == "k.ptx");
  CHECK(target_of({"nvcc", "-cubin", "-arch=sm_90a", "k.cu"}).output_name == "k.cubin");
}

TEST_CASE("repro: an explicit depfile is redirected too", "[repro]")
{
  ReproTarget target = target_of({"nvcc", "-MD", "-MF", "k.o.d", "-c", "k.cu", "-o", "k.o"});
  CHECK(nvfresh::run_command(target, "/r/k.o", "/r/k.d") ==
        std::vector<std::string>{"nvcc", "-MD", "-c", "k.cu", "-o", "/r/k.o", "-MF", "/r/k.d"});
}

TEST_CASE("repro: refuses what is not a single-source compile", "[repro]")
{
  CHECK_THAT(problem_of({"nvcc", "-c", "a.cu", "b.cu"}), Catch::Contains("single-source"));
  CHECK_THAT(problem_of({"nvcc", "a.o", "-o", "app"}), Catch::Contains("single-source"));
  CHECK_THAT(problem_of({}), Catch::Contains("no compile command"));
}

TEST_CASE("repro: the runs' private TMPDIR paths are factored out before digesting", "[repro]")
{
  const std::string dir = "/tmp/nvfresh-repro.ab12CD/run-00003/tmp";
  CHECK(nvfresh::canonical_tmp_dir(dir) == "/tmp/nvfresh-repro.ab12CD/run-XXXXX/tmp");
  std::string bytes = "x" + dir + "/tmpxft_1.cpp|" + dir + "|";
  std::string other = "x/tmp/nvfresh-repro.ab12CD/run-00004/tmp/tmpxft_1.cpp|/tmp/"
                      "nvfresh-repro.ab12CD/run-00004/tmp|";
  CHECK(nvfresh::replace_same_length(bytes, dir, nvfresh::canonical_tmp_dir(dir)) == 2);
  const std::string dir4 = "/tmp/nvfresh-repro.ab12CD/run-00004/tmp";
  nvfresh::replace_same_length(other, dir4, nvfresh::canonical_tmp_dir(dir4));
  CHECK(bytes == other);
  CHECK(nvfresh::replace_same_length(bytes, "abc", "ab") == 0);
}

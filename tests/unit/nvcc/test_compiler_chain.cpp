#include "nvcc/compiler_chain.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("the compiler chain is split at the first word naming nvcc", "[compiler_chain]")
{
  auto plain = split_compiler_chain({"nvcc", "-c", "a.cu"});
  REQUIRE(plain);
  REQUIRE(plain->prefix.empty());
  REQUIRE(plain->compiler == "nvcc");
  REQUIRE(plain->args == std::vector<std::string>{"-c", "a.cu"});

  auto chained =
    split_compiler_chain({"/usr/bin/ccache", "/usr/local/cuda/bin/nvcc", "-c", "a.cu"});
  REQUIRE(chained);
  REQUIRE(chained->prefix == std::vector<std::string>{"/usr/bin/ccache"});
  REQUIRE(chained->compiler == "/usr/local/cuda/bin/nvcc");

  auto option_mentioning_nvcc = split_compiler_chain({"nvcc", "-ccbin", "/opt/nvcc-host/g++"});
  REQUIRE(option_mentioning_nvcc->args.size() == 2);

  REQUIRE_FALSE(split_compiler_chain({"g++", "-c", "a.cpp"}));
  REQUIRE_FALSE(split_compiler_chain({}));
}

TEST_CASE("empty launcher words are dropped", "[compiler_chain]")
{
  auto chain = split_compiler_chain({"", "ccache", "", "nvcc", "-c", "a.cu"});
  REQUIRE(chain);
  REQUIRE(chain->prefix == std::vector<std::string>{"ccache"});
}

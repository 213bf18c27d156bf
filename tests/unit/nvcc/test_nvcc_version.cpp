#include "nvcc/nvcc_version.hpp"

#include <catch2/catch.hpp>

TEST_CASE("release_line takes the line that names the release", "[nvcc_version]")
{
  const std::string text = "nvcc: NVIDIA (R) Cuda compiler driver\n"
                           "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                           "Built on Wed_Jul_16_07:30:01_PM_PDT_2025\n"
                           "Cuda compilation tools, release 13.0, V13.0.88\n"
                           "Build cuda_13.0.r13.0/compiler.36424714_0\n";
  CHECK(nvfresh::release_line(text) == "Cuda compilation tools, release 13.0, V13.0.88");
  CHECK(nvfresh::release_line("Cuda compilation tools, release 11.8, V11.8.89") ==
        "Cuda compilation tools, release 11.8, V11.8.89");
  CHECK(nvfresh::release_line("gcc (Debian 12.2.0-14) 12.2.0\n").empty());
}

TEST_CASE("query_nvcc_version runs the program and is empty when it cannot", "[nvcc_version]")
{
  const auto env = nvfresh::current_environment();
  CHECK(nvfresh::query_nvcc_version("nvfresh-no-such-nvcc", env).empty());
}

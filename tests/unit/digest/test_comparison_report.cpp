#include "digest/comparison_report.hpp"
#include "digest/object_digest.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {

nvfresh::Comparison compare_pair()
{
  const std::string dir = std::string(NVFRESH_TEST_DATA_DIR) + "/ptx/";
  return nvfresh::compare_digests(nvfresh::digest_artifact(dir + "variant_a.ptx"),
                                  nvfresh::digest_artifact(dir + "variant_b.ptx"));
}

}  // namespace

TEST_CASE("comparison report: a PTX variant names its kernel and shows the changed lines",
          "[comparison_report]")
{
  const std::string text = nvfresh::format_comparison("a.ptx", "b.ptx", compare_pair());
  CHECK_THAT(text, Catch::Contains("different  sm_100a ptx"));
  CHECK_THAT(text,
             Catch::Contains(
               "    kernel kernel_cutlass_kernel_fmha_demo_0: instructions 77 -> 76, registers "
               "%p<3> %r<52> %rd<39> -> %p<3> %r<52> %rd<38>\n"));
  CHECK_THAT(
    text, Catch::Contains("diff with register numbers factored out: 7 changed lines in 3 hunks"));
  CHECK_THAT(text, Catch::Contains("    -\tor.b64 \t%rd22, %rd21, 4611756662116581376;\n"));
  CHECK_THAT(text, Catch::EndsWith("different: 1 of 1 components differ\n"));
  CHECK_THAT(text, !Catch::Contains("smem_descriptor"));
}

TEST_CASE("comparison report: JSON carries the kernels, the diff and its size",
          "[comparison_report]")
{
  const auto json = nvfresh::comparison_json("a.ptx", "b.ptx", compare_pair());
  CHECK(json["same"] == false);
  const auto& component = json["components"][0];
  CHECK(component["key"] == "sm_100a ptx");
  CHECK(component["ptx_changed_lines"] == 7);
  CHECK(component["ptx_hunks"] == 3);
  CHECK(component["ptx_differs_only_in_register_numbers"] == false);
  CHECK(component["kernels"][0]["name"] == "kernel_cutlass_kernel_fmha_demo_0");
  CHECK(component["kernels"][0]["a"]["register_declarations"] == "%p<3> %r<52> %rd<39>");
  CHECK(component["kernels"][0]["only_register_numbers"] == false);
  CHECK(
    component["ptx_diff"][0].get<std::string>().starts_with("@@ -39,5 +39,5 @@ kernel_cutlass"));
}

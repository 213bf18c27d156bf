#include "step/step_key.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("step_key: nvcc's stem is found in a step's words")
{
  const std::vector<std::string> cicc = {"cicc",
                                         "-arch",
                                         "compute_80",
                                         "--module_id_file_name",
                                         "/tmp/tmpxft_00005f7c_00000000-4_k.module_id",
                                         "/tmp/tmpxft_00005f7c_00000000-8_k.cpp1.ii"};
  CHECK(find_nvcc_stem(cicc) == "tmpxft_00005f7c_00000000");
  CHECK(step_refusal(cicc).empty());
  CHECK_FALSE(find_nvcc_stem({"ptxas", "-arch=sm_80", "k.ptx", "-o", "k.cubin"}));
  CHECK_FALSE(find_nvcc_stem({"ptxas", "/tmp/tmpxft_0000zz7c_00000000-7_k.ptx"}));  // not hex
  CHECK_FALSE(find_nvcc_stem({"ptxas", "/tmp/tmpxft_00005f7c_0000000"}));           // short
  CHECK(step_refusal({"ptxas", "k.ptx"}).find("not run by nvcc") != std::string::npos);
}

TEST_CASE("step_key: steps with debug or line information are refused")
{
  const std::string ptx = "/tmp/tmpxft_00005f7c_00000000-7_k.ptx";
  CHECK_FALSE(step_refusal({"ptxas", "-arch=sm_80", "--generate-line-info", ptx}).empty());
  CHECK_FALSE(step_refusal({"ptxas", "-arch=sm_80", "-g", ptx}).empty());
  CHECK_FALSE(step_refusal({"cicc", "--debug_mode", ptx}).empty());
  CHECK_FALSE(step_refusal({"cicc", "-generate-line-info", ptx}).empty());
  CHECK_FALSE(step_refusal({"ptxas", "--device-debug=true", ptx}).empty());
  CHECK(step_refusal({"ptxas", "-arch=sm_80", "-O3", ptx}).empty());
}

TEST_CASE("step_key: temporary names are numbered in order, and restored with another run's")
{
  const std::vector<std::string> two_archs = {
    "cicc",
    "--include_file_name",
    "tmpxft_00000a3f_00000000-3_k.fatbin.c",
    "--gen_c_file_name",
    "/tmp/tmpxft_00000a3f_00000000-7_k.compute_80.cudafe1.c",
    "\"/tmp/tmpxft_00000a3f_00000000-8_k.compute_80.cpp1.ii\"",
    "-o",
    "/tmp/tmpxft_00000a3f_00000000-7_k.compute_80.ptx"};
  const std::vector<std::string> three_archs = {
    "cicc",
    "--include_file_name",
    "tmpxft_00001234_00000000-3_k.fatbin.c",
    "--gen_c_file_name",
    "/tmp/tmpxft_00001234_00000000-8_k.compute_80.cudafe1.c",
    "\"/tmp/tmpxft_00001234_00000000-9_k.compute_80.cpp1.ii\"",
    "-o",
    "/tmp/tmpxft_00001234_00000000-8_k.compute_80.ptx"};
  const TempNames a = find_temp_names(two_archs);
  const TempNames b = find_temp_names(three_archs);
  CHECK(a.stem == "tmpxft_00000a3f_00000000");
  REQUIRE(a.names.size() == 4);
  CHECK(a.names[0] == "tmpxft_00000a3f_00000000-3_k.fatbin.c");
  CHECK(a.names[2] == "tmpxft_00000a3f_00000000-8_k.compute_80.cpp1.ii");  // the quote ends it
  for (size_t i = 1; i < two_archs.size(); ++i) {
    const std::string normalized = normalize_temp_names(two_archs[i], a);
    CHECK(normalized == normalize_temp_names(three_archs[i], b));
    CHECK_FALSE(has_stem(normalized, a));
    CHECK(restore_temp_names(normalized, b) == three_archs[i]);
  }
  // Binary content: the names inside are replaced, the rest kept byte for byte.
  const std::string content = std::string("\0#include \"", 11) + a.names[0] + "\"\n\xff";
  const std::string normalized = normalize_temp_names(content, a);
  CHECK_FALSE(has_stem(normalized, a));
  CHECK(restore_temp_names(normalized, a) == content);
  // A name the words do not give stays, with the stem: has_stem tells.
  CHECK(has_stem(normalize_temp_names("tmpxft_00000a3f_00000000-5_k.other", a), a));
  CHECK(replace_all("abc", "", "x") == "abc");
  CHECK(replace_all("", "a", "b").empty());
}

TEST_CASE("step_key: only cicc and ptxas are cached steps")
{
  CHECK(is_cached_step_tool("/usr/local/cuda/nvvm/bin/cicc"));
  CHECK(is_cached_step_tool("ptxas"));
  CHECK_FALSE(is_cached_step_tool("/usr/local/cuda/bin/fatbinary"));
  CHECK_FALSE(is_cached_step_tool("/usr/bin/ptxas-wrapper"));
}

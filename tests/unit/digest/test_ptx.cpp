#include "digest/ptx.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using nvfresh::ptx_functions;
using nvfresh::ptx_target;
using nvfresh::split_text_lines;

namespace {

std::string load_ptx(const std::string& name)
{
  return nvfresh::read_file(std::string(NVFRESH_TEST_DATA_DIR) + "/ptx/" + name);
}

}  // namespace

TEST_CASE("ptx: the .target names the architecture", "[ptx]")
{
  CHECK(ptx_target(load_ptx("k_sm100a.ptx")) == "sm_100a");
  CHECK(ptx_target(".version 8.0\n.target sm_90a, debug\n") == "sm_90a");
  CHECK(ptx_target(".target texmode_independent, compute_80\n") == "compute_80");
  CHECK(ptx_target("// .target sm_70 in a comment\n.target\tsm_120f;\n") == "sm_120f");
  CHECK(ptx_target(".version 8.0\n.address_size 64\n").empty());
  CHECK(ptx_target(".targets sm_90\n").empty());
}

TEST_CASE("ptx: real nvcc output splits into its .func and .entry functions", "[ptx]")
{
  const std::string text = load_ptx("k_sm100a.ptx");
  const auto lines = split_text_lines(text);
  const auto functions = ptx_functions(lines);
  REQUIRE(functions.size() == 3);
  CHECK(functions[0].name == "_Z5blendfff");
  CHECK_FALSE(functions[0].is_entry);
  CHECK(functions[0].registers == "%f<6>");
  CHECK(functions[0].instruction_count == 7);
  CHECK(functions[1].name == "_Z7add_onePi");
  CHECK(functions[1].is_entry);
  CHECK(functions[1].registers == "%r<4> %rd<5>");
  CHECK(functions[1].instruction_count == 9);
  CHECK(functions[2].name == "_Z9lerp_rowsPKfS0_Pffi");
  CHECK(functions[2].registers == "%p<2> %r<6> %f<6> %rd<11>");
  CHECK(functions[2].instruction_count == 27);  // the call spanning 7 lines is one
  for (const auto& function : functions) {
    INFO(function.name);
    CHECK(lines[function.first_line].find(function.name) != std::string::npos);
    CHECK(lines[function.last_line] == "}");
  }
  CHECK(functions[0].last_line < functions[1].first_line);
}

TEST_CASE("ptx: prototypes, comments and nested scopes", "[ptx]")
{
  const std::string text = ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
                           "/* .entry commented_out() { } */\n"
                           ".weak .func helper()\n"
                           "{\n"
                           "\t{ // a scope: } in a comment\n"
                           "\t.reg .b32 temp;\n"
                           "\tmov.u32 temp, 1;\n"
                           "\t}\n"
                           "\tret;\n"
                           "}\n"
                           ".visible .entry k() {\n"
                           "\tret; }\n";
  const auto lines = split_text_lines(text);
  const auto functions = ptx_functions(lines);
  REQUIRE(functions.size() == 2);
  CHECK(functions[0].name == "helper");
  CHECK(functions[0].first_line == 2);
  CHECK(functions[0].last_line == 9);
  CHECK(functions[0].instruction_count == 2);
  CHECK(functions[0].registers.empty());  // the scope's .reg is not the function's
  CHECK(functions[1].name == "k");
  CHECK(functions[1].is_entry);
  CHECK(functions[1].first_line == 10);
  CHECK(functions[1].last_line == 11);
}

TEST_CASE("ptx: split_text_lines", "[ptx]")
{
  CHECK(split_text_lines("a\nb\n") == std::vector<std::string_view>{"a", "b"});
  CHECK(split_text_lines("a\n\nb") == std::vector<std::string_view>{"a", "", "b"});
  CHECK(split_text_lines("").empty());
}

TEST_CASE("ptx: a header whose keyword is no whole token has no name, and no exception", "[ptx]")
{
  // Found by fuzz_object_digest: function_name took npos for the keyword's place and read past
  // the header (std::out_of_range, uncaught).
  const std::string text = std::string("\xff\xff.version 9.0\n.11{") + std::string(3, '\xe1') +
                           "'.entry" + std::string(22, '\xe1') + "\xdc\xe1.target";
  CHECK_NOTHROW(ptx_functions(split_text_lines(text)));
}

#include "proof/ninja_syntax.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("ninja logical lines join continuations and keep indentation", "[ninja_syntax]")
{
  auto lines = ninja_logical_lines("rule r\n  command = a $\n      b\nbuild x: r y$$\n");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "rule r");
  CHECK(lines[1] == "  command = a b");
  CHECK(lines[2] == "build x: r y$$");
}

TEST_CASE("ninja build words: outputs, rule, explicit, implicit and order-only inputs",
          "[ninja_syntax]")
{
  NinjaEdge edge =
    parse_build_words(ninja_words("build a$ b.o | a.o.d: R src/a$:b.cu | s.stamp || order |@ v"));
  CHECK(edge.outputs == std::vector<std::string>{"a b.o", "a.o.d"});
  CHECK(edge.rule == "R");
  CHECK(edge.explicit_inputs == std::vector<std::string>{"src/a:b.cu"});
  CHECK(edge.implicit_inputs == std::vector<std::string>{"s.stamp"});
  CHECK(edge.order_only_inputs == std::vector<std::string>{"order"});
  CHECK(ninja_words("build x: r $in") == std::vector<std::string>{"build", "x", ":", "r", "$in"});
}

#include "util/process.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("capture_output returns a program's whole stdout every time", "[process]")
{
  // Once a third of these came back empty: wait() kept the read loop's end-of-file error.
  Environment env = current_environment();
  for (int attempt = 0; attempt < 40; ++attempt) {
    auto text = capture_output({"sh", "-c", "printf 'line one\\nrelease 13.0\\n'"}, env);
    REQUIRE(text.has_value());
    REQUIRE(*text == "line one\nrelease 13.0\n");
  }
}

TEST_CASE("capture_output reports a failing program and a missing one as nothing", "[process]")
{
  Environment env = current_environment();
  REQUIRE_FALSE(capture_output({"sh", "-c", "echo partial; exit 3"}, env).has_value());
  REQUIRE_FALSE(capture_output({"nvfresh-no-such-program-here"}, env).has_value());
}

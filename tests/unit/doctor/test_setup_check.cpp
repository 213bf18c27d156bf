#include "doctor/setup_check.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("setup checks as text, JSON and an exit status", "[setup_check]")
{
  std::vector<SetupCheck> checks = {passed("sync", "runs"), failed("cache", "full", "free space")};
  CHECK(format_setup_checks(checks) ==
        "OK    sync: runs\nFAIL  cache: full\n      fix: free space\n"
        "nvfresh doctor: 1 of 2 checks found a problem\n");
  auto json = setup_checks_json(checks);
  CHECK(json["ok"] == false);
  CHECK(json["checks"][1]["check"] == "cache");
  CHECK(json["checks"][1]["fix"] == "free space");
  CHECK_FALSE(json["checks"][0].contains("fix"));
  CHECK(setup_exit_status(checks) == 1);
  CHECK(setup_exit_status({passed("sync", "runs")}) == 0);
  CHECK(format_setup_checks({passed("sync", "runs")}).ends_with("all 1 checks OK\n"));
}

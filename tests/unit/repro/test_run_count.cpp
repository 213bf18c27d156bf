#include "repro/run_count.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using nvfresh::detectable_rate;
using nvfresh::detection_probability;
using nvfresh::runs_to_detect;

TEST_CASE("run count: the runs needed to see a variant", "[run_count]")
{
  CHECK(runs_to_detect(0.05, 0.95) == 59);  // the default: ceil(ln 0.05 / ln 0.95) = ceil(58.4)
  // The CuTe DSL note's figures: a 6% variant takes 49 runs for 95% (75 for 99%), 2.8% takes 106 (163).
  CHECK(runs_to_detect(0.06, 0.95) == 49);
  CHECK(runs_to_detect(0.06, 0.99) == 75);
  CHECK(runs_to_detect(0.028, 0.95) == 106);
  CHECK(runs_to_detect(0.028, 0.99) == 163);
  // Exactly on an integer: 1 - 0.5^2 = 0.75 needs 2 runs, not 3.
  CHECK(runs_to_detect(0.5, 0.75) == 2);
  CHECK(runs_to_detect(0.9, 0.5) == 1);
}

TEST_CASE("run count: what a number of runs sees and rules out", "[run_count]")
{
  // The old default of 8 runs (7 perturbed) sees a 6% variant 35% of the time.
  CHECK(detection_probability(0.06, 7) == Approx(0.351).epsilon(0.002));
  CHECK(detection_probability(0.05, 59) >= 0.95);
  CHECK(detection_probability(0.05, 58) < 0.95);
  CHECK(detectable_rate(59, 0.95) <= 0.05);
  CHECK(detectable_rate(59, 0.95) == Approx(0.0495).epsilon(0.01));
  CHECK(detectable_rate(7, 0.95) == Approx(0.348).epsilon(0.01));
  CHECK(detectable_rate(0, 0.95) == 1.0);
  for (std::size_t runs : {1, 2, 10, 59, 300}) {
    INFO(runs);
    CHECK(detection_probability(detectable_rate(runs, 0.95), runs) == Approx(0.95));
  }
}

TEST_CASE("run count: the report's sentence", "[run_count]")
{
  CHECK(nvfresh::ruled_out_text(59, 0.95, 0.05) ==
        "no variant seen in 59 perturbed runs: a variant of >= 5% would have been seen with 95% "
        "probability");
  // Without a goal, or when failed runs left fewer than the goal needs: the rate the runs do reach.
  CHECK(nvfresh::ruled_out_text(59, 0.95) == "no variant seen in 59 perturbed runs: a variant of "
                                             ">= 4.95% would have been seen with 95% probability");
  CHECK_THAT(nvfresh::ruled_out_text(50, 0.95, 0.05),
             Catch::Contains("a variant of >= 5.82% would"));
  CHECK(nvfresh::ruled_out_text(1, 0.9) == "no variant seen in 1 perturbed run: a variant of >= "
                                           "90% would have been seen with 90% probability");
  // -n 1 is the control alone: it rules nothing out (it used to claim ">= 100%").
  CHECK(nvfresh::ruled_out_text(0, 0.95, 0.05) ==
        "no perturbed run (the control alone): no variant frequency is ruled out");
  CHECK(nvfresh::percent(0.05) == "5%");
  CHECK(nvfresh::percent(0.348) == "34.8%");
}

TEST_CASE("run count: unusable goals are refused with a reason", "[run_count]")
{
  CHECK(nvfresh::check_detection_goal(0.05, 0.95).empty());
  CHECK_THAT(nvfresh::check_detection_goal(5, 0.95),
             Catch::Contains("--detect 5 is not a frequency"));
  CHECK_THAT(nvfresh::check_detection_goal(0.05, 1.0),
             Catch::Contains("--confidence 1 is not a probability"));
  CHECK_THAT(nvfresh::check_detection_goal(0.0, 0.5), Catch::Contains("--detect"));
  CHECK_THAT(nvfresh::check_detection_goal(0.1, std::nan("")), Catch::Contains("--confidence"));
}

TEST_CASE("run count: a goal needing more than -n's limit of runs is refused", "[run_count]")
{
  // 1e-9 at 95% needs about 3e9 runs (repro used to plan them all and run out of memory).
  const std::string refusal = nvfresh::check_detection_goal(1e-9, 0.95);
  CHECK_THAT(refusal, Catch::Contains("needs 2995732274 runs, more than the limit of 100000"));
  CHECK_THAT(refusal, Catch::Contains("99999 perturbed runs see a variant of >= 3e-05"));
  // Rates so small that the run count overflows an integer are refused the same way.
  CHECK_THAT(nvfresh::check_detection_goal(1e-300, 0.95), Catch::Contains("more than the limit"));
  // The largest goal inside the limit is accepted, and plans at most the limit.
  const double reachable = nvfresh::detectable_rate(nvfresh::k_max_runs - 1, 0.95) * 1.0001;
  CHECK(nvfresh::check_detection_goal(reachable, 0.95).empty());
  CHECK(nvfresh::runs_to_detect(reachable, 0.95) + 1 <= nvfresh::k_max_runs);
}

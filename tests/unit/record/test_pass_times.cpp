#include "record/pass_times.hpp"
#include "trace/trace.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using nvfresh::PassSplit;
using nvfresh::PassSplitRow;
using nvfresh::PassTime;

namespace {

// A compile of -arch 80;90 as nvcc 13.0 runs it: sh -c for each tool, gcc -E per arch (its
// cc1plus inherits the pass), cicc and ptxas per arch, cudafe++, the host compile, fatbinary.
const char* const k_two_arch_trace = "X 100 1 - /cuda/bin/nvcc\n"
                                     "X 101 100 - /usr/bin/dash\n"
                                     "T 101 1100 1105\n"
                                     "X 101 100 compute_80 /usr/bin/gcc\n"
                                     "X 102 101 - /usr/libexec/gcc/cc1plus\n"
                                     "T 102 1120 1300\n"
                                     "T 101 1105 1310\n"
                                     "X 103 100 compute_80 /cuda/nvvm/bin/cicc\n"
                                     "T 103 1320 2320\n"
                                     "X 104 100 sm_80 /cuda/bin/ptxas\n"
                                     "T 104 2330 2830\n"
                                     "X 105 100 compute_90 /cuda/nvvm/bin/cicc\n"
                                     "T 105 2840 3040\n"
                                     "X 106 100 sm_90 /cuda/bin/ptxas\n"
                                     "T 106 3050 3060 served\n"
                                     "X 107 100 - /cuda/bin/fatbinary\n"
                                     "T 107 3070 3100\n"
                                     "X 108 100 - /cuda/bin/cudafe++\n"
                                     "T 108 3110 3410\n"
                                     "X 109 100 - /usr/bin/gcc\n"
                                     "X 110 109 - /usr/libexec/gcc/cc1plus\n"
                                     "T 110 3430 4400\n"
                                     "X 111 109 - /usr/bin/as\n"
                                     "T 111 4410 4500\n"
                                     "T 109 3420 4510\n"
                                     "X 112 100 - /cuda/bin/killed\n"  // no T line: no times
                                     "T 100 1000 4600\n";

const PassSplitRow* row(const PassSplit& split, const std::string& part, const std::string& kind)
{
  for (const auto& r : split.rows) {
    if (r.part == part && r.kind == kind) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("pass times: programs with times, shells left out, ns after nvcc started", "[pass_times]")
{
  const std::vector<PassTime> times =
    nvfresh::pass_times_of(nvfresh::parse_trace(k_two_arch_trace));
  REQUIRE(times.size() == 12);
  CHECK(times[0] == PassTime{"nvcc", "host", 0, 3600, false});
  CHECK(times[1] == PassTime{"preprocess", "compute_80", 105, 310, false});
  CHECK(times[2] == PassTime{"preprocess", "compute_80", 120, 300, false});  // cc1plus
  CHECK(times[3] == PassTime{"cicc", "compute_80", 320, 1320, false});
  CHECK(times[6] == PassTime{"ptxas", "sm_90", 2050, 2060, true});
  CHECK(times[8] == PassTime{"cudafe++", "host", 2110, 2410, false});
  CHECK(times[9].kind == "host compiler");
  for (const auto& time : times) {
    CHECK(time.start_ns <= time.end_ns);
  }
}

TEST_CASE("pass times: without nvcc's own times the first program is the zero", "[pass_times]")
{
  const auto times = nvfresh::pass_times_of(nvfresh::parse_trace(
    "X 11 10 sm_80 /cuda/bin/ptxas\nT 11 500 600\nX 12 10 compute_80 /cuda/nvvm/bin/cicc\n"
    "T 12 200 450\n"));
  REQUIRE(times.size() == 2);
  CHECK(times[0] == PassTime{"cicc", "compute_80", 0, 250, false});
  CHECK(times[1] == PassTime{"ptxas", "sm_80", 300, 400, false});
}

TEST_CASE("pass split: host, each arch in order, link; overlaps counted once", "[pass_times]")
{
  const PassSplit split =
    nvfresh::split_pass_times(nvfresh::pass_times_of(nvfresh::parse_trace(k_two_arch_trace)));
  CHECK(split.nvcc_ns == 3600);
  std::vector<std::string> order;
  for (const auto& r : split.rows) {
    order.push_back(r.part + " " + r.kind);
  }
  CHECK(order == std::vector<std::string>{"host cudafe++", "host host compiler", "sm_80 preprocess",
                                          "sm_80 cicc", "sm_80 ptxas", "sm_90 cicc", "sm_90 ptxas",
                                          "link fatbinary"});
  // gcc 1105..1310 holds cc1plus 1120..1300: 205 ns, not 385
  CHECK(row(split, "sm_80", "preprocess")->ns == 205);
  CHECK(row(split, "sm_80", "preprocess")->runs == 2);
  CHECK(row(split, "host", "host compiler")->ns == 1090);  // gcc 3420..4510 holds cc1plus and as
  CHECK(row(split, "sm_80", "cicc")->ns == 1000);
  CHECK(row(split, "sm_90", "cicc")->ns == 200);
  const PassSplitRow* served = row(split, "sm_90", "ptxas");
  CHECK(served->runs == 0);
  CHECK(served->served == 1);
  CHECK(served->ns == 0);
  CHECK(row(split, "link", "fatbinary")->ns == 30);
}

TEST_CASE("pass split: archs sort by number, suffixes after", "[pass_times]")
{
  const PassSplit split = nvfresh::split_pass_times({{"ptxas", "sm_100", 0, 1, false},
                                                     {"ptxas", "sm_90a", 0, 1, false},
                                                     {"ptxas", "sm_90", 0, 1, false},
                                                     {"cicc", "compute_100f", 0, 1, false}});
  std::vector<std::string> parts;
  for (const auto& r : split.rows) {
    parts.push_back(r.part + " " + r.kind);
  }
  CHECK(parts ==
        std::vector<std::string>{"sm_90 ptxas", "sm_90a ptxas", "sm_100 ptxas", "sm_100f cicc"});
}

TEST_CASE("arch of a pass", "[pass_times]")
{
  CHECK(nvfresh::arch_of_pass("compute_80") == "80");
  CHECK(nvfresh::arch_of_pass("sm_90a") == "90a");
  CHECK(nvfresh::arch_of_pass("host") == "");
  CHECK(nvfresh::arch_of_pass("sm_") == "");
}

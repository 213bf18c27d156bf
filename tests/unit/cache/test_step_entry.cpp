#include "cache/step_entry.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

StepEntry sample_entry()
{
  StepEntry entry;
  entry.key = hash_bytes("key");
  entry.tool = "/usr/local/cuda-13.0/nvvm/bin/cicc";
  entry.pass = "compute_80";
  entry.run_ns = 1234;
  entry.reads = {{"/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", hash_bytes("bc")}};
  entry.missing = {"/usr/local/cuda/include/not here.h"};
  entry.outputs = {{"/tmp/tmpxft_########_########-7_k.ptx", "// ptx\n.version 9.0\n"},
                   {"/tmp/tmpxft_########_########-7_k.cudafe1.c", std::string("a\0b\nend", 7)}};
  entry.out = "";
  entry.err = "warning: something\n";
  return entry;
}

}  // namespace

TEST_CASE("step_entry: an entry reads back as written")
{
  const StepEntry entry = sample_entry();
  std::string error;
  auto parsed = parse_step_entry(serialize_step_entry(entry), &error);
  INFO(error);
  REQUIRE(parsed);
  CHECK(*parsed == entry);
  // A cicc step keyed on its input's code keeps where the input's lines sat.
  StepEntry placed = sample_entry();
  placed.input_lines = "nvfresh-lines 1\nfiles 1\nk.cu\nruns 1\n3 0 1 1\n";
  auto with_lines = parse_step_entry(serialize_step_entry(placed), &error);
  REQUIRE(with_lines);
  CHECK(*with_lines == placed);
  CHECK_FALSE(*with_lines == entry);
}

TEST_CASE("step_entry: a damaged, truncated or extended entry is refused")
{
  const std::string text = serialize_step_entry(sample_entry());
  for (size_t at : {size_t{20}, text.size() / 2, text.size() - 1}) {
    std::string damaged = text;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
    std::string error;
    CHECK_FALSE(parse_step_entry(damaged, &error));
    CHECK_FALSE(error.empty());
  }
  CHECK_FALSE(parse_step_entry(text.substr(0, text.size() - 1)));
  CHECK_FALSE(parse_step_entry(text + "x"));
  CHECK_FALSE(parse_step_entry("nvfresh-step 99\nend 0\n"));
  CHECK_FALSE(parse_step_entry(""));
}

TEST_CASE("step_entry: a run is compared with its entry byte for byte")
{
  const StepEntry stored = sample_entry();
  StepEntry run = stored;
  run.run_ns = stored.run_ns + 5;  // what a hit writes is all that counts
  run.reads.clear();
  CHECK(step_output_difference(stored, run).empty());
  run.outputs[0].content += "x";
  CHECK_THAT(step_output_difference(stored, run), Catch::Contains("differs"));
  CHECK_THAT(step_output_difference(stored, run), Catch::Contains(stored.outputs[0].path));
  run = stored;
  run.err += "warning";
  CHECK(step_output_difference(stored, run) == "stderr differs");
  run = stored;
  run.outputs.pop_back();
  CHECK_THAT(step_output_difference(stored, run), Catch::Contains("was not written"));
}

TEST_CASE("step_entry: the time ptxas -v says it took is no difference, anything else is")
{
  StepEntry stored;
  stored.out = "ptxas info    : Used 8 registers\nptxas info    : Compile time = 22.905 ms\n";
  StepEntry run = stored;
  run.out = "ptxas info    : Used 8 registers\nptxas info    : Compile time = 3.1 ms\n";
  CHECK(step_output_difference(stored, run).empty());
  run.out = "ptxas info    : Used 9 registers\nptxas info    : Compile time = 3.1 ms\n";
  CHECK(step_output_difference(stored, run) == "stdout differs");
  CHECK(without_run_times("Compile time = 1.5 ms; Compile time = x ms; Compile time = 2 s") ==
        "Compile time =  ms; Compile time = x ms; Compile time = 2 s");
}

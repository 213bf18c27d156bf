#include "doctor/tracer_probe.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

RecordedInput input(const std::string& path, InputRole role, std::vector<std::string> passes)
{
  RecordedInput in;
  in.file.path = path;
  in.role = role;
  in.passes = std::move(passes);
  return in;
}

Record probe_record()
{
  Record record;
  record.source = "/tmp/d/probe.cu";
  record.inputs = {input("/tmp/d/probe.cu", InputRole::source, {"host", "compute_75"}),
                   input("/usr/include/stdio.h", InputRole::header, {"host"}),
                   input("/usr/local/cuda/bin/cicc", InputRole::tool, {})};
  return record;
}

}  // namespace

TEST_CASE("tracer: every file read was traced", "[tracer_probe]")
{
  auto check = judge_probe_record(probe_record(), "nvcc and host compiler g++");
  CHECK(check.ok);
  CHECK(check.finding ==
        "a traced compile with nvcc and host compiler g++ saw all 2 files it read (passes: "
        "compute_75, host)");
}

TEST_CASE("tracer: files only the depfile names were read by a program the tracer missed",
          "[tracer_probe]")
{
  Record record = probe_record();
  record.inputs.push_back(input("/usr/include/stdlib.h", InputRole::header, {}));
  record.inputs[0].passes.clear();  // the probe's own source is named last
  auto check = judge_probe_record(record, "nvcc and host compiler /w/hide-g++");
  CHECK_FALSE(check.ok);
  CHECK(check.finding.find("the tracer missed 2 of 3 files") == 0);
  CHECK(check.finding.find("(first: /usr/include/stdlib.h)") != std::string::npos);
  CHECK(check.fix.find("LD_PRELOAD") != std::string::npos);
}

TEST_CASE("tracer: no trace at all", "[tracer_probe]")
{
  Record record = probe_record();
  record.inputs_from_trace = false;
  auto check = judge_probe_record(record, "nvcc");
  CHECK_FALSE(check.ok);
  CHECK(check.fix.find("NVFRESH_TRACE_LIB") != std::string::npos);
}

// Where a compile's time went: when each program nvcc ran started and ended (the tracer's T lines,
// lib/trace/trace.cpp), kept in the record, and the split `explain` and `report` show: host
// (cudafe++, the host compiler), per arch the device preprocessing, cicc and ptxas, and the link
// steps (fatbinary, nvlink).
#pragma once

#include "trace/trace.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvfresh {

// One program of a compile. Times are ns after nvcc started (CLOCK_MONOTONIC differences).
struct PassTime {
  std::string kind;  // "nvcc", "cicc", "ptxas", "fatbinary", "nvlink", "cudafe++", "preprocess"
                     // (the host compiler run for a device pass), "host compiler", else the
                     // program's file name
  std::string pass;  // the tracer's pass: "host", "compute_80", "sm_90a", ...
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool served = false;  // a step the step cache served: no tool ran, the times are the runner's
  bool operator==(const PassTime&) const = default;
};

// The programs of a traced compile (restricted to nvcc's subtree) with known times, in the order
// they started; shells and compiler caches are left out (their time is their children's).
std::vector<PassTime> pass_times_of(const Trace& trace);

// One line of the split: the time of one kind of program in one part of the compile.
struct PassSplitRow {
  std::string part;        // "host", "sm_80" (cicc's compute_80 and ptxas's sm_80 alike), "link"
  std::string kind;        // as PassTime::kind
  std::int64_t ns = 0;     // wall time: the union of its programs' intervals (a gcc and the cc1plus
                           // it runs count once); 0 when every one was served
  std::size_t runs = 0;    // programs that ran
  std::size_t served = 0;  // steps served from the step cache
  bool operator==(const PassSplitRow&) const = default;
};

struct PassSplit {
  std::int64_t nvcc_ns = 0;        // nvcc's own run, start to end (0: not known)
  std::vector<PassSplitRow> rows;  // host first, then each arch (sorted), then link
};

PassSplit split_pass_times(const std::vector<PassTime>& times);

// "80" for "compute_80" and "sm_80", "90a" for "sm_90a"; "" for any other pass.
std::string arch_of_pass(const std::string& pass);

}  // namespace nvfresh

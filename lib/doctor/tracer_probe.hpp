// The check that the tracer works with this nvcc and host compiler: one tiny compile through
// nvfresh in a scratch directory (its own record dir, the object cache off, so that it really
// compiles), then its record read back. Every file nvcc's depfile lists must also be in the trace;
// one that is not was read by a program the LD_PRELOAD tracer could not enter: a statically linked
// host compiler, or a wrapper (-ccbin) that clears LD_PRELOAD. Such a program's lookups that found
// nothing (the include candidates a new header would shadow) are then missing from records.
#pragma once

#include "doctor/setup_check.hpp"
#include "record/record.hpp"
#include "util/environment.hpp"

#include <string>

namespace nvfresh {

struct TracerProbe {
  std::string nvfresh;         // the nvfresh executable to compile through
  std::string nvcc;            // the build's nvcc
  std::string host_compiler;   // the build's -ccbin, "" for nvcc's default
  Environment env;             // the environment the build runs with
  std::string scratch_parent;  // where the scratch directory goes (TMPDIR)
};

// Compiles `__global__ void k(int* p) { *p = 1; }` through nvfresh and judges its record.
SetupCheck run_tracer_probe(const TracerProbe& probe);

// Pure (unit-tested): the probe compile's record judged; `toolchain` names nvcc and the host
// compiler for the line.
SetupCheck judge_probe_record(const Record& record, const std::string& toolchain);

}  // namespace nvfresh

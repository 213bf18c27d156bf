// `nvfresh doctor`: the setup of one build tree checked, parse -> plan -> run -> record.
//   plan_doctor   reads what the checks need, and nothing else: the build tree's generator files
//                 (build_commands.hpp) with those of nested trees (an ExternalProject's), its
//                 CMakeCache.txt (nvcc, -ccbin, the build tool), nvfresh's settings (record root,
//                 cache dir, space floor) and what PATH resolves nvcc and the host compiler to;
//   run_setup_checks  runs each check (build_wiring, what_ran, tracer_probe, storage_checks,
//                 compiler_cache_chain, build_tool), one SetupCheck each, in a fixed order.
// The command (commands/doctor.cpp) prints them (setup_check.hpp).
#pragma once

#include "doctor/build_wiring.hpp"
#include "doctor/compiler_cache_chain.hpp"
#include "doctor/setup_check.hpp"
#include "doctor/storage_checks.hpp"
#include "doctor/tracer_probe.hpp"
#include "doctor/what_ran.hpp"
#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

struct DoctorPlan {
  std::string build_dir;            // absolute
  std::vector<TreeCommands> trees;  // the build tree first, then nested build trees
  std::string generator;            // "ninja", "make" or ""
  std::string build_program;        // ninja or make, as CMake found it
  std::vector<NvccRun> nvcc_runs;   // of every tree
  std::vector<ResolvedProgram> programs;
  TracerProbe probe;
  std::string record_root;
  bool disabled_here = false;  // NVFRESH_DISABLE where doctor runs
  std::string space_floor;     // NVFRESH_SPACE_FLOOR ("" for the default)
  CacheDirFacts cache;
};

DoctorPlan plan_doctor(const std::string& build_dir, const Environment& env);
std::vector<SetupCheck> run_setup_checks(const DoctorPlan& plan);

// Build trees (CMakeCache.txt) below build_dir, not build_dir itself, nearest first; not inside
// CMakeFiles or .nvfresh, and not inside another one found.
std::vector<std::string> nested_build_trees(const std::string& build_dir);

}  // namespace nvfresh

// Two checks of what runs in a build, not of what its files are named:
//   - "launcher": every nvfresh the build's compiles run (as the steps write it; found through
//     PATH where it has no slash) is there and is nvfresh: `<it> --version` prints "nvfresh
//     <version>". A binary removed after configure fails every compile; a program that is only
//     named nvfresh (a script that execs its arguments) runs nvcc with nothing recorded.
//   - "last-build": every CUDA object of a compile through nvfresh that exists has a record at
//     least as new as itself, so nvfresh saw the compile that made it. An object without one came
//     from a compile nvfresh did not record: NVFRESH_DISABLE=1 in the build's environment, a
//     launcher that is not nvfresh, or a compile nvfresh passed through (`nvfresh stats` names
//     why). A tree not built yet passes, saying so. NVFRESH_DISABLE set where doctor runs fails:
//     a build started there compiles without nvfresh. An object that holds CUDA device code (a
//     fatbin section) but comes from a step that runs no nvcc at all was compiled by a wrapper
//     not named nvcc (a custom command's `cudac`, a script): nvfresh never saw it, whatever the
//     step is called.
// Gathering runs the launchers and stats the objects and records; judging is pure (unit-tested).
#pragma once

#include "doctor/build_wiring.hpp"
#include "doctor/setup_check.hpp"
#include "util/environment.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct LauncherFacts {
  std::string written;                        // as the build's steps write it
  std::string resolved;                       // the file it names ("" when there is none)
  std::optional<std::string> version_output;  // of `<resolved> --version`; nullopt: it failed
  size_t compiles = 0;                        // how many compiles run it
};

struct BuiltObject {
  std::string object;  // absolute
  std::int64_t object_mtime_ns = 0;
  std::optional<std::int64_t> record_mtime_ns;  // nullopt: no record
};

struct LastBuildFacts {
  std::vector<BuiltObject> objects;  // the compiles through nvfresh whose object exists
  // Built objects (absolute) with device code whose steps run no nvcc: compiled by a wrapper.
  std::vector<std::string> device_objects_of_other_steps;
  size_t compiles = 0;         // compiles through nvfresh in the top tree
  bool disabled_here = false;  // NVFRESH_DISABLE in doctor's own environment
};

std::vector<LauncherFacts> gather_launchers(const std::vector<NvccRun>& runs,
                                            const Environment& env);
// Whether the bytes are a relocatable ELF object with a CUDA fatbin section (nvcc's host object).
bool holds_device_code(std::string_view object_bytes);

LastBuildFacts gather_last_build(const TreeCommands& top, const std::string& record_root,
                                 bool disabled_here);

SetupCheck judge_launchers(const std::vector<LauncherFacts>& launchers);
SetupCheck judge_last_build(const LastBuildFacts& facts);

}  // namespace nvfresh

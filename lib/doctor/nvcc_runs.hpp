// Which steps of a build run nvcc, and how: a build command split into the programs it runs (shell
// `&&`, `||`, `;` and `|` separate them), each program that is nvcc (its file name contains
// "nvcc", as compiler_chain.hpp decides) classified as through nvfresh (an "nvfresh" word stands
// before it: `nvfresh nvcc …`, `nvfresh ccache nvcc …`) or bypassing it, and as a compile (a
// compile-mode option of nvcc's table: -c, -dc, -ptx, …, and nothing that makes it no compile:
// -dlink, -E, -M, --version, …) or not. An nvcc word that is nvfresh itself (a symlink named like
// nvcc, which behaves as `nvfresh nvcc`) counts as through nvfresh when the caller's test says so.
// Pure.
#pragma once

#include "proof/build_commands.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct NvccRun {
  std::string step;                 // the build step's output (where it runs)
  std::string description;          // the step's description, if the generator wrote one
  std::vector<std::string> before;  // the words before nvcc in its program (nvfresh, launchers)
  std::string nvcc;                 // nvcc as written
  std::string host_compiler;        // -ccbin's value, "" when none is given
  bool through_nvfresh = false;
  bool compile = false;  // a compile nvfresh handles, not a link, -E, --version, …
  bool stamped =
    false;  // the step has one of the CMake module's stamps (.nvfresh/stamps/) as input

  // The launchers between nvfresh and nvcc ({ccache} in "nvfresh ccache nvcc"), or before nvcc
  // when nvfresh is not there.
  std::vector<std::string> launchers() const;
  // The launchers before nvfresh ({ccache} in "ccache nvfresh nvcc").
  std::vector<std::string> launchers_before_nvfresh() const;
};

// Whether a program word is nvfresh under another name (nullptr: never).
using IsNvfreshAlias = bool (*)(const std::string& program);

// The nvcc programs of one command line (none when it runs no nvcc).
std::vector<NvccRun> nvcc_runs_of(const BuildCommand& command, IsNvfreshAlias is_alias = nullptr);

// Every nvcc program the build's steps run.
std::vector<NvccRun> nvcc_runs_of(const std::vector<BuildCommand>& commands,
                                  IsNvfreshAlias is_alias = nullptr);

// The file name of a path ("/usr/bin/ccache" -> "ccache").
std::string_view file_name_of(std::string_view path);

}  // namespace nvfresh

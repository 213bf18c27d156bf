// What makes two runs of one of nvcc's steps (cicc, ptxas) the same step: the words of its command
// and the content of nvcc's temporary files it is given, with nvcc's temporary names
// ("tmpxft_<8 hex>_<8 hex>-<n>_<name>", their stem different in every nvcc run, their number and
// arch suffix different with the arch list) replaced by placeholders numbered in the order the
// words name them ("tmpxft_@0@", "tmpxft_@1@", ...). The same step in another nvcc run, or with
// another arch beside it, has the same normalized words. step_key builds the key from them: the
// tool (path and content), the working directory, the normalized words, and the content of each
// temporary file they name (of cicc's preprocessed input, its code without line numbers:
// cache/line_layout.hpp).
#pragma once

#include "cache/line_layout.hpp"
#include "util/hasher.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// Whether `program` (a path) is a step the step cache may stand in for: cicc or ptxas.
bool is_cached_step_tool(std::string_view program);

// The first nvcc stem in the words ("tmpxft_0000abcd_00000000"), or nullopt: a tool run outside an
// nvcc compile has none, and is never cached.
std::optional<std::string> find_nvcc_stem(const std::vector<std::string>& words);

// `text` with every occurrence of `from` replaced by `to` (binary safe).
std::string replace_all(std::string_view text, std::string_view from, std::string_view to);

// nvcc's temporary names in a step's words, in the order they first appear: each from "tmpxft_"
// to the end of its word (or to a quote, comma or space), e.g. "tmpxft_00000a3f_00000000-7_k.ptx".
struct TempNames {
  std::string stem;
  std::vector<std::string> names;
};
TempNames find_temp_names(const std::vector<std::string>& words);

// `text` with each name replaced by its numbered placeholder (longest names first), and
// restore_temp_names the way back with another run's names. A text that still holds the stem
// after normalize_temp_names names a temporary file the words do not: has_stem says so.
std::string normalize_temp_names(std::string_view text, const TempNames& names);
std::string restore_temp_names(std::string_view text, const TempNames& names);
bool has_stem(std::string_view text, const TempNames& names);

// Why a step with these words is not cached, or "" when it may be: no nvcc stem, or debug or line
// information asked for (-g, -G, -lineinfo and their forms: ptxas stats the source file named in
// the PTX and writes its mtime into the cubin's line table, an input no content key can hold).
std::string step_refusal(const std::vector<std::string>& words);

// One run of cicc or ptxas as the step runner (step/step_runner.hpp) was asked for it.
struct Step {
  std::string tool;               // as execve named it
  std::string tool_exe;           // canonical
  std::vector<std::string> argv;  // argv[0] as the caller passed it
  TempNames temp;                 // nvcc's temporary names in its words
  std::string cwd;
  std::string pass;
  std::int64_t started_ns = 0;  // CLOCK_MONOTONIC, when the runner started (a served step's time)
};

// The tool's file name ("cicc", "ptxas").
std::string tool_name(const Step& step);

// The tracer's pass tag for the tool's own argv ("compute_80", "sm_90", else "-"; tool_arch in
// nvfresh_trace.c).
std::string pass_of(const std::vector<std::string>& argv);

// What the key holds of the step's inputs: the temporary files it is given (the only ones a stored
// step may have read), and where the code lines of cicc's preprocessed input sit, when the key
// holds its code alone (cache/line_layout.hpp).
struct KeyedInputs {
  std::set<std::string> given_files;
  std::optional<LineTable> lines;
  std::string lines_text;       // serialized, as a step entry keeps it
  std::string whole_input_why;  // why cicc's input is keyed with its line numbers, if it is
};

class FileHasher;

// The key: the tool (path and content), the working directory, the words with nvcc's temporary
// names replaced, and the content of each temporary file the words name (names replaced too; of
// cicc's preprocessed input, its code without line numbers: `inputs` says where it sat). nullopt
// when the tool or a named file cannot be read.
std::optional<Digest> step_key(const Step& step, FileHasher& hasher, KeyedInputs* inputs);

// The step's command as its remote Action names it: the tool's file name and its arguments,
// nvcc's temporary names normalized.
std::vector<std::string> remote_arguments(const Step& step);

}  // namespace nvfresh

// What makes two runs of one of nvcc's steps (cicc, ptxas) the same step: the words of its command
// and the content of nvcc's temporary files it is given, with nvcc's temporary names
// ("tmpxft_<8 hex>_<8 hex>-<n>_<name>", their stem different in every nvcc run, their number and
// arch suffix different with the arch list) replaced by placeholders numbered in the order the
// words name them ("tmpxft_@0@", "tmpxft_@1@", ...). The same step in another nvcc run, or with
// another arch beside it, has the same normalized words. Pure text work; hashing the files and the
// tool is the step runner's (compile/step_run).
#pragma once

#include <optional>
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

}  // namespace nvfresh

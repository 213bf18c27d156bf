// A preprocessed input apart from where its lines sit. The preprocessor's output (cicc's .cpp1.ii)
// says where each line came from with line markers (`# 42 "kernel.h" 1`) and blank lines, so a
// host-only edit that adds lines, or a comment in the middle of a header, moves every marker below
// it though no code moved. A cicc step keyed on `LineLayout::code` (its code lines, and the markers
// that change file or flags, without their numbers) is served for such an edit; where its code
// lines sit is its `LineTable`, stored with the step.
//
// cicc's outputs name lines in two forms, which move_lines rewrites from the stored input's table
// to the current one: line markers in the C it writes (`# 42 "kernel.h"` in the .cudafe1.stub.c
// that the host object includes, and in .cudafe1.gpu), and the input's own line number in the
// names it gives local variables (`__cuda_local_var_60962_8_non_const_f`: line 60962 of the .ii,
// column 8). What cicc writes is otherwise the same for the same code: the step cache's tests prove
// it byte for byte against real cicc (verify-on-hit) across the nvcc versions they install.
// Pure text work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// Code lines that follow each other in their file and in the input.
struct LineRun {
  std::uint64_t count = 0;       // code lines in the run
  std::uint32_t file = 0;        // LineTable::files index
  std::uint64_t line = 0;        // the first one's line in its file
  std::uint64_t input_line = 0;  // the first one's line in the preprocessed input, from 1
  bool operator==(const LineRun&) const = default;
};

struct LineTable {
  std::vector<std::string> files;  // as the markers spell them (quotes left out), once each
  std::vector<LineRun> runs;       // every code line, in order
  std::uint64_t code_lines() const;
  bool operator==(const LineTable&) const = default;
};

struct LineLayout {
  std::string code;  // what a key hashes: two inputs with the same code differ only in their table
  LineTable table;
};

// nullopt (with the reason) where the input's lines may reach cicc's outputs through a channel
// move_lines does not rewrite, and the step is keyed on its whole input:
//   - a raw string literal (`R"`): a blank line in one is code;
//   - a builtin that may read the position it is written at (cache/front_end_builtins.hpp:
//     __builtin_LINE, std::source_location's __builtin_source_location, one the list does not know);
//   - a code line that spells `__cuda_local_var_` itself: move_lines would rename it as if cicc had
//     made the name.
std::optional<LineLayout> split_line_layout(std::string_view preprocessed,
                                            std::string* why = nullptr);

std::string serialize_line_table(const LineTable& table);
std::optional<LineTable> parse_line_table(std::string_view text);

// `output`, written by a step for an input whose lines sat as `from` says, as the step writes it for
// the same code sitting as `to` says: each line marker's number and each local variable's input
// line moved with the code line they name. nullopt (with the reason) where a number names no code
// line of `from` (a marker's line 1 aside: a file's start), names lines that moved apart, or the
// tables are not of the same code.
std::optional<std::string> move_lines(std::string_view output, const LineTable& from,
                                      const LineTable& to, std::string* why = nullptr);

}  // namespace nvfresh

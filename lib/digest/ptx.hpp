// What compare needs to know about PTX text: the architecture its `.target` names, and its functions
// (`.entry` kernels and `.func` device functions) with their line ranges, instruction counts and
// virtual-register declarations.
//
// The shapes read (NVVM's output, nvcc 11.8 to 13.x and the CuTe DSL's libNVVM):
//   .target sm_100a[, debug | texmode_independent | ...]
//   [.visible | .weak | .extern] .entry NAME( params... )  [.maxntid ... | .reqntid ... | ...]  { body }
//   [.visible | .weak] .func [(.param ... retval)] NAME( params... ) [.noreturn]  { body }
//   .extern .func ... NAME( ... );          a prototype: no body, not a function here
// A header may span several lines; the body ends at the brace that closes its `{`. Inside a body:
//   .reg .b64 %rd<3000>;                    a register declaration (the count is the highest number + 1)
//   $L__BB0_2:                              a label
//   @%p1 bra $L__BB0_2;  add.s32 ...;       instructions: anything else that ends in ';' and does not
//                                           start with '.'
// Comments (`//` and `/* */`) are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// The architecture a `.target` directive names ("sm_100a" for ".target sm_100a, debug"), or empty
// when the text has none.
std::string ptx_target(std::string_view ptx);

struct PtxFunction {
  std::string name;
  bool is_entry = false;       // a kernel (.entry), not a .func
  std::size_t first_line = 0;  // index of the line that starts its declaration
  std::size_t last_line = 0;   // index of the line with its closing brace
  std::uint64_t instruction_count = 0;
  std::string registers;  // its .reg declarations: "%p<4> %r<40> %rd<30>"
};

// The functions with a body, in order. `lines` is the PTX split into lines (no newlines).
std::vector<PtxFunction> ptx_functions(const std::vector<std::string_view>& lines);

// `text` split at '\n' (a final newline adds no empty line).
std::vector<std::string_view> split_text_lines(std::string_view text);

}  // namespace nvfresh

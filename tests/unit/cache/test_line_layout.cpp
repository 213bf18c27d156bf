#include "cache/line_layout.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

// cicc's input as the preprocessor writes it: a kernel in k.cu that includes v.h (a statement from
// a macro of a system header), `host_lines` host-only lines above the kernel (blank lines when
// fewer than 8, else a marker). The kernel is at line 2 + host_lines of k.cu.
std::string preprocessed(int host_lines)
{
  std::string text = "# 0 \"k.cu\"\n# 0 \"<built-in>\"\n# 1 \"k.cu\"\n# 1 \"v.h\" 1\n"
                     "int value();\n\n\n# 6 \"v.h\"\nint other();\n# 2 \"k.cu\" 2\n";
  const int kernel = 2 + host_lines;
  if (host_lines < 8) {
    text += std::string(static_cast<size_t>(host_lines), '\n');
  } else {
    text += "# " + std::to_string(kernel) + " \"k.cu\"\n";
  }
  text += "__global__ void kernel(int* out)\n{\n# " + std::to_string(kernel + 2) +
          " \"k.cu\" 3 4\n  out[0] = 1;\n# " + std::to_string(kernel + 3) +
          " \"k.cu\"\n  out[1] = 2;\n}\n";
  return text;
}

// What cicc writes of it: markers (the file's start, the kernel, a statement, a header line), and
// a local variable named by the kernel's line in the input.
std::string output_for(int kernel, int kernel_input_line)
{
  return "# 1 \"k.cu\"\nstatic int x;\n# " + std::to_string(kernel) +
         " \"k.cu\"\nvoid kernel(int* out) {\n# " + std::to_string(kernel + 2) +
         " \"k.cu\"\n int __cuda_local_var_" + std::to_string(kernel_input_line) +
         "_8_non_const_f;\n# 6 \"v.h\"\n}\n";
}

}  // namespace

TEST_CASE("line_layout: lines that moved leave the code the same, and the table says where")
{
  const auto near = split_line_layout(preprocessed(1));
  const auto far = split_line_layout(preprocessed(3));
  const auto farther = split_line_layout(preprocessed(20));
  REQUIRE(near);
  REQUIRE(far);
  REQUIRE(farther);
  CHECK(near->code == far->code);
  CHECK(near->code == farther->code);
  CHECK_FALSE(near->table == far->table);
  CHECK(near->table.code_lines() == 7);
  CHECK(near->code.find("m \"k.cu\" 3 4\n") != std::string::npos);  // a state: kept
  CHECK(near->code.find("m \"v.h\" 1\n") != std::string::npos);     // an include: kept
  // The kernel's run: its line in k.cu and in the input.
  REQUIRE(near->table.runs.size() == 5);
  CHECK(near->table.runs[2] == LineRun{2, 1, 3, 12});
  CHECK(near->table.files[1] == "k.cu");
  CHECK(far->table.runs[2] == LineRun{2, 1, 5, 14});
  CHECK(farther->table.runs[2] == LineRun{2, 1, 22, 12});
}

TEST_CASE("line_layout: the code holds what the lines say, their number aside")
{
  const std::string base = preprocessed(1);
  auto code_of = [](std::string text) { return split_line_layout(text)->code; };
  std::string edited = base;
  edited.replace(edited.find("out[1] = 2"), 10, "out[1] = 3");
  CHECK(code_of(edited) != code_of(base));
  std::string other_file = base;
  other_file.replace(other_file.find("# 6 \"v.h\""), 9, "# 6 \"w.h\"");
  CHECK(code_of(other_file) != code_of(base));
  std::string no_longer_system = base;
  no_longer_system.replace(no_longer_system.find(" 3 4\n"), 5, "\n");
  CHECK(code_of(no_longer_system) != code_of(base));
  CHECK(code_of(base.substr(0, base.size() - 1)) != code_of(base));  // no newline at its end
  CHECK(code_of("int a;\n\n int b;\n") ==
        code_of("int a;\n int b;\n\n"));                             // blank lines only move code
  CHECK_FALSE(split_line_layout("const char* s = R\"(\n\n)\";\n"));  // a raw string: whole input
  // A line that only looks like a marker is code, its number in the key.
  CHECK(code_of("# 5\nint a;\n") != code_of("# 6\nint a;\n"));
  CHECK(code_of("# 05 \"k.cu\"\nint a;\n") != code_of("# 06 \"k.cu\"\nint a;\n"));
  // A line beyond 2^32 (no input has one): not a marker, and a table keeps no such number.
  CHECK(code_of("# 5000000000 \"k.cu\"\nint a;\n") != code_of("# 5000000001 \"k.cu\"\nint a;\n"));
}

TEST_CASE("line_layout: a table reads back as written, and a damaged one does not")
{
  const auto layout = split_line_layout(preprocessed(20));
  const std::string text = serialize_line_table(layout->table);
  CHECK(parse_line_table(text) == layout->table);
  CHECK_FALSE(parse_line_table(text.substr(0, text.size() - 1)));
  CHECK_FALSE(parse_line_table(text + "1 0 1 1\n"));
  CHECK_FALSE(parse_line_table("nvfresh-lines 1\nfiles 1\nk.cu\nruns 1\n1 1 1 1\n"));  // no file 1
  CHECK_FALSE(parse_line_table("nvfresh-lines 1\nfiles 1\nk.cu\nruns 1\n0 0 1 1\n"));  // empty run
  CHECK_FALSE(parse_line_table("nvfresh-lines 2\nfiles 0\nruns 0\n"));
  CHECK(parse_line_table("nvfresh-lines 1\nfiles 0\nruns 0\n"));
}

TEST_CASE("line_layout: an output's markers and local variables move with their code lines")
{
  const auto near = split_line_layout(preprocessed(1));
  const auto far = split_line_layout(preprocessed(3));
  const auto farther = split_line_layout(preprocessed(20));
  const std::string from = output_for(3, 12);
  const std::string to = output_for(5, 14);
  CHECK(move_lines(from, near->table, farther->table) == output_for(22, 12));
  REQUIRE(from != to);
  std::string why;
  CHECK(move_lines(from, near->table, far->table, &why) == to);
  CHECK(move_lines(to, far->table, near->table, &why) == from);
  CHECK(move_lines(from, near->table, near->table, &why) == from);
  // Without its last newline it stays without.
  CHECK(move_lines(from.substr(0, from.size() - 1), near->table, far->table) ==
        to.substr(0, to.size() - 1));
  // Nothing to move: the output comes back as it is.
  CHECK(move_lines("ptx text\n.version 8.8\n", near->table, far->table) ==
        "ptx text\n.version 8.8\n");
  // A marker's file name is kept as written, even one that reads like a local variable (the
  // fuzzer found it: the name moved on the way there, and on the way back it was no file known).
  // (At line 4: line 1 is a file's start or its first code line, refused when it moved.)
  const std::string named = "# 4 \"__cuda_local_var_2\"\nl";
  const auto named_layout = split_line_layout(named);
  const auto named_shifted = split_line_layout("# 4 \"__cuda_local_var_2\"\n\nl");
  CHECK(move_lines(named, named_layout->table, named_shifted->table) ==
        "# 5 \"__cuda_local_var_2\"\nl");
  CHECK(move_lines("# 5 \"__cuda_local_var_2\"\nl", named_shifted->table, named_layout->table) ==
        named);
}

TEST_CASE("line_layout: numbers that name no code line, or lines that moved apart, are refused")
{
  const auto near = split_line_layout(preprocessed(1));
  const auto far = split_line_layout(preprocessed(20));
  std::string why;
  CHECK_FALSE(move_lines("# 2 \"k.cu\"\n", near->table, far->table, &why));  // a blank line
  CHECK(why.find("no code") != std::string::npos);
  CHECK_FALSE(move_lines("# 7 \"x.h\"\n", near->table, far->table, &why));  // a file not marked
  CHECK(why.find("x.h") != std::string::npos);
  CHECK(move_lines("# 1 \"x.cudafe1.stub.c\"\n", near->table, far->table) ==
        "# 1 \"x.cudafe1.stub.c\"\n");  // its own start
  CHECK_FALSE(move_lines("# 7\n", near->table, far->table, &why));
  CHECK_FALSE(move_lines("int __cuda_local_var_2_1_x;\n", near->table, far->table, &why));
  CHECK(why.find("input line 2") != std::string::npos);
  // Two copies of one header line that moved by different amounts.
  const std::string twice = "# 1 \"k.cu\"\n# 1 \"h.h\" 1\nint a;\n# 2 \"k.cu\" 2\nint b;\n"
                            "# 1 \"h.h\" 1\nint a;\n# 3 \"k.cu\" 2\n";
  std::string twice_moved = twice;
  twice_moved.replace(twice_moved.find("# 2 \"k.cu\" 2\n"), 13, "# 2 \"k.cu\" 2\n\n");
  twice_moved.replace(twice_moved.find("# 1 \"h.h\" 1\nint a;\n# 3"), 11, "# 1 \"h.h\" 1\n\n");
  const auto one = split_line_layout(twice);
  const auto other = split_line_layout(twice_moved);
  REQUIRE(one->code == other->code);
  CHECK_FALSE(move_lines("# 1 \"h.h\"\n", one->table, other->table, &why));
  CHECK(why.find("moved apart") != std::string::npos);
  // Line 1 with no code in the stored table but code in the new one: the file's start or the
  // code line, no one can tell (the fuzzer found it: there and back gave another line).
  const auto at_two = split_line_layout("# 2 \"k.cu\"\nint a;\n");
  const auto at_one = split_line_layout("# 1 \"k.cu\"\nint a;\n");
  CHECK(move_lines("# 1 \"k.cu\"\n", at_two->table, at_two->table) == "# 1 \"k.cu\"\n");
  CHECK_FALSE(move_lines("# 1 \"k.cu\"\n", at_two->table, at_one->table, &why));
  CHECK(why.find("line 1") != std::string::npos);
  // Tables of other code.
  const auto shorter = split_line_layout("# 1 \"k.cu\"\nint a;\n");
  CHECK_FALSE(move_lines("# 4 \"k.cu\"\n", near->table, shorter->table, &why));
  CHECK(why.find("different code") != std::string::npos);
}

TEST_CASE("line_layout: an input whose lines reach cicc's outputs another way is keyed whole")
{
  std::string why;
  // A builtin that reads the line it is written at: moving the code changes what cicc computes.
  CHECK_FALSE(
    split_line_layout("# 1 \"k.cu\"\n__device__ int f() { return __builtin_LINE(); }\n", &why));
  CHECK(why.find("__builtin_LINE") != std::string::npos);
  CHECK_FALSE(split_line_layout("# 3 \"sl.h\" 3\nauto l = __builtin_source_location();\n", &why));
  CHECK(why.find("__builtin_source_location") != std::string::npos);
  CHECK_FALSE(split_line_layout("int x = __builtin_new_thing(2);\n", &why));
  CHECK(why.find("__builtin_new_thing") != std::string::npos);
  // Builtins that compute from their operands leave the rule on.
  CHECK(split_line_layout("# 1 \"k.cu\"\nif (__builtin_expect(x, 0)) __builtin_trap();\n"));
  // A user's own name spelled like cicc's local variables: move_lines would rename it.
  CHECK_FALSE(split_line_layout("__device__ int __cuda_local_var_36198_1_x;\n", &why));
  CHECK(why.find("__cuda_local_var_") != std::string::npos);
  // In a marker's file name it is no code (the fuzzer's input of the move there and back).
  CHECK(split_line_layout("# 0 \"__cuda_local_var_2\"\nl"));
  CHECK(split_line_layout("# 0 \"__builtin_LINE.h\"\nl"));
  CHECK_FALSE(split_line_layout("const char* s = R\"(x)\";\n", &why));
  CHECK(why.find("raw string") != std::string::npos);
}

TEST_CASE("line_layout: line 1 that held code which moved is the start or the code: refused")
{
  // The .cu has code on its line 1; a host-only line added above it moves that code to line 2.
  // cicc marks the file's start `# 1 "k.cu"` as well: no one can tell which of the two it names.
  const auto at_one = split_line_layout("# 1 \"k.cu\"\nint a;\nint b;\n");
  const auto at_two = split_line_layout("# 1 \"k.cu\"\n\nint a;\nint b;\n");
  REQUIRE(at_one);
  REQUIRE(at_two);
  REQUIRE(at_one->code == at_two->code);
  std::string why;
  CHECK_FALSE(move_lines("# 1 \"k.cu\"\nstatic int x;\n", at_one->table, at_two->table, &why));
  CHECK(why.find("line 1") != std::string::npos);
  // Where the code on line 1 stays there, line 1 is line 1 either way.
  CHECK(move_lines("# 1 \"k.cu\"\nx\n", at_one->table, at_one->table) == "# 1 \"k.cu\"\nx\n");
  // Other lines still move.
  CHECK(move_lines("# 2 \"k.cu\"\n", at_one->table, at_two->table) == "# 3 \"k.cu\"\n");
}

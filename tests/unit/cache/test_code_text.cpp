#include "cache/code_text.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

bool same_code(std::string_view a, std::string_view b)
{
  auto left = code_digest(a);
  auto right = code_digest(b);
  REQUIRE(left);
  REQUIRE(right);
  return *left == *right;
}

}  // namespace

TEST_CASE("code_text: a comment that ends its line goes, its newlines stay")
{
  const std::string header = "#pragma once\nint f(int x);\n";
  CHECK(same_code(header, header + "// a comment appended\n"));
  CHECK(same_code(header, header + "\n\n/* appended\n   over lines */\n\n"));
  CHECK(same_code("int a;\nint b;\n", "int a; // why a\nint b;   \n"));
  CHECK(same_code("int a;\nint b;\n", "int a; /* why a */ // and more\nint b;\n"));
  // A doc block reworded in the same number of lines.
  CHECK(same_code("/// Adds.\n/// Fast.\nint add(int, int);\n",
                  "/// Adds two ints.\n/// \\note Slow.\nint add(int, int);\n"));
  CHECK(code_text("int a; /* x\n y */\nint b;\n") == "int a;\n\nint b;\n");
  // A line added or removed moves what follows: __LINE__, markers and line tables see it.
  CHECK_FALSE(same_code("int a;\nint b;\n", "int a;\n// a new line\nint b;\n"));
  CHECK_FALSE(same_code("/* one */\nint b;\n", "/* one\n two */\nint b;\n"));
}

TEST_CASE("code_text: a comment with code after it on its line stays (columns)")
{
  CHECK_FALSE(same_code("f(/*x=*/1);\n", "f(/*y=*/1);\n"));
  CHECK_FALSE(same_code("/* a */ int b;\n", "int b;\n"));
  CHECK(code_text("f(/*x=*/1); // done\n") == "f(/*x=*/1);\n");
  // Comments after a comment: only code after them, on the line, keeps it.
  CHECK(code_text("int a; /* one */ /* two */\n") == "int a;\n");
  CHECK(code_text("/**//**/") == "");
  CHECK(code_text("/* one */ /* two\n */ int b;\n") == " /* two\n */ int b;\n");
  CHECK(code_text("/* one */ /* two */ int b;\n") == "/* one */ /* two */ int b;\n");
}

TEST_CASE("code_text: literals and header names keep what looks like a comment")
{
  CHECK_FALSE(same_code("const char* s = \"a // b\";\n", "const char* s = \"a // c\";\n"));
  CHECK_FALSE(same_code("const char* s = \"a /* b */\";\n", "const char* s = \"a /* c */\";\n"));
  CHECK_FALSE(same_code("char c = '/'; char d = '/';\n", "char c = '/'; char d = '*';\n"));
  CHECK(same_code("char q = '\"';\n", "char q = '\"'; // a quote\n"));
  CHECK(same_code("const char* s = \"\\\"\";\n", "const char* s = \"\\\"\"; // c\n"));
  // Raw strings: comments, blanks at line ends and newlines are theirs.
  CHECK_FALSE(same_code("auto s = R\"x(a // b)x\";\n", "auto s = R\"x(a // c)x\";\n"));
  CHECK_FALSE(same_code("auto s = R\"(a\n)\";\n", "auto s = R\"(a   \n)\";\n"));
  CHECK_FALSE(same_code("auto s = u8R\"(/*)\";\n", "auto s = u8R\"(/**/)\";\n"));
  CHECK(same_code("auto s = R\"(a)\";\n", "auto s = R\"(a)\"; // raw\n"));
  // Digit separators are not character literals.
  CHECK_FALSE(same_code("int x = 1'000; const char* s = \"a'b // c\";\n",
                        "int x = 1'000; const char* s = \"a'b // d\";\n"));
  CHECK(same_code("int x = 0x1'0000'0000;\n", "int x = 0x1'0000'0000; // 2^32\n"));
  CHECK(same_code("double d = 1.5e+3;\n", "double d = 1.5e+3; // e+3\n"));
  // Header names.
  CHECK_FALSE(same_code("#include <a//b.h>\n", "#include <a//c.h>\n"));
  CHECK_FALSE(same_code("  #  include_next <a/*b.h>\n", "  #  include_next <a/*c.h>\n"));
  CHECK_FALSE(same_code("%:include <a//b.h>\n", "%:include <a//c.h>\n"));
  CHECK_FALSE(
    same_code("#if __has_include(<a//b.h>)\n#endif\n", "#if __has_include(<a//c.h>)\n#endif\n"));
  CHECK_FALSE(same_code("#include /* x */ <a//b.h>\n", "#include /* x */ <a//c.h>\n"));
  CHECK(same_code("#include <vector>\n", "#include <vector>  // std::vector\n"));
  CHECK(same_code("#if A < 3\n#endif\n", "#if A < 3 // small\n#endif\n"));
}

TEST_CASE("code_text: comments the compiler may read stay")
{
  // GCC's -Wimplicit-fallthrough takes "falls through" comments as the attribute.
  CHECK_FALSE(
    same_code("case 1: f();\ncase 2: g();\n", "case 1: f(); // falls through\ncase 2: g();\n"));
  CHECK_FALSE(same_code("case 1: f();\n/* FALLTHRU */\n", "case 1: f();\n\n"));
  // -Wbidi-chars: a bidirectional control (here U+202E, right-to-left override) in a comment.
  CHECK_FALSE(same_code("int x;\n", "int x; // \xE2\x80\xAE evil\n"));
  CHECK_FALSE(same_code("int x;\n", "int x; /* \xE2\x81\xA6 */\n"));
  CHECK(same_code("int x;\n", "int x; // \xE2\x80\x94 an em dash\n"));
  // -Wcomment: "/*" inside a block comment, a line comment continued by a splice.
  CHECK_FALSE(same_code("/* a /* b */\nint x;\n", "\nint x;\n"));
  CHECK_FALSE(same_code("// a \\\nint x;\nint z;\n", "// a \\\nint y;\nint z;\n"));
  // Taking the comment out would make a splice: "x \ // c" is not "x \" + newline.
  CHECK_FALSE(same_code("int x; \\ // c\nint y;\n", "int x; \\ \nint y;\n"));
  CHECK(same_code("#define A 1 \\\n  + 2\n", "#define A 1 \\\n  + 2 // two\n"));
}

TEST_CASE("code_text: what this lexer might misread is not judged")
{
  CHECK_FALSE(code_text("int a; /* never closed\n"));
  CHECK_FALSE(code_text("const char* s = \"never closed\n;\n"));
  CHECK_FALSE(code_text("char c = 'x\n"));
  CHECK_FALSE(code_text("int a;\r\nint b;\r\n"));
  CHECK_FALSE(code_text(std::string_view("int a;\0int b;\n", 14)));
  CHECK_FALSE(code_text("const char* t = __TIMESTAMP__;\n"));
  CHECK_FALSE(code_text("const char* q = \"?\?/\";\n"));
  CHECK_FALSE(code_text("int a; /\\\n/ a comment after all\n"));
  CHECK_FALSE(code_text("/* a *\\\n/ int b;\n"));
  CHECK_FALSE(code_text("auto s = R\\\n\"(a)\";\n"));
  CHECK_FALSE(code_text("auto s = R\"(never closed\n"));
  CHECK_FALSE(code_text("#include <never closed\n"));
  CHECK(code_text("#define F(x) \\\n  (x)\n") == "#define F(x) \\\n  (x)\n");
}

TEST_CASE("code_text: blanks at line ends and blank lines at the end of the file go")
{
  CHECK(code_text("int a;  \t\nint b;\n\n\n") == "int a;\nint b;\n");
  CHECK(code_text("int a;") == "int a;");
  CHECK_FALSE(same_code("int a;", "int a;\n"));
  CHECK_FALSE(same_code("int a;\n", "int  a;\n"));  // blanks inside a line: columns
}

TEST_CASE("code_text: a text that may embed a file as bytes is told apart")
{
  CHECK(may_embed_files("asm(\".section .rodata\\n.incbin \\\"blob.glsl\\\"\\n.previous\");\n"));
  CHECK(may_embed_files("static const char data[] = {\n#embed \"table.bin\"\n};\n"));
  CHECK(may_embed_files("static const char data[] = {\n#  embed <table.bin>\n};\n"));
  CHECK(may_embed_files("#if __has_embed(\"x.bin\")\n#endif\n"));
  CHECK_FALSE(may_embed_files("#include \"k.h\"\nint embedded = 1; // not embed\n"));
  CHECK_FALSE(may_embed_files(""));
}

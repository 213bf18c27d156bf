// Tests for lib/depfile.cpp: ninja's depfile_parser_test cases, nvcc 13.0's real output, the
// writer's exact layout and escaping, and writer -> parser round trips for awkward paths.
#include "compile/build_depfile.hpp"
#include "compile/depfile.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using Paths = std::vector<std::string>;

nvfresh::Depfile parse_ok(std::string_view text)
{
  std::string error;
  std::optional<nvfresh::Depfile> depfile = nvfresh::parse_depfile(text, &error);
  INFO("parse error: " << error);
  REQUIRE(depfile.has_value());
  return *depfile;
}

std::string parse_error(std::string_view text)
{
  std::string error;
  const std::optional<nvfresh::Depfile> depfile = nvfresh::parse_depfile(text, &error);
  REQUIRE_FALSE(depfile.has_value());
  CHECK_FALSE(error.empty());
  return error;
}

std::string data_file(const std::string& name)
{
  return nvfresh::read_file(std::string(NVFRESH_TEST_DATA_DIR) + "/depfiles/" + name);
}

// The awkward names a real tree can hold; each is representable for ninja 1.11 and GNU make 4.3.
const Paths k_awkward_paths = {
  "inc dir/sp ace.h",
  "inc dir/ha#sh.h",
  "inc dir/dol$lar.h",
  "inc dir/pa(re)n.h",
  "inc dir/co:lon.h",
  "inc dir/per%cent.h",
  "inc dir/n\xc3\xb6\xc3\xb1-ascii.h",
  "two  spaces.h",
  "#leading-hash.h",
  "$leading-dollar.h",
  "dollar-end$",
  "$$double.h",
  "back\\slash.h",
  "C:/drive/path.h",
  "x/y@v",
  "bang!.h",
  "cur{l}y.h",
  "co,mma+plus.h",
  "tilde~mid.h",
};

}  // namespace

TEST_CASE("parse_depfile: basic gcc rule", "[depfile]")
{
  const auto depfile = parse_ok("build/ninja.o: ninja.cc ninja.h eval_env.h manifest_parser.h\n");
  CHECK(depfile.targets == Paths{"build/ninja.o"});
  CHECK(depfile.prerequisites == Paths{"ninja.cc", "ninja.h", "eval_env.h", "manifest_parser.h"});
}

TEST_CASE("parse_depfile: continuations with LF and CRLF, early newline", "[depfile]")
{
  CHECK(parse_ok("foo.o: \\\n  bar.h baz.h\n").prerequisites == Paths{"bar.h", "baz.h"});
  const auto crlf = parse_ok("foo.o: \\\r\n  bar.h \\\r\n  baz.h\r\n");
  CHECK(crlf.targets == Paths{"foo.o"});
  CHECK(crlf.prerequisites == Paths{"bar.h", "baz.h"});
  CHECK(parse_ok("foo.o: bar.h\\\n baz.h").prerequisites == Paths{"bar.h", "baz.h"});
  CHECK(parse_ok("\n\nfoo.o: bar.h\n\n").prerequisites == Paths{"bar.h"});
}

TEST_CASE("parse_depfile: nvcc's space before the colon", "[depfile]")
{
  const auto depfile = parse_ok("obj/a.o : a.cu \\\n    inc/b.h \\\n    inc/c.h\n");
  CHECK(depfile.targets == Paths{"obj/a.o"});
  CHECK(depfile.prerequisites == Paths{"a.cu", "inc/b.h", "inc/c.h"});
}

TEST_CASE("parse_depfile: Windows-style backslashes stay literal", "[depfile]")
{
  const auto depfile = parse_ok("Project\\Dir\\Build\\Release8\\Foo\\Foo.res : \\\n"
                                "  Dir\\Library\\Foo.rc \\\n"
                                "  Dir\\Library\\Version\\Bar.h \\\n"
                                "  Dir\\Library\\Foo.ico \\\n"
                                "  Project\\Thing\\Bar.tlb \\\n");
  CHECK(depfile.targets == Paths{"Project\\Dir\\Build\\Release8\\Foo\\Foo.res"});
  CHECK(depfile.prerequisites == Paths{"Dir\\Library\\Foo.rc", "Dir\\Library\\Version\\Bar.h",
                                       "Dir\\Library\\Foo.ico", "Project\\Thing\\Bar.tlb"});
}

TEST_CASE("parse_depfile: escaped spaces", "[depfile]")
{
  const auto depfile = parse_ok("a\\ bc\\ def:   a\\ b c d");
  CHECK(depfile.targets == Paths{"a bc def"});
  CHECK(depfile.prerequisites == Paths{"a b", "c", "d"});
}

TEST_CASE("parse_depfile: runs of backslashes before space and hash", "[depfile]")
{
  // 2N+1 backslashes + space = N backslashes + space; 2N backslashes + space end the word with
  // 2N backslashes; one backslash before '#' is removed, others before it stay.
  const auto depfile = parse_ok("a\\ b\\#c.h: \\\\\\\\\\  \\\\\\\\ \\\\share\\info\\\\#1");
  CHECK(depfile.targets == Paths{"a b#c.h"});
  CHECK(depfile.prerequisites == Paths{"\\\\ ", "\\\\\\\\", "\\\\share\\info\\#1"});
}

TEST_CASE("parse_depfile: backslash before other characters is literal", "[depfile]")
{
  const auto depfile = parse_ok("\\!\\@\\#$$\\%\\^\\&\\[\\]\\\\:");
  CHECK(depfile.targets == Paths{"\\!\\@#$\\%\\^\\&\\[\\]\\\\"});
  CHECK(depfile.prerequisites.empty());
}

TEST_CASE("parse_depfile: escaped colons and drive letters", "[depfile]")
{
  const auto depfile = parse_ok("c\\:\\gcc\\x86_64-w64-mingw32\\include\\stddef.o: \\\n"
                                " c:\\gcc\\x86_64-w64-mingw32\\include\\stddef.h \\\n"
                                " inc/co\\:lon.h inc/co:lon2.h\n");
  CHECK(depfile.targets == Paths{"c:\\gcc\\x86_64-w64-mingw32\\include\\stddef.o"});
  CHECK(depfile.prerequisites ==
        Paths{"c:\\gcc\\x86_64-w64-mingw32\\include\\stddef.h", "inc/co:lon.h", "inc/co:lon2.h"});
}

TEST_CASE("parse_depfile: backslash-colon before whitespace ends a target", "[depfile]")
{
  const auto depfile = parse_ok("foo1\\: x\nfoo1\\:\nfoo1\\:\r\nfoo1\\:\t\nfoo1\\:");
  CHECK(depfile.targets == Paths{"foo1\\"});
  CHECK(depfile.prerequisites == Paths{"x"});
}

TEST_CASE("parse_depfile: special characters from ninja's tests", "[depfile]")
{
  const auto depfile = parse_ok("C:/Program\\ Files\\ (x86)/Microsoft\\ crtdefs.h: \\\n"
                                " en@quot.header~ t+t-x!=1 \\\n"
                                " openldap/slapd.d/cn=config/cn=schema/cn={0}core.ldif\\\n"
                                " Fu\303\244ball\\\n"
                                " a[1]b@2%c");
  CHECK(depfile.targets == Paths{"C:/Program Files (x86)/Microsoft crtdefs.h"});
  CHECK(depfile.prerequisites == Paths{"en@quot.header~", "t+t-x!=1",
                                       "openldap/slapd.d/cn=config/cn=schema/cn={0}core.ldif",
                                       "Fu\303\244ball", "a[1]b@2%c"});
}

TEST_CASE("parse_depfile: ampersand, quotes, dollars and inner hashes", "[depfile]")
{
  const auto depfile =
    parse_ok("out.o: am&p.h \"dq.h\" 'sq.h' d$$d.h nvcc$raw.h end$ in#ner.h \\#esc.h\n");
  CHECK(depfile.prerequisites ==
        Paths{"am&p.h", "\"dq.h\"", "'sq.h'", "d$d.h", "nvcc$raw.h", "end$", "in#ner.h", "#esc.h"});
}

TEST_CASE("parse_depfile: comments at the start of a line", "[depfile]")
{
  const auto depfile = parse_ok("# generated\nout.o: a.h \\\n  b.h\n  # trailing comment\n");
  CHECK(depfile.targets == Paths{"out.o"});
  CHECK(depfile.prerequisites == Paths{"a.h", "b.h"});
}

TEST_CASE("parse_depfile: several targets", "[depfile]")
{
  CHECK(parse_ok("foo foo: x y z").targets == Paths{"foo"});
  const auto depfile = parse_ok("foo bar: x y z");
  CHECK(depfile.targets == Paths{"foo", "bar"});
  CHECK(depfile.prerequisites == Paths{"x", "y", "z"});
}

TEST_CASE("parse_depfile: later rules for the same targets merge", "[depfile]")
{
  CHECK(parse_ok("foo: x\nfoo: \nfoo:\n").prerequisites == Paths{"x"});
  CHECK(parse_ok("foo: x\nfoo: y\nfoo \\\nfoo: z\n").prerequisites == Paths{"x", "y", "z"});
  CHECK(parse_ok("foo: x\\\n     y\nfoo \\\nfoo: z\n").prerequisites == Paths{"x", "y", "z"});
  CHECK(parse_ok(" foo: x\n foo: y\n foo: z\n").prerequisites == Paths{"x", "y", "z"});
  CHECK(parse_ok("foo: x y x\nfoo: y z\n").prerequisites == Paths{"x", "y", "z"});
}

TEST_CASE("parse_depfile: -MP phony rules are ignored", "[depfile]")
{
  const auto depfile = parse_ok("foo: x y z\nx:\ny:\nz:\n");
  CHECK(depfile.targets == Paths{"foo"});
  CHECK(depfile.prerequisites == Paths{"x", "y", "z"});
  CHECK(parse_ok("foo: x\nx:\nfoo: y\ny:\nfoo: z\nz:\n").prerequisites == Paths{"x", "y", "z"});
  CHECK(parse_ok("foo: x\n\nx:\n\nunrelated:\n").targets == Paths{"foo"});
}

TEST_CASE("parse_depfile: prerequisites for another target are rejected", "[depfile]")
{
  CHECK_THAT(parse_error("foo: x y\nbar: y z\n"), Catch::Contains("bar"));
  CHECK_THAT(parse_error("foo: x y z\nx: alsoin\ny:\nz:\n"), Catch::Contains("'x'"));
}

TEST_CASE("parse_depfile: empty depfiles give an empty result", "[depfile]")
{
  for (const std::string_view text : {"", "\n", "  \r\n\t\n", "\\\n", "# only a comment\n"}) {
    const auto depfile = parse_ok(text);
    CHECK(depfile.targets.empty());
    CHECK(depfile.prerequisites.empty());
  }
}

TEST_CASE("parse_depfile: malformed input", "[depfile]")
{
  CHECK_THAT(parse_error("foo bar\n"), Catch::Contains("expected ':'"));
  CHECK_THAT(parse_error("foo.o: a.h\nstray words\n"), Catch::Contains("expected ':'"));
  CHECK_THAT(parse_error(": a.h\n"), Catch::Contains("without a target"));
  CHECK_THAT(parse_error("a: b: c\n"), Catch::Contains("second ':'"));
  CHECK_FALSE(nvfresh::parse_depfile("no colon").has_value());  // error pointer is optional
}

TEST_CASE("parse_depfile: nvcc 13.0 output with awkward header names", "[depfile][nvcc]")
{
  const auto depfile = parse_ok(data_file("nvcc13_special_chars.d"));
  // nvcc writes the -MT value verbatim, so its space splits it into two targets.
  CHECK(depfile.targets == Paths{"obj", "dir/a.o"});
  REQUIRE(depfile.prerequisites.size() == 195);
  CHECK(depfile.prerequisites.front() == "a.cu");
  CHECK(depfile.prerequisites[1] == "/usr/include/stdc-predef.h");
  const Paths tail(depfile.prerequisites.end() - 10, depfile.prerequisites.end());
  CHECK(tail == Paths{"inc dir/sp ace.h", "inc dir/ha#sh.h", "inc dir/dol$lar.h", "inc dir/am&p.h",
                      "inc dir/pa(re)n.h", "inc dir/n\xc3\xb6\xc3\xb1-ascii.h", "inc dir/co:lon.h",
                      "inc dir/back/slash.h",  // nvcc's spelling of the include "back\slash.h"
                      "inc dir/per%cent.h", "inc dir/quo'te.h"});
}

TEST_CASE("parse_depfile: nvcc 13.0 -MP output reads like the plain one", "[depfile][nvcc]")
{
  const auto plain = parse_ok(data_file("nvcc13_special_chars.d"));
  const auto with_phony = parse_ok(data_file("nvcc13_special_chars_mp.d"));
  CHECK(with_phony.targets == plain.targets);
  CHECK(with_phony.prerequisites == plain.prerequisites);
}

TEST_CASE("parse_depfile: the nvcc dialect keeps $$, \\# and \\: literal", "[depfile][nvcc]")
{
  const std::string_view text = "a.o : x$$y.h \\\n    b\\#c.h d\\:e.h f\\ g.h h$i.h j#k.h\n";
  const auto nvcc = nvfresh::parse_depfile(text, nullptr, nvfresh::DepfileDialect::k_nvcc);
  REQUIRE(nvcc.has_value());
  CHECK(nvcc->targets == Paths{"a.o"});
  CHECK(nvcc->prerequisites == Paths{"x$$y.h", "b\\#c.h", "d\\:e.h", "f g.h", "h$i.h", "j#k.h"});
  CHECK(parse_ok(text).prerequisites ==
        Paths{"x$y.h", "b#c.h", "d:e.h", "f g.h", "h$i.h", "j#k.h"});
  // The real nvcc output reads the same in both dialects: it holds no "$$", "\\#" or "\\:".
  const std::string real = data_file("nvcc13_special_chars_mp.d");
  const auto real_nvcc = nvfresh::parse_depfile(real, nullptr, nvfresh::DepfileDialect::k_nvcc);
  REQUIRE(real_nvcc.has_value());
  CHECK(real_nvcc->prerequisites == parse_ok(real).prerequisites);
}

TEST_CASE("escape_depfile_path: gcc's escapes plus the colon", "[depfile]")
{
  CHECK(nvfresh::escape_depfile_path("plain/path.h") == "plain/path.h");
  CHECK(nvfresh::escape_depfile_path("a b") == "a\\ b");
  CHECK(nvfresh::escape_depfile_path("a#b") == "a\\#b");
  CHECK(nvfresh::escape_depfile_path("a$b") == "a$$b");
  CHECK(nvfresh::escape_depfile_path("a:b") == "a\\:b");
  CHECK(nvfresh::escape_depfile_path("a\\b") == "a\\b");
  CHECK(nvfresh::escape_depfile_path("a\\ b") == "a\\\\\\ b");
  CHECK(nvfresh::escape_depfile_path("a&(b)%!") == "a&(b)%!");
}

TEST_CASE("depfile_can_represent", "[depfile]")
{
  for (const std::string& path : k_awkward_paths) {
    INFO(path);
    CHECK(nvfresh::depfile_can_represent(path));
  }
  const Paths unrepresentable = {"",           "tab\there",
                                 "new\nline",  "cr\rx",
                                 "am&p.h",     "q'uote.h",
                                 "q\"uote.h",  "st*r.h",
                                 "qu?.h",      "semi;c.h",
                                 "pi|pe.h",    "lt<.h",
                                 "hat^.h",     "back`.h",
                                 "eq=.h",      "br[1].h",
                                 "~/home.h",   "colon-end:",
                                 "lib.a(m.o)", "end\\",
                                 "a\\ b",      "a\\#b",
                                 "a\\:b",      "a\\$b",
                                 "a\\\\b",     std::string("nul\0byte", 8)};
  for (const std::string& path : unrepresentable) {
    INFO(path);
    CHECK_FALSE(nvfresh::depfile_can_represent(path));
  }
}

TEST_CASE("format_depfile: nvcc's layout, target verbatim", "[depfile]")
{
  CHECK(nvfresh::format_depfile("obj dir/a.o", {"a.cu", "inc/b c.h", "x$.h"}, false) ==
        "obj dir/a.o : a.cu \\\n    inc/b\\ c.h \\\n    x$$.h\n");
  CHECK(nvfresh::format_depfile("a.o", {}, false) == "a.o :\n");
  CHECK(nvfresh::format_depfile("a.o", {"a.cu", "b.h", "a.cu"}, false) ==
        "a.o : a.cu \\\n    b.h\n");
}

TEST_CASE("format_depfile: phony rules like -MP", "[depfile]")
{
  CHECK(nvfresh::format_depfile("a.o", {"a.cu", "b.h", "c d.h"}, true) ==
        "a.o : a.cu \\\n    b.h \\\n    c\\ d.h\n\nb.h:\n\nc\\ d.h:\n");
  // A '%' would turn the phony rule into a pattern rule in make: no phony rule for it.
  CHECK(nvfresh::format_depfile("a.o", {"a.cu", "p%c.h"}, true) == "a.o : a.cu \\\n    p%c.h\n");
}

TEST_CASE("format_depfile: many paths, repeated and escaped, each once in its first place",
          "[depfile]")
{
  // More paths than the dedupe table's first size, short escaped ones among them (their escaped
  // spellings are kept while more are added).
  Paths prerequisites;
  Paths expected_order;
  for (int i = 0; i < 300; ++i) {
    const std::string path = i % 3 == 0 ? fmt::format("d {}.h", i) : fmt::format("inc/h{}.h", i);
    prerequisites.push_back(path);
    expected_order.push_back(path);
    if (i % 4 == 0) {
      prerequisites.push_back(expected_order[static_cast<size_t>(i / 2)]);  // seen before
    }
  }
  for (const bool phony : {false, true}) {
    const std::string text = nvfresh::format_depfile("obj/a.o", prerequisites, phony);
    const auto depfile = parse_ok(text);
    CHECK(depfile.prerequisites == expected_order);
    CHECK(text.find("d\\ 3.h \\\n") != std::string::npos);
    if (phony) {
      CHECK(text.find("\nd\\ 297.h:\n") != std::string::npos);
    }
  }
}

TEST_CASE("round trip: writer -> parser gives the same list", "[depfile][roundtrip]")
{
  Paths prerequisites = {"src/a.cu"};
  prerequisites.insert(prerequisites.end(), k_awkward_paths.begin(), k_awkward_paths.end());
  for (const bool phony : {false, true}) {
    const std::string text = nvfresh::format_depfile("obj/a.o", prerequisites, phony);
    INFO(text);
    const auto depfile = parse_ok(text);
    CHECK(depfile.targets == Paths{"obj/a.o"});
    CHECK(depfile.prerequisites == prerequisites);
  }
}

TEST_CASE("round trip: each awkward path alone and as the first entry", "[depfile][roundtrip]")
{
  for (const std::string& path : k_awkward_paths) {
    INFO(path);
    CHECK(parse_ok(nvfresh::format_depfile("t.o", {path}, true)).prerequisites == Paths{path});
    const Paths pair = {path, "x.h"};
    CHECK(parse_ok(nvfresh::format_depfile("t.o", pair, true)).prerequisites == pair);
  }
}

namespace {

// Pseudo-random depfile-like text, biased towards the bytes the grammar cares about.
std::string random_depfile_text(std::mt19937& engine)
{
  static constexpr std::string_view k_alphabet = "ab.h/: \\\\\\#$$\n\r\t%&()'\"~=[]\x80\xff";
  std::uniform_int_distribution<std::size_t> length(0, 40);
  std::uniform_int_distribution<std::size_t> pick(0, k_alphabet.size() - 1);
  std::uniform_int_distribution<int> any_byte(0, 255);
  std::string text(length(engine), '\0');
  for (char& c : text) {
    c = pick(engine) == 0 ? static_cast<char>(any_byte(engine)) : k_alphabet[pick(engine)];
  }
  return text;
}

}  // namespace

TEST_CASE("parse_depfile: pseudo-random input never crashes and round trips", "[depfile][random]")
{
  std::mt19937 engine(20240611u);  // fixed seed: the same inputs on every run
  int parsed = 0;
  int round_tripped = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string text = random_depfile_text(engine);
    const std::optional<nvfresh::Depfile> depfile = nvfresh::parse_depfile(text);
    if (!depfile) {
      continue;
    }
    ++parsed;
    bool representable = true;
    for (const std::string& path : depfile->prerequisites) {
      representable = representable && nvfresh::depfile_can_represent(path);
    }
    if (!representable) {
      continue;
    }
    ++round_tripped;
    const std::string written = nvfresh::format_depfile("out.o", depfile->prerequisites, true);
    INFO("input: " << text << "\nwritten: " << written);
    const auto again = nvfresh::parse_depfile(written);
    REQUIRE(again.has_value());
    REQUIRE(again->prerequisites == depfile->prerequisites);
  }
  // The generator must exercise both outcomes, or this test checks nothing.
  CHECK(parsed > 1000);
  CHECK(round_tripped > 500);
}

TEST_CASE("write_build_depfile leaves a depfile that already says the same alone", "[depfile]")
{
  nvfresh::test::TempDir dir;
  const std::string path = dir.path("k.o.d");
  const std::vector<std::string> prerequisites{"/src/k.cu", "/src/a b.h"};
  nvfresh::write_build_depfile(path, "k.o", prerequisites, false);
  const std::string written = nvfresh::read_file(path);
  CHECK(written == nvfresh::format_depfile("k.o", prerequisites, false));
  const auto before = nvfresh::stat_file(path);
  nvfresh::write_build_depfile(path, "k.o", prerequisites, false);
  CHECK(nvfresh::stat_file(path).inode == before.inode);  // not written again
  nvfresh::write_build_depfile(path, "k.o", prerequisites, true);
  CHECK(nvfresh::read_file(path) == nvfresh::format_depfile("k.o", prerequisites, true));
  nvfresh::write_file_atomically(path, "k.o : /src/old.h\n");  // another compile's, or torn
  nvfresh::write_build_depfile(path, "k.o", prerequisites, false);
  CHECK(nvfresh::read_file(path) == written);
}

// The code of a C, C++ or CUDA file with the comments that nothing can see taken out: what lets a
// cache entry serve a tree whose header differs from the entry's only in such comments (a comment
// appended, a doc block reworded), where ccache's preprocessor mode runs `nvcc -E` and nvfresh's
// direct lookup would otherwise compile.
//
// code_text(text) is `text` with
//   - every comment that ends its line (nothing but blanks after it on that line, or a line
//     comment after it) taken out, its newlines kept: every token keeps its line and its column,
//     so __LINE__, line markers, debug line and column tables and diagnostics' positions are those
//     of the original;
//   - the blanks at the end of every line dropped, and blank lines at the end of the file.
// A comment that may matter stays as it is: one followed by code on its line (columns), one that
// names a fallthrough (GCC's -Wimplicit-fallthrough reads "falls through" comments) or holds a
// Unicode bidirectional control (GCC's -Wbidi-chars, on by default, warns about it), a block
// comment holding "/*" (-Wcomment), a line comment continued by a backslash-newline, and one whose
// removal would leave a backslash at the end of its line (a line splice the original has not).
// Blanks are never dropped inside a string literal, a raw string or a header name.
//
// nullopt where the file holds something a lexer this small might misread, so that the caller
// falls back to the file's raw content: a literal or block comment that does not end, a line
// splice inside a block comment or next to a '/' or '*', a trigraph, a NUL byte, __TIMESTAMP__
// (the file's mtime, which a comment edit changes).
//
// Two texts with the same code_text give the same preprocessing tokens at the same places, except
// for GCC's #pragma once, which tells two files with equal bytes and mtime apart from two without:
// a tree with two such copies of one header may compile differently after a comment edit to one of
// them (ccache has the same exposure). Whether the compile's console, debug information or flags
// can see comments anyway is the caller's to judge (object_cache.cpp: comments_may_matter).
#pragma once

#include "util/hasher.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

std::optional<std::string> code_text(std::string_view text);

// The digest of code_text(text), tagged with its format; nullopt where code_text is.
std::optional<Digest> code_digest(std::string_view text);

// Whether `text` may have the compiler read another file as bytes, where a comment is data: an
// `.incbin` in inline assembly, `#embed`, `__has_embed`. Comments of a compile that holds one are
// never taken out (object_cache.cpp). A directive spelled by token pasting is not found: a record
// names a file the assembler read as data (InputRole::data) all the same, but not one an
// integrated assembler (clang) read.
bool may_embed_files(std::string_view text);

}  // namespace nvfresh

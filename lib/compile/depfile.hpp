// Make-syntax dependency files: read what nvcc/gcc write, write what ninja and GNU make read.
//
// Reading (parse_depfile) accepts gcc's, clang's and nvcc's spellings:
//   - nvcc writes "target : dep \" (a space before the colon, 4-space indented continuation lines),
//     escapes only spaces in prerequisites ("\ "), and writes '#', '$', '&', ':' raw; the target
//     is written exactly as -MT gave it (spaces unescaped);
//   - gcc/clang write "target: dep \" and escape space ("\ ", doubling backslashes before it),
//     '#' ("\#") and '$' ("$$"), never a lone backslash;
//   - continuations "\\\n" and "\\\r\n", CRLF line ends, several rules, several targets.
// Escapes read: "\ " (2N+1 backslashes + space = N backslashes + space, like ninja), "\#", "\:"
// (when not followed by whitespace or the end), "$$". A backslash before anything else is
// literal (with DepfileDialect::k_nvcc, also before '#' and ':', and "$$" stays "$$"). A lone
// '$' and a '#' inside a word are literal (that is how nvcc writes such paths);
// a '#' starting a line begins a comment. A ':' separates targets from prerequisites only when
// whitespace or the end follows it, so "C:/x" and "a:b.h" are plain paths.
//
// Which prerequisites are returned: those of the FIRST rule's targets. Later rules that name only
// targets of the first rule add their prerequisites (make merges them too). Later rules without
// prerequisites (the "-MP" phony rules "header.h:") are ignored. A later rule with prerequisites
// for any other target is rejected as malformed: we would not know which object it belongs to.
// An empty depfile (nothing but whitespace/comments) parses to an empty Depfile; callers decide
// whether an empty list is acceptable.
//
// Writing (format_depfile) produces nvcc's layout: "<target> : <prereq 1>", then each further
// prerequisite on its own line indented by 4 spaces, every line but the last ending in " \",
// with the target exactly as given (byte for byte, as nvcc writes -MT's value: the caller passes
// a make-quoted -MT if it needs one), each prerequisite escaped by escape_depfile_path, one per
// line, and with phony_targets an empty "path:" rule for every prerequisite except the first
// (like -MP), so that a deleted header does not break make.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct Depfile {
  std::vector<std::string> targets;        // unescaped, in order of appearance
  std::vector<std::string> prerequisites;  // unescaped, de-duplicated, in order of first appearance
};

// How '$$', '\#' and '\:' are read. gcc/clang (and our writer) use them as escapes; nvcc never
// escapes anything but a space, so in a depfile written by nvcc they are literal bytes of a path
// (a header named "x$$y.h" appears as "x$$y.h"). Parse nvcc's own output with k_nvcc.
enum class DepfileDialect { k_make, k_nvcc };

// nullopt on malformed input, with a human-readable reason in *error when error != nullptr.
std::optional<Depfile> parse_depfile(std::string_view text, std::string* error = nullptr,
                                     DepfileDialect dialect = DepfileDialect::k_make);

// Callers should check depfile_can_represent for every prerequisite first: a path it rejects is
// still written (escaped as well as possible, like gcc and nvcc do), but ninja 1.11 or GNU make
// 4.3 would read it back as a different list.
std::string format_depfile(std::string_view target, const std::vector<std::string>& prerequisites,
                           bool phony_targets);

// The escaping used for a prerequisite (exposed for tests): ' ' -> "\ " (backslashes right before
// it doubled), '#' -> "\#", '$' -> "$$", ':' -> "\:" (GNU make needs it; ninja reads it back).
std::string escape_depfile_path(std::string_view path);

// Whether ninja 1.11 (deps = gcc) and GNU make 4.3 both read escape_depfile_path(path) back as
// exactly `path`. False for: empty paths; bytes ninja 1.11 cannot take (control characters, tab,
// '&', quotes, '*', '?', ';', '|', '<', '>', '^', '`') or make cannot take ('=': variable
// assignment, '[' ']': globbing); a leading '~' (make's tilde expansion); a trailing ':'; a
// path ending in ')' that contains '(' (make's archive(member) syntax); a backslash that is last
// or sits before ' ', '#', ':', '$' or another backslash.
bool depfile_can_represent(std::string_view path);

}  // namespace nvfresh

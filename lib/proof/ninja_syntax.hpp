// The pieces of build.ninja's syntax that nvfresh reads: logical lines ("$\n" continuations
// joined), a build line's words (the escapes "$ ", "$:", "$$" undone), and a build line's parts
// (outputs, rule, explicit, implicit and order-only inputs). Pure; shared by the build graph
// (ninja_manifest.hpp) and the build commands (build_commands.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// Every logical line, continuations joined (the leading spaces of a continuation dropped); a
// line keeps its own leading indentation (a variable of the rule or edge above it).
std::vector<std::string> ninja_logical_lines(std::string_view text);

// One build line split into words with the escapes "$ ", "$:", "$$" undone; any other "$x" is kept
// as written. An unescaped ':' ends a word and is its own word ":".
std::vector<std::string> ninja_words(std::string_view line);

struct NinjaEdge {
  std::vector<std::string> outputs;  // explicit and implicit ("|") outputs
  std::string rule;
  std::vector<std::string> explicit_inputs;
  std::vector<std::string> implicit_inputs;    // after "|"
  std::vector<std::string> order_only_inputs;  // after "||"
};

// The words of one "build" line (ninja_words).
NinjaEdge parse_build_words(const std::vector<std::string>& words);

}  // namespace nvfresh

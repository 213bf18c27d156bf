// The paths a cache key leaves out, so that one compile's result serves other build directories of
// a checkout, and other checkouts at other paths (a second clone, CI and a laptop): every path
// under the build tree is written "$BUILD/<relative>", every path under the source tree
// "$SOURCE/<relative>", in keys, in the input sets of manifests, in stored depfiles and in stored
// console output; a cache hit maps them back onto this tree. Any other path (the toolkit, system
// headers) stays absolute: another machine matches it only where it has the same file there.
//
// The build tree is the directory that holds the record root (or the CMakeCache.txt above the
// working directory); the source tree is CMakeCache.txt's CMAKE_HOME_DIRECTORY. Without a
// CMakeCache.txt only the build tree is a root.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct TreeRoots {
  std::string build;   // absolute, no trailing slash, as this compile spells it ("" when unknown)
  std::string source;  // absolute, no trailing slash, as CMake wrote it ("" when unknown)
  // The same directories with symlinks resolved, where that spells them otherwise ("" when not):
  // the tracer sees some paths one way and some the other.
  std::string build_alias;
  std::string source_alias;
  bool operator==(const TreeRoots&) const = default;
};

// The roots of the build tree at `build_tree` (the directory of the record root).
TreeRoots tree_roots_of(const std::string& build_tree);

// The placeholders of the roots in keys, manifests, stored depfiles and console output (written
// "$BUILD" and "$SOURCE" above): STX, the name, ETX, which no path and no compiler message holds.
// Spelled here only: every other file (the remote's input root names, tests) takes them from here.
inline constexpr std::string_view k_build_token = "\x02"
                                                  "BUILD\x03";
inline constexpr std::string_view k_source_token = "\x02"
                                                   "SOURCE\x03";
// The first character of every root token: no path holds it.
inline constexpr char k_root_token_start = k_build_token.front();
static_assert(k_source_token.front() == k_root_token_start);

class PathMap {
public:
  explicit PathMap(TreeRoots roots);

  const TreeRoots& roots() const { return m_roots; }

  // "$BUILD/…" or "$SOURCE/…" for a path under a root (the deeper root wins when one holds the
  // other), else the path as given.
  std::string to_key(const std::string& path) const;
  std::string to_tree(const std::string& key_path) const;

  // Every occurrence of a root in free text (arguments, console output) replaced, and back.
  std::string text_to_key(std::string_view text) const;
  std::string text_to_tree(std::string_view text) const;

  // Whether `bytes` name a root anywhere (an object whose content depends on where it was built).
  bool names_a_root(std::string_view bytes) const;

  // Which roots `bytes` name, in any spelling (alias included). Where one root holds the other (a
  // build dir inside the checkout), an occurrence of the deeper root counts for it alone:
  // "/ck/build/gen.h" names the build root, not the source root "/ck".
  struct Named {
    bool build = false;
    bool source = false;
    Named& operator|=(const Named& other)
    {
      build = build || other.build;
      source = source || other.source;
      return *this;
    }
  };
  Named roots_named(std::string_view bytes) const;

private:
  TreeRoots m_roots;
};

}  // namespace nvfresh

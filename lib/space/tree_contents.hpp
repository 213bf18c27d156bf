// What a build tree holds that no build regenerates, for `nvfresh space --clean`: a version-control
// checkout (.git, .hg, .svn), a source tree (a CMakeLists.txt), another build tree (a
// CMakeCache.txt below the top), or a regular file changed after the tree's last build (the user's
// own work: a build writes its files before nvfresh notes the build, k_changed_margin_ns allows
// for a link or a last step that nvfresh does not see). A tree holding any of them is kept.
//
// One walk of the tree, stopped at the first finding, never through a symbolic link nor into
// another file system; the tree's record root (nvfresh's own store, which `space` itself writes
// to) is not looked into.
#pragma once

#include <cstdint>
#include <string>

namespace nvfresh {

inline constexpr std::int64_t k_changed_margin_ns = 15LL * 60 * 1'000'000'000;

// "" when the tree holds only what a build makes, else what it holds, naming the path:
// "a git checkout (/b/work/.git)", "/b/notes.txt, changed after its last build".
std::string find_foreign_content(const std::string& tree, const std::string& record_root,
                                 std::int64_t last_build_ns);

}  // namespace nvfresh

// What every nvfresh process that works in a build tree does first (a compile, a link record, a
// sync): hold the tree's build lock for the rest of the process (build_lock.hpp) and keep the
// tree's registry entry current (registry.hpp), so that `nvfresh space` knows the tree and
// whether a build runs there.
//
// Cost per call: an open and a flock of the lock file, one stat of the registry entry, and every
// k_registry_refresh_ns per tree one small write. Never throws, never prints.
#pragma once

#include "util/environment.hpp"

#include <string>

namespace nvfresh {

// The tree is the record root's parent when the record root is "<tree>/.nvfresh", else the build
// tree the working directory belongs to (record/record_root.hpp).
std::string build_tree_of(const std::string& record_root, const std::string& working_dir);

void enter_build_tree(const std::string& record_root, const std::string& working_dir,
                      const Environment& env);

}  // namespace nvfresh

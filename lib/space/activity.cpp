#include "space/activity.hpp"

#include "record/record_root.hpp"
#include "space/build_lock.hpp"
#include "space/registry.hpp"
#include "util/clock.hpp"
#include "util/log.hpp"

#include <filesystem>

namespace nvfresh {

std::string build_tree_of(const std::string& record_root, const std::string& working_dir)
{
  std::filesystem::path root(record_root);
  if (root.filename() == ".nvfresh" && root.has_parent_path()) {
    return root.parent_path().string();
  }
  return find_build_tree(working_dir).value_or(working_dir);
}

void enter_build_tree(const std::string& record_root, const std::string& working_dir,
                      const Environment& env)
{
  try {
    hold_build_lock_for_process(record_root);
    register_tree(registry_dir(env), build_tree_of(record_root, working_dir), record_root,
                  now_ns());
  } catch (const std::exception& error) {
    log::info("build tree activity not noted: {}", error.what());
  }
}

}  // namespace nvfresh

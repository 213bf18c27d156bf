// The one code in nvfresh that deletes user data: `nvfresh space --clean --yes` removing the trees
// its dry run listed (space/space_report.hpp's rule). Each tree is removed only while its build
// lock is held exclusively (no nvfresh process of the tree runs, none can start), after the whole
// rule is checked once more under that lock (a build, a process or another registered tree may
// have come since the dry run), only while it is still registered, and only the directory the
// rule was checked on: its path resolved again just before the removal must be the same. One
// `--clean --yes` removes at a time on a machine; a second one removes nothing and says why.
// Every file-system action goes through space/tree_disk.hpp.
#pragma once

#include "space/space_report.hpp"
#include "space/tree_disk.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvfresh {

struct RemovalOutcome {
  std::vector<std::string> removed;  // the entry.tree of each tree removed
  std::vector<std::string> errors;   // one line each: what was not removed, and why
  std::uint64_t freed_bytes = 0;     // the removed trees' sizes as the dry run measured them
};

class TreeRemoval {
public:
  // Takes the clean lock, held until destruction; without it (another `--clean --yes` runs),
  // remove() removes nothing and the outcome's errors say so once.
  explicit TreeRemoval(TreeDisk& disk);
  bool exclusive() const { return m_clean_lock != nullptr; }

  // Removes one tree the dry run listed, if the rule still allows it.
  void remove(const TreeReport& planned);
  const RemovalOutcome& outcome() const { return m_outcome; }

private:
  std::string reason_to_refuse(const TreeReport& planned, std::string& dir);

  TreeDisk& m_disk;
  std::unique_ptr<HeldLock> m_clean_lock;
  RemovalOutcome m_outcome;
};

}  // namespace nvfresh

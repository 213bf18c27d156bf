// "A build is running in this tree now": every nvfresh process of a tree (compiles, link records,
// sync) holds a shared flock on <record root>/build.lock while it runs; `nvfresh space` tests it
// with an exclusive, non-blocking flock, and holds that while it removes a tree, so that no
// nvfresh process of the tree runs during the removal.
//
// The lock file is opened close-on-exec: the compiler nvfresh runs does not inherit it, and the
// lock ends with the nvfresh process, however that ends (kill -9 included).
#pragma once

#include <string>

namespace nvfresh {

std::string build_lock_file(const std::string& record_root);

// Takes the shared lock for the rest of this process (waiting while `space` removes the tree).
// Best effort: a record root that cannot hold the lock file (read-only, full) only goes
// unlocked, which the debug log says. Taking it again for the same root does nothing.
void hold_build_lock_for_process(const std::string& record_root);

enum class LockState {
  no_lock_file,  // no nvfresh process has worked here since build locks exist
  idle,          // nobody holds it
  held,          // an nvfresh process of the tree is running
};

// Never waits.
LockState probe_build_lock(const std::string& record_root);

// An exclusive flock on `file` (created when missing), taken without waiting and held until
// destruction; taken() is false when someone else holds a lock on it (or the file cannot be
// opened), and then nothing is held.
class ExclusiveFileLock {
public:
  explicit ExclusiveFileLock(const std::string& file);
  ~ExclusiveFileLock();
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;
  bool taken() const { return m_fd >= 0; }

private:
  int m_fd = -1;
};

// The tree's build lock, exclusively: taken() is false while an nvfresh process of the tree holds
// the shared one.
class ExclusiveBuildLock : public ExclusiveFileLock {
public:
  explicit ExclusiveBuildLock(const std::string& record_root)
    : ExclusiveFileLock(build_lock_file(record_root))
  {}
};

}  // namespace nvfresh

// Which processes use a build tree, for `nvfresh space --clean`: a process whose working
// directory, root, executable or any open file lies inside the tree. The build lock only sees
// nvfresh's own processes; this sees ninja or make running a custom command, a test binary, a
// shell sitting in the tree. Linux /proc; the processes of other users cannot be read there and
// are not seen (their trees are never removed: space_report.hpp).
//
// Cost: one readlink per process and per open file descriptor, once per `space --clean` and once
// more before each removal.
#pragma once

#include <string>
#include <vector>

namespace nvfresh {

struct ProcessPath {
  int pid = 0;
  std::string command;  // /proc/<pid>/comm
  std::string path;     // what the link names, " (deleted)" removed
  std::string how;      // "has its working directory", "runs", "has open"
};

struct ProcessSnapshot {
  bool readable = false;  // false when `proc` could not be listed: nothing can be said
  std::vector<ProcessPath> paths;
};

// Every process but this one; `proc` is the /proc mount.
ProcessSnapshot snapshot_process_paths(const std::string& proc = "/proc");

// "" when no process of the snapshot uses `dir` (absolute, canonical), else who and how:
// "process 12 (ninja) has its working directory there (/b/t)".
std::string process_using(const ProcessSnapshot& snapshot, const std::string& dir);

}  // namespace nvfresh

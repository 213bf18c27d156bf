// Scratch directories: a new, private directory made with mkdtemp, for files a command needs only
// while it runs (the remote helper's blobs, repro's run dirs, doctor's probe, cache verify).
#pragma once

#include <string>
#include <string_view>

namespace nvfresh {

// $TMPDIR when it is set and not empty, else /tmp.
std::string temp_parent_dir();

// Makes <parent>/<prefix>XXXXXX with mkdtemp (the parent must exist) and returns its path; throws
// std::runtime_error naming the pattern when it cannot.
std::string make_scratch_dir(const std::string& parent, std::string_view prefix);

// A scratch directory made by make_scratch_dir, removed with everything in it when the object
// goes.
class ScratchDir {
public:
  explicit ScratchDir(std::string_view prefix, const std::string& parent = temp_parent_dir());
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return m_path; }

private:
  std::string m_path;
};

}  // namespace nvfresh

#include "compile/build_depfile.hpp"

#include "util/file_io.hpp"
#include "util/log.hpp"

#include <set>

namespace nvfresh {

std::vector<std::string> depfile_prerequisites(const Record& record, const std::string& working_dir,
                                               const std::optional<Depfile>& nvcc_depfile)
{
  std::vector<std::string> prerequisites;
  std::set<std::string> listed;
  if (nvcc_depfile) {
    for (const auto& dep : nvcc_depfile->prerequisites) {
      prerequisites.push_back(dep);
      listed.insert(absolute_path(dep, working_dir));
    }
  } else {
    prerequisites.push_back(record.source);
    listed.insert(record.source);
  }
  for (const auto& input : record.inputs) {
    if (listed.insert(input.file.path).second) {
      prerequisites.push_back(input.file.path);
    }
  }
  for (const auto& path : prerequisites) {
    if (!depfile_can_represent(path)) {
      log::info("keeping nvcc's own depfile: {} cannot be written so that make and ninja read it",
                path);
      return {};
    }
  }
  return prerequisites;
}

void write_build_depfile(const std::string& path, const std::string& target,
                         const std::vector<std::string>& prerequisites, bool phony_targets)
{
  const std::string text = format_depfile(target, prerequisites, phony_targets);
  if (try_read_file(path) == text) {
    // Make's builds keep the depfile, and a skip leaves it as the last compile wrote it: replacing
    // it with the same bytes only made ext4 flush them (a rename over a file starts its writeback).
    return;
  }
  try {
    write_file_atomically(path, text);
  } catch (const FileWriteError& error) {
    throw error.with_advice("the build asked for this depfile there (-MF); free space on that "
                            "file system; see nvfresh space");
  }
}

}  // namespace nvfresh

#include "proof/build_graph_loader.hpp"

#include "proof/make_files.hpp"
#include "proof/ninja_manifest.hpp"
#include "util/file_io.hpp"

namespace nvfresh {

BuildGraph load_build_graph(const std::string& build_dir)
{
  std::string dir = canonical_dir(graph_path(build_dir, current_directory()));
  if (auto text = try_read_file(dir + "/build.ninja")) {
    return parse_ninja_manifest(*text, dir);
  }
  if (stat_file(dir + "/Makefile").exists) {
    return load_make_graph(dir);
  }
  return {};
}

}  // namespace nvfresh

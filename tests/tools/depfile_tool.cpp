// Test-only command line front end to lib/depfile, used by tests/integration/test_depfile_roundtrip.py.
//
//   nvfresh_depfile_tool write <target> [--phony] [-0]   paths on stdin -> format_depfile on stdout
//   nvfresh_depfile_tool represent [-0]                  paths on stdin -> "1"/"0" per path (can ninja
//                                                        1.11 and make 4.3 read it back?)
//   nvfresh_depfile_tool parse [--nvcc]                  depfile on stdin -> prerequisites on stdout,
//                                                        each followed by a NUL byte (--nvcc: read
//                                                        it as nvcc writes it, DepfileDialect::k_nvcc)
// Paths on stdin are one per line, or NUL-terminated with -0. Exit status 2 on bad usage,
// 1 when parse finds a malformed depfile.
#include "compile/depfile.hpp"

#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace {

bool has_flag(int argc, char** argv, std::string_view flag)
{
  for (int i = 2; i < argc; ++i) {
    if (argv[i] == flag) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> read_paths(bool nul_separated)
{
  std::vector<std::string> paths;
  std::string path;
  while (std::getline(std::cin, path, nul_separated ? '\0' : '\n')) {
    paths.push_back(path);
  }
  return paths;
}

int run_parse(nvfresh::DepfileDialect dialect)
{
  const std::string text(std::istreambuf_iterator<char>(std::cin), {});
  std::string error;
  const auto depfile = nvfresh::parse_depfile(text, &error, dialect);
  if (!depfile) {
    std::cerr << "nvfresh_depfile_tool: " << error << '\n';
    return 1;
  }
  for (const std::string& path : depfile->prerequisites) {
    std::cout << path << '\0';
  }
  return 0;
}

int run_represent(bool nul_separated)
{
  for (const std::string& path : read_paths(nul_separated)) {
    std::cout << (nvfresh::depfile_can_represent(path) ? "1\n" : "0\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool nul_separated = has_flag(argc, argv, "-0");
  if (mode == "write" && argc > 2) {
    std::cout << nvfresh::format_depfile(argv[2], read_paths(nul_separated),
                                         has_flag(argc, argv, "--phony"));
    return 0;
  }
  if (mode == "represent") {
    return run_represent(nul_separated);
  }
  if (mode == "parse") {
    return run_parse(has_flag(argc, argv, "--nvcc") ? nvfresh::DepfileDialect::k_nvcc
                                                    : nvfresh::DepfileDialect::k_make);
  }
  std::cerr << "usage: nvfresh_depfile_tool write <target> [--phony] [-0] | represent [-0] | parse "
               "[--nvcc]\n";
  return 2;
}

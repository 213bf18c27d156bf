// Test tool for bench/check_scale.py: generates a synthetic build tree with real header and object
// files and one nvfresh record per object, as the launcher would write them.
// Usage: record_gen_tool <dir> <objects> <headers> <headers-per-object>
#include "freshness/file_hasher.hpp"
#include "record/record_root.hpp"
#include "record/signature.hpp"
#include "util/file_io.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace nvfresh;

namespace {

std::vector<FileFingerprint> make_files(const std::string& dir, const std::string& pattern,
                                        int count, FileHasher& hasher)
{
  std::vector<FileFingerprint> files;
  for (int i = 0; i < count; ++i) {
    std::string path = fmt::format(fmt::runtime(dir + pattern), i);
    write_file_atomically(path, fmt::format("// file {}\n", i));
    files.push_back(*hasher.fingerprint(path).fingerprint);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 5) {
    fmt::print(stderr, "usage: record_gen_tool <dir> <objects> <headers> <headers-per-object>\n");
    return 2;
  }
  std::string dir = argv[1];
  int objects = std::stoi(argv[2]), headers = std::stoi(argv[3]), per_object = std::stoi(argv[4]);
  std::filesystem::create_directories(dir + "/include");
  std::filesystem::create_directories(dir + "/obj");
  write_file_atomically(dir + "/CMakeCache.txt", "");
  FileHasher hasher;
  auto header_files = make_files(dir, "/include/h{}.h", headers, hasher);
  auto object_files = make_files(dir, "/obj/o{}.cu.o", objects, hasher);
  auto build_env = compile_environment(current_environment());
  for (int i = 0; i < objects; ++i) {
    Record record;
    record.object = object_files[i].path;
    record.source = fmt::format("{}/src/o{}.cu", dir, i);
    record.working_dir = dir;
    record.compiler = "/usr/local/cuda/bin/nvcc";
    record.signature_args = {"-x", "cu", "-c", "-arch=sm_80", "-O3"};
    record.env = build_env;  // as if built in this environment (PATH, NVCC_*_FLAGS, ...)
    record.nvcc_version = "Cuda compilation tools, release 13.0, V13.0.88";
    for (int h = 0; h < per_object; ++h) {
      record.inputs.push_back(
        {header_files[(i * 7 + h) % headers], InputRole::header, {"host", "compute_80"}});
    }
    record.probes = nvfresh::group_probes({fmt::format("{}/include/missing{}.h", dir, i % 50)});
    record.output = object_files[i];
    record.history.push_back({1, "compiled", "nvcc ran"});
    save_record(record_file_for(dir + "/.nvfresh", record.object), record);
  }
  return 0;
}

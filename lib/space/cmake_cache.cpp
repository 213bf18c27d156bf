// CMakeCache.txt, as far as nvfresh reads it:
//   line  := comment | entry | blank
//   comment := ("#" | "//") any
//   entry := key [":" type] "=" value        e.g. CMAKE_HOME_DIRECTORY:INTERNAL=/src/project
// Only the keys of k_cache_keys are used; a value runs to the end of the line.
#include "space/cmake_cache.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_max_cache_bytes = 64ULL << 20;  // ORT's is 0.3 MB

struct CacheKey {
  std::string_view key;
  std::string CMakeCacheFacts::*field;
};

const CacheKey k_cache_keys[] = {
  {"CMAKE_HOME_DIRECTORY", &CMakeCacheFacts::home_directory},
  {"CMAKE_CACHEFILE_DIR", &CMakeCacheFacts::cache_directory},
  {"CMAKE_GENERATOR", &CMakeCacheFacts::generator},
  {"CMAKE_MAKE_PROGRAM", &CMakeCacheFacts::make_program},
  {"CMAKE_CUDA_COMPILER", &CMakeCacheFacts::cuda_compiler},
  {"CMAKE_CUDA_HOST_COMPILER", &CMakeCacheFacts::cuda_host_compiler},
};

std::string canonical_or_empty(const std::string& path)
{
  std::error_code error;
  fs::path canonical = fs::canonical(path, error);
  return error ? std::string() : canonical.string();
}

// Why a tree whose CMakeCache.txt says `facts` is not regenerable, "" when it is.
std::string ambiguity(const std::string& tree, const CMakeCacheFacts& facts)
{
  if (facts.home_directory.empty()) {
    return "its CMakeCache.txt names no source dir (CMAKE_HOME_DIRECTORY)";
  }
  if (!facts.cache_directory.empty() && canonical_or_empty(facts.cache_directory) != tree) {
    return fmt::format("its CMakeCache.txt was written for {}: a moved or copied tree",
                       facts.cache_directory);
  }
  std::string source = canonical_or_empty(facts.home_directory);
  if (source.empty() || !stat_file(source).is_directory) {
    return fmt::format("its source dir {} is gone", facts.home_directory);
  }
  if (!stat_file(source + "/CMakeLists.txt").is_regular) {
    return fmt::format("its source dir {} holds no CMakeLists.txt", facts.home_directory);
  }
  if (is_within(source, tree)) {
    return "its sources are inside it (an in-source build)";
  }
  return {};
}

}  // namespace

CMakeCacheFacts parse_cmake_cache(std::string_view text)
{
  CMakeCacheFacts facts;
  while (!text.empty()) {
    size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    size_t equals = line.find('=');
    if (line.empty() || line[0] == '#' || line.substr(0, 2) == "//" ||
        equals == std::string_view::npos) {
      continue;
    }
    std::string_view key = line.substr(0, std::min(line.find(':'), equals));
    std::string_view value = line.substr(equals + 1);
    for (const auto& entry : k_cache_keys) {
      if (entry.key == key) {
        facts.*entry.field = value;
      }
    }
  }
  return facts;
}

std::optional<CMakeCacheFacts> read_cmake_cache(const std::string& tree)
{
  const std::string file = tree + "/CMakeCache.txt";
  FileStat st = stat_file(file);
  if (!st.is_regular || st.size > k_max_cache_bytes) {
    return std::nullopt;
  }
  auto text = try_read_file(file);
  return text ? std::optional<CMakeCacheFacts>(parse_cmake_cache(*text)) : std::nullopt;
}

TreeOrigin classify_tree(const std::string& tree)
{
  TreeOrigin origin;
  std::string canonical = canonical_or_empty(tree);
  auto facts = canonical.empty() ? std::nullopt : read_cmake_cache(canonical);
  if (!facts) {
    origin.reason =
      canonical.empty() ? "it is gone" : "it has no CMakeCache.txt (not a CMake build tree)";
    return origin;
  }
  origin.source_dir = facts->home_directory;
  origin.reason = ambiguity(canonical, *facts);
  origin.regenerable = origin.reason.empty();
  return origin;
}

}  // namespace nvfresh

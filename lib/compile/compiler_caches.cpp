#include "compile/compiler_caches.hpp"

#include "util/log.hpp"
#include "util/name_table.hpp"

#include <filesystem>
#include <string_view>

namespace nvfresh {

namespace {

enum class CacheHandling { recompile, bypass };

struct CompilerCache {
  std::string_view program;  // the launcher's file name
  CacheHandling handling;
  std::string_view variable;  // set to "1" when handling is recompile
};

constexpr CompilerCache k_compiler_caches[] = {
  {"ccache", CacheHandling::recompile, "CCACHE_RECACHE"},
  {"sccache", CacheHandling::bypass, ""},
  {"buildcache", CacheHandling::bypass, ""},
};

const CompilerCache* cache_named(const std::string& word)
{
  const std::string name = std::filesystem::path(word).filename().string();
  return find_row(k_compiler_caches, &CompilerCache::program, std::string_view(name));
}

}  // namespace

bool is_compiler_cache(const std::string& word)
{
  return cache_named(word) != nullptr;
}

ChainedRun prepare_chained_caches(const CompilerChain& chain, const Environment& env)
{
  ChainedRun run;
  run.env = env;
  // ccache inside the compile (gcc on PATH, or nvcc itself) reads the same switch.
  run.env.insert_or_assign("CCACHE_RECACHE", std::string(1, '1'));
  for (const auto& word : chain.prefix) {
    const CompilerCache* cache = cache_named(word);
    if (cache != nullptr && cache->handling == CacheHandling::bypass) {
      run.bypassed.push_back(word);
      continue;
    }
    run.command.push_back(word);
  }
  run.command.reserve(run.command.size() + 1 + chain.args.size());
  run.command.push_back(chain.compiler);
  for (const auto& arg : chain.args) {
    run.command.push_back(arg);
  }
  for (const auto& word : run.bypassed) {
    log::info("{} left out of the compile: its server compiles outside nvfresh's trace", word);
  }
  return run;
}

}  // namespace nvfresh

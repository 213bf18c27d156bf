#include "cache/cache_entry.hpp"
#include "cache/tree_roots.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

CacheEntry sample_entry()
{
  CacheEntry entry;
  entry.object = std::string("\x7f"
                             "ELF\0\0\x01binary\xff",
                             14);
  entry.depfile_prerequisites = {std::string(k_source_token) + "/k.cu",
                                 "/usr/local/cuda/include/cuda.h"};
  entry.console_mode = "separate";
  entry.console_out = "line one\r\n";
  entry.console_err =
    std::string(k_source_token) + "/k.cu(3): warning #177-D: variable \"x\" was declared\n";
  entry.console_terminals = "stderr";
  entry.console_terminal_env = {{"TERM", "xterm-256color"}};
  entry.components = {{"host code", hash_bytes("h")}, {"sm_80 cubin", hash_bytes("c")}};
  entry.other_variants = {{{"host code", hash_bytes("h2")}}};
  entry.created_ns = 1'700'000'000'000'000'000;
  entry.compile_ns = 42'000'000'000;
  entry.origin_tree = "/home/a/build";
  entry.bound = CacheEntry::Binding{"", "/home/a/src"};
  entry.nvcc_version = "Cuda compilation tools, release 13.0, V13.0.88";
  entry.origin_command = {"/usr/local/cuda/bin/nvcc", "-c", "k.cu", "-o", "k.o"};
  entry.origin_cwd = "/home/a/build";
  entry.origin_env = {{"PATH", "/usr/bin"}, {"NVCC_APPEND_FLAGS", "-DX=1"}};
  entry.origin_object = "/home/a/build/k.o";
  return entry;
}

}  // namespace

TEST_CASE("cache entry: round trip, binary object bytes and all", "[cache]")
{
  const CacheEntry entry = sample_entry();
  auto parsed = parse_cache_entry(serialize_cache_entry(entry));
  REQUIRE(parsed);
  CHECK(*parsed == entry);
}

TEST_CASE("cache entry: a damaged or truncated entry is none, never a wrong object", "[cache]")
{
  const std::string text = serialize_cache_entry(sample_entry());
  std::string error;
  for (size_t cut : {size_t{0}, size_t{10}, text.size() / 2, text.size() - 1}) {
    CHECK_FALSE(parse_cache_entry(text.substr(0, cut), &error));
  }
  for (size_t at : {size_t{3}, text.size() / 3, text.size() - 2}) {
    std::string flipped = text;
    flipped[at] ^= 0x01;
    CHECK_FALSE(parse_cache_entry(flipped, &error));
  }
}

#include "util/parallel.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

using nvfresh::for_each_index_on_threads;

TEST_CASE("for_each_index_on_threads runs every index exactly once", "[parallel]")
{
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{4096}}) {
    for (size_t per_thread : {size_t{1}, size_t{16}, size_t{256}}) {
      std::vector<std::atomic<int>> runs(count);
      for_each_index_on_threads(count, per_thread, 8, [&](size_t i) { ++runs[i]; });
      for (size_t i = 0; i < count; ++i) {
        REQUIRE(runs[i] == 1);
      }
    }
  }
}

TEST_CASE("for_each_index_on_threads with one thread allowed runs in order on this one",
          "[parallel]")
{
  std::vector<size_t> order;
  for_each_index_on_threads(100, 1, 1, [&](size_t i) { order.push_back(i); });
  REQUIRE(order.size() == 100);
  for (size_t i = 0; i < order.size(); ++i) {
    CHECK(order[i] == i);
  }
}

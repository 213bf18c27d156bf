#include "util/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace nvfresh {

void for_each_index_on_threads(std::size_t count, std::size_t per_thread, std::size_t max_threads,
                               const std::function<void(std::size_t)>& work)
{
  static const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t threads =
    std::min({cores, max_threads, count / std::max<std::size_t>(per_thread, 1)});
  const std::size_t run = std::clamp<std::size_t>(per_thread / 16, 1, 64);
  std::atomic<std::size_t> next{0};
  auto take_items = [&] {
    for (std::size_t first = next.fetch_add(run); first < count; first = next.fetch_add(run)) {
      for (std::size_t i = first; i < std::min(count, first + run); ++i) {
        work(i);
      }
    }
  };
  std::vector<std::thread> workers;
  if (threads > 1) {
    workers.reserve(threads - 1);
    try {
      for (std::size_t t = 1; t < threads; ++t) {
        workers.emplace_back(take_items);
      }
    } catch (const std::system_error&) {
      // no thread to be had: the counter leaves what the missing ones would have done to this one
    }
  }
  take_items();
  for (auto& worker : workers) {
    worker.join();
  }
}

}  // namespace nvfresh

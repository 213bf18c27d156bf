#include "util/clock.hpp"

#include <ctime>

namespace nvfresh {

namespace {

constexpr std::int64_t k_race_guard_max_wait_ns = 50'000'000;  // a clock tick is 1-10 ms
constexpr long k_race_guard_poll_ns = 500'000;

std::int64_t read_clock(clockid_t clock)
{
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * k_one_second_ns + ts.tv_nsec;
}

}  // namespace

std::int64_t now_ns()
{
  return read_clock(CLOCK_REALTIME);
}

std::int64_t coarse_now_ns()
{
  return read_clock(CLOCK_REALTIME_COARSE);
}

std::int64_t monotonic_now_ns()
{
  return read_clock(CLOCK_MONOTONIC);
}

std::int64_t race_guard_start_ns()
{
  return wait_for_coarse_after(now_ns());
}

std::int64_t wait_for_coarse_after(std::int64_t ns)
{
  const std::int64_t give_up = now_ns() + k_race_guard_max_wait_ns;
  std::int64_t coarse = coarse_now_ns();
  while (coarse <= ns && now_ns() < give_up) {
    timespec pause{0, k_race_guard_poll_ns};
    ::nanosleep(&pause, nullptr);
    coarse = coarse_now_ns();
  }
  return coarse;
}

}  // namespace nvfresh

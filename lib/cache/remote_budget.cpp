#include "cache/remote_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr double k_longest_budget_seconds = 86400;

// The text of the file `fd` (at most 4 KiB: these files are a line or two).
std::string read_all(int fd)
{
  std::array<char, 4096> buffer{};
  const ssize_t got = pread(fd, buffer.data(), buffer.size(), 0);
  return got > 0 ? std::string(buffer.data(), static_cast<size_t>(got)) : std::string();
}

void replace_all(int fd, const std::string& text)
{
  if (ftruncate(fd, 0) == 0) {
    (void)!pwrite(fd, text.data(), text.size(), 0);
  }
}

// `file` opened for update under an exclusive lock, its directory made when missing; -1 when it
// cannot be.
int open_locked(const std::string& file)
{
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ignored);
    fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  }
  if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::optional<std::int64_t> parse_budget_ns(const std::string& text, std::int64_t default_ns)
{
  if (text.empty()) {
    return default_ns;
  }
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(seconds >= 0) ||
      seconds > k_longest_budget_seconds) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

LedgerState parse_ledger(const std::string& text)
{
  LedgerState state;
  std::istringstream fields(text);
  int over = 0;
  if (fields >> state.spent_ns >> over) {
    state.over = over != 0;
    state.spent_ns = std::max<std::int64_t>(state.spent_ns, 0);
    return state;
  }
  return {};
}

std::string format_ledger(const LedgerState& state)
{
  return fmt::format("{} {}\n", state.spent_ns, state.over ? 1 : 0);
}

std::int64_t budget_left_ns(std::int64_t budget_ns, const LedgerState& state)
{
  return state.over ? 0 : std::max<std::int64_t>(budget_ns - state.spent_ns, 0);
}

LedgerState after_lookup(LedgerState state, std::int64_t took_ns, bool ran_out)
{
  state.spent_ns += std::max<std::int64_t>(took_ns, 0);
  state.over = state.over || ran_out;
  return state;
}

LedgerState read_ledger(const std::string& file)
{
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return {};
  }
  LedgerState state = parse_ledger(read_all(fd));
  close(fd);
  return state;
}

LedgerState record_lookup(const std::string& file, std::int64_t took_ns, bool ran_out,
                          bool* newly_over)
{
  const int fd = open_locked(file);
  const LedgerState before = fd < 0 ? LedgerState{} : parse_ledger(read_all(fd));
  const LedgerState after = after_lookup(before, took_ns, ran_out);
  if (fd >= 0) {
    replace_all(fd, format_ledger(after));
    close(fd);
  }
  *newly_over = after.over && !before.over;
  return after;
}

std::string add_to_build_sum(const std::string& text, const std::string& build_id,
                             std::int64_t lost_ns, std::int64_t budget_ns, BuildSum* sum)
{
  const std::string first_line = build_id + "\n";
  const bool this_build = text.rfind(first_line, 0) == 0;
  const std::int64_t before =
    this_build
      ? std::max<std::int64_t>(std::strtoll(text.c_str() + first_line.size(), nullptr, 10), 0)
      : 0;
  sum->total_ns = before + std::max<std::int64_t>(lost_ns, 0);
  sum->crossed = sum->total_ns >= budget_ns && (!this_build || before < budget_ns);
  return fmt::format("{}{}\n", first_line, sum->total_ns);
}

BuildSum add_to_build_sum_file(const std::string& file, const std::string& build_id,
                               std::int64_t lost_ns, std::int64_t budget_ns)
{
  BuildSum sum;
  const int fd = open_locked(file);
  const std::string text =
    add_to_build_sum(fd < 0 ? std::string() : read_all(fd), build_id, lost_ns, budget_ns, &sum);
  if (fd >= 0) {
    replace_all(fd, text);
    close(fd);
  }
  return sum;
}

std::string budget_text(std::int64_t ns)
{
  const double seconds = static_cast<double>(ns) / 1e9;
  if (seconds >= 120 && std::fmod(seconds, 60) == 0) {
    return fmt::format("{:.3g} min", seconds / 60);
  }
  return fmt::format("{:.3g} s", seconds);
}

}  // namespace nvfresh

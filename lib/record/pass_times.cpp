#include "record/pass_times.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

namespace nvfresh {

namespace {

// Programs that only start others: their time is their children's.
constexpr std::string_view k_starters[] = {"sh",     "bash",    "dash",       "env",
                                           "ccache", "sccache", "buildcache", "nvfresh"};
// nvcc's own tools, named as they are.
constexpr std::string_view k_cuda_tools[] = {"cicc", "ptxas", "fatbinary", "nvlink", "cudafe++"};

bool is_one_of(std::string_view name, const auto& list)
{
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

std::string kind_of(const std::string& name, const std::string& pass)
{
  if (name == "nvcc" || is_one_of(name, k_cuda_tools)) {
    return name;
  }
  return arch_of_pass(pass).empty() ? "host compiler" : "preprocess";
}

std::string part_of(const PassTime& time)
{
  if (time.kind == "fatbinary" || time.kind == "nvlink") {
    return "link";
  }
  const std::string arch = arch_of_pass(time.pass);
  return arch.empty() ? "host" : "sm_" + arch;
}

// The order of parts: host, the archs (numerically: sm_80 before sm_100), link.
auto part_order(const std::string& part)
{
  const int group = part == "host" ? 0 : part == "link" ? 2 : 1;
  const std::string arch = group == 1 ? part.substr(3) : "";
  const size_t digits = arch.find_first_not_of("0123456789");
  return std::make_tuple(group, digits == std::string::npos ? arch.size() : digits, arch);
}

// The order of kinds within a part: as the compile runs them.
int kind_order(const std::string& kind)
{
  constexpr std::string_view k_order[] = {"preprocess",    "cudafe++",  "cicc",  "ptxas",
                                          "host compiler", "fatbinary", "nvlink"};
  const auto* found = std::find(std::begin(k_order), std::end(k_order), kind);
  return static_cast<int>(found - std::begin(k_order));
}

// The length of the union of the intervals.
std::int64_t covered_ns(std::vector<std::pair<std::int64_t, std::int64_t>> intervals)
{
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0;
  std::int64_t reached = 0;
  bool any = false;
  for (const auto& [start, end] : intervals) {
    const std::int64_t from = any ? std::max(start, reached) : start;
    if (end > from) {
      total += end - from;
    }
    reached = any ? std::max(reached, end) : end;
    any = true;
  }
  return total;
}

}  // namespace

std::string arch_of_pass(const std::string& pass)
{
  for (std::string_view prefix : {std::string_view("compute_"), std::string_view("sm_")}) {
    if (pass.starts_with(prefix) && pass.size() > prefix.size()) {
      return pass.substr(prefix.size());
    }
  }
  return "";
}

std::vector<PassTime> pass_times_of(const Trace& trace)
{
  const std::map<int, std::string> passes = resolve_passes(trace);
  std::vector<PassTime> times;
  std::optional<std::int64_t> nvcc_start;
  std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
  for (const TracedProcess& process : trace.processes) {
    const std::string name = std::filesystem::path(process.executable).filename().string();
    if (process.end_ns <= 0 || process.end_ns < process.start_ns || is_one_of(name, k_starters)) {
      continue;
    }
    auto pass = passes.find(process.pid);
    const std::string pass_name = pass == passes.end() ? std::string("host") : pass->second;
    times.push_back(
      {kind_of(name, pass_name), pass_name, process.start_ns, process.end_ns, process.served});
    earliest = std::min(earliest, process.start_ns);
    if (name == "nvcc" && !nvcc_start) {
      nvcc_start = process.start_ns;
    }
  }
  const std::int64_t base = nvcc_start.value_or(earliest);  // nvcc's start is the zero
  for (PassTime& time : times) {
    time.start_ns -= base;
    time.end_ns -= base;
  }
  std::stable_sort(times.begin(), times.end(),
                   [](const PassTime& a, const PassTime& b) { return a.start_ns < b.start_ns; });
  return times;
}

PassSplit split_pass_times(const std::vector<PassTime>& times)
{
  PassSplit split;
  struct Gathered {
    std::vector<std::pair<std::int64_t, std::int64_t>> ran;
    std::size_t served = 0;
  };
  std::map<std::pair<std::string, std::string>, Gathered> gathered;
  for (const PassTime& time : times) {
    if (time.kind == "nvcc") {
      split.nvcc_ns = std::max(split.nvcc_ns, time.end_ns - time.start_ns);
      continue;
    }
    Gathered& row = gathered[{part_of(time), time.kind}];
    if (time.served) {
      ++row.served;
    } else {
      row.ran.emplace_back(time.start_ns, time.end_ns);
    }
  }
  for (auto& [key, row] : gathered) {
    split.rows.push_back({key.first, key.second, covered_ns(row.ran), row.ran.size(), row.served});
  }
  std::stable_sort(split.rows.begin(), split.rows.end(),
                   [](const PassSplitRow& a, const PassSplitRow& b) {
                     return std::make_tuple(part_order(a.part), kind_order(a.kind), a.kind) <
                            std::make_tuple(part_order(b.part), kind_order(b.kind), b.kind);
                   });
  return split;
}

}  // namespace nvfresh

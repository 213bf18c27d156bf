#include "digest/timestamp_text.hpp"

#include <ctime>

namespace nvfresh {

namespace {

constexpr size_t k_text_size = 24;  // "Sun Dec  6 03:13:55 2026"
constexpr size_t k_first_colon = 13;
constexpr size_t k_second_colon = 16;
constexpr std::int64_t k_ns_per_second = 1'000'000'000;

}  // namespace

std::string timestamp_text(std::int64_t mtime_ns)
{
  const std::time_t seconds = static_cast<std::time_t>(mtime_ns / k_ns_per_second);
  std::tm local{};
  if (localtime_r(&seconds, &local) == nullptr) {
    return {};
  }
  char text[k_text_size + 8] = {};
  const size_t size = std::strftime(text, sizeof text, "%a %b %e %H:%M:%S %Y", &local);
  return std::string(text, size);
}

std::string_view find_timestamp_text(std::string_view bytes,
                                     const std::unordered_set<std::string>& texts)
{
  if (texts.empty() || bytes.size() < k_text_size) {
    return {};
  }
  std::string candidate(k_text_size, ' ');
  // Each text has ':' at 13 and 16: look only where the bytes do too.
  for (size_t colon = bytes.find(':', k_first_colon); colon != std::string_view::npos;
       colon = bytes.find(':', colon + 1)) {
    const size_t at = colon - k_first_colon;
    if (at + k_text_size > bytes.size()) {
      break;
    }
    if (bytes[at + k_second_colon] != ':') {
      continue;
    }
    candidate.assign(bytes.substr(at, k_text_size));
    if (auto found = texts.find(candidate); found != texts.end()) {
      return *found;
    }
  }
  return {};
}

}  // namespace nvfresh

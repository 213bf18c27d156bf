#include "digest/timestamp_text.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using namespace nvfresh;

TEST_CASE("timestamp_text: an mtime as __TIMESTAMP__ spells it, found in an object's bytes")
{
  const char* zone = std::getenv("TZ");
  const std::string saved = zone != nullptr ? zone : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  constexpr std::int64_t k_ns = 1'000'000'000;
  const std::string text = timestamp_text(1'796'525'635 * k_ns);  // 2026-12-06 02:53:55 UTC
  CHECK(text == "Sun Dec  6 02:53:55 2026");
  CHECK(timestamp_text(1'796'525'635 * k_ns + 999'999'999) == text);  // seconds only
  const std::unordered_set<std::string> texts{text, timestamp_text(0)};
  std::string object("\x7f"
                     "ELF\0\0 .rodata ",
                     15);
  CHECK(find_timestamp_text(object, texts).empty());
  object += "stamp: " + text + std::string(1, '\0') + "more";
  CHECK(find_timestamp_text(object, texts) == text);
  // Another second, or the same text cut short, is not it.
  CHECK(find_timestamp_text("Sun Dec  6 02:53:56 2026", texts).empty());
  CHECK(find_timestamp_text("Sun Dec  6 02:53:55 202", texts).empty());
  CHECK(find_timestamp_text("a:b:c " + text, {}).empty());
  CHECK(find_timestamp_text(text, texts) == text);  // at the very start and the very end
  if (zone != nullptr) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

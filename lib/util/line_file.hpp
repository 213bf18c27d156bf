// The text formats nvfresh keeps on disk (records, link records, cache manifests and entries):
// lines of TAB-separated fields escaped as util/text_fields.hpp says, a first line
// "<magic> TAB <version>", and a last line "checksum TAB <hex32>" holding the XXH3-128 of every byte
// before it. A file that fails any of these checks is unreadable: a miss or "stale", never an error.
#pragma once

#include "util/hasher.hpp"
#include "util/text_fields.hpp"

#include <array>
#include <charconv>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace nvfresh {

class LineWriter {
public:
  LineWriter() = default;
  LineWriter(std::string_view magic, int version) { line(magic, version); }

  template <typename... Fields>
  void line(std::string_view key, const Fields&... fields)
  {
    m_text += key;
    ((m_text += '\t', append(fields)), ...);
    m_text += '\n';
  }

  // The text with its checksum line.
  std::string finish()
  {
    line("checksum", hash_bytes(m_text).to_hex());
    return std::move(m_text);
  }

private:
  // Each field goes straight into the text: a record of a CUTLASS TU has thousands of lines, and
  // a skip writes it again.
  void append(std::string_view value) { append_escaped_field(m_text, value); }
  void append(const std::string& value) { append_escaped_field(m_text, value); }
  void append(const char* value) { append_escaped_field(m_text, value); }
  void append(bool value) { m_text += value ? '1' : '0'; }
  // A list: one field per element (at least one; an empty list is one empty field).
  void append(const std::vector<std::string>& values)
  {
    for (size_t i = 0; i < values.size(); ++i) {
      if (i != 0) {
        m_text += '\t';
      }
      append_escaped_field(m_text, values[i]);
    }
  }
  void append(const Digest& value) { m_text += value.to_hex(); }
  template <typename Number>
  void append(Number value)
  {
    std::array<char, 24> digits{};
    auto [end, error] = std::to_chars(digits.data(), digits.data() + digits.size(), value);
    m_text.append(digits.data(), error == std::errc() ? end : digits.data());
  }
  std::string m_text;
};

using LineFields = std::vector<std::string>;

// A field that does not parse: a reader throws it from deep inside and catches it where it turns
// the file into "unreadable", with the message.
struct LineParseError {
  std::string message;
};

// The field as a digest or a number, else a LineParseError that names it.
Digest digest_field(const std::string& hex);

template <typename Number>
Number number_field(const std::string& text)
{
  Number value{};
  if (!parse_number(text, value)) {
    throw LineParseError{"'" + text + "' is not a number"};
  }
  return value;
}

// A LineParseError unless the line has exactly `count` fields (its key included).
void expect_field_count(const LineFields& fields, size_t count);

// The body lines of `text` (between header and checksum), each split into unescaped fields, when
// the header names `magic` and `version` and the checksum holds; else nullopt and *error says why.
std::optional<std::vector<LineFields>> read_line_file(std::string_view text, std::string_view magic,
                                                      int version, std::string* error = nullptr);

// The same checks, each body line handed to `each` in one fields buffer that is reused (its
// strings keep their capacity: a manifest of thousands of lines allocates almost nothing; `each`
// may move a field out, a cache entry's object say, which the next line then refills). False,
// with *error, when a check fails or a line has a bad escape; what `each` throws goes through.
bool for_each_line(std::string_view text, std::string_view magic, int version,
                   const std::function<void(LineFields&)>& each, std::string* error = nullptr);
// The same, where `each` returns true to stop: the lines after it are not split.
bool for_each_line_until(std::string_view text, std::string_view magic, int version,
                         const std::function<bool(LineFields&)>& each,
                         std::string* error = nullptr);

}  // namespace nvfresh

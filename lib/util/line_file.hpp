// The text formats nvfresh keeps on disk (records, link records, cache manifests and entries):
// lines of TAB-separated fields escaped as util/text_fields.hpp says, a first line
// "<magic> TAB <version>", and a last line "checksum TAB <hex32>" holding the XXH3-128 of every byte
// before it. A file that fails any of these checks is unreadable: a miss or "stale", never an error.
#pragma once

#include "util/hasher.hpp"
#include "util/text_fields.hpp"

#include <optional>
#include <string>
#include <string_view>
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
    ((m_text += '\t', m_text += escape_field(to_text(fields))), ...);
    m_text += '\n';
  }

  // The text with its checksum line.
  std::string finish()
  {
    line("checksum", hash_bytes(m_text).to_hex());
    return std::move(m_text);
  }

private:
  static std::string to_text(std::string_view value) { return std::string(value); }
  static std::string to_text(const std::string& value) { return value; }
  static std::string to_text(const char* value) { return value; }
  static std::string to_text(bool value) { return value ? "1" : "0"; }
  static std::string to_text(const Digest& value) { return value.to_hex(); }
  template <typename Number>
  static std::string to_text(Number value)
  {
    return std::to_string(value);
  }
  std::string m_text;
};

using LineFields = std::vector<std::string>;

// The body lines of `text` (between header and checksum), each split into unescaped fields, when
// the header names `magic` and `version` and the checksum holds; else nullopt and *error says why.
std::optional<std::vector<LineFields>> read_line_file(std::string_view text, std::string_view magic,
                                                      int version, std::string* error = nullptr);

}  // namespace nvfresh

#include "util/line_file.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

// The body between header and checksum when the header names `magic` and `version` and the
// checksum holds; else nullopt and *error says why.
std::optional<std::string_view> checked_body(std::string_view text, std::string_view magic,
                                             int version, std::string* error)
{
  auto failed = [error](std::string message) {
    if (error != nullptr) {
      *error = std::move(message);
    }
    return std::nullopt;
  };
  const size_t header_end = text.find('\n');
  if (header_end == std::string_view::npos || !text.starts_with(magic)) {
    return failed(fmt::format("not a {} file", magic));
  }
  auto header = split_fields(text.substr(0, header_end));
  if (!header || header->size() != 2 || (*header)[0] != magic) {
    return failed(fmt::format("not a {} file", magic));
  }
  if ((*header)[1] != std::to_string(version)) {
    return failed(fmt::format("format version {}, expected {}", (*header)[1], version));
  }
  if (text.back() != '\n' || text.size() < header_end + 2) {
    return failed("truncated (no final newline)");
  }
  const size_t checksum_start = text.rfind('\n', text.size() - 2) + 1;
  auto checksum = split_fields(text.substr(checksum_start, text.size() - 1 - checksum_start));
  if (checksum_start <= header_end || !checksum || checksum->size() != 2 ||
      (*checksum)[0] != "checksum") {
    return failed("truncated (no checksum line)");
  }
  if (hash_bytes(text.substr(0, checksum_start)).to_hex() != (*checksum)[1]) {
    return failed("checksum mismatch (modified or torn)");
  }
  return text.substr(header_end + 1, checksum_start - header_end - 1);
}

}  // namespace

bool for_each_line(std::string_view text, std::string_view magic, int version,
                   const std::function<void(LineFields&)>& each, std::string* error)
{
  return for_each_line_until(
    text, magic, version,
    [&](LineFields& fields) {
      each(fields);
      return false;
    },
    error);
}

bool for_each_line_until(std::string_view text, std::string_view magic, int version,
                         const std::function<bool(LineFields&)>& each, std::string* error)
{
  auto body = checked_body(text, magic, version, error);
  if (!body) {
    return false;
  }
  LineFields fields;
  while (!body->empty()) {
    const size_t end = body->find('\n');
    if (!split_fields_into(body->substr(0, end), fields) || fields.empty()) {
      if (error != nullptr) {
        *error = "bad escape sequence";
      }
      return false;
    }
    if (each(fields)) {
      return true;
    }
    body->remove_prefix(end + 1);
  }
  return true;
}

std::optional<std::vector<LineFields>> read_line_file(std::string_view text, std::string_view magic,
                                                      int version, std::string* error)
{
  std::vector<LineFields> lines;
  if (!for_each_line(
        text, magic, version, [&](const LineFields& fields) { lines.push_back(fields); }, error)) {
    return std::nullopt;
  }
  return lines;
}

Digest digest_field(const std::string& hex)
{
  auto digest = Digest::from_hex(hex);
  if (!digest) {
    throw LineParseError{"'" + hex + "' is not a digest"};
  }
  return *digest;
}

void expect_field_count(const LineFields& fields, size_t count)
{
  if (fields.size() != count) {
    throw LineParseError{"'" + fields[0] + "' has the wrong number of fields"};
  }
}

}  // namespace nvfresh

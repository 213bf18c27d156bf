#include "util/line_file.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

std::optional<std::vector<LineFields>> fail(std::string* error, std::string message)
{
  if (error != nullptr) {
    *error = std::move(message);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<LineFields>> read_line_file(std::string_view text, std::string_view magic,
                                                      int version, std::string* error)
{
  const size_t header_end = text.find('\n');
  if (header_end == std::string_view::npos || !text.starts_with(magic)) {
    return fail(error, fmt::format("not a {} file", magic));
  }
  auto header = split_fields(text.substr(0, header_end));
  if (!header || header->size() != 2 || (*header)[0] != magic) {
    return fail(error, fmt::format("not a {} file", magic));
  }
  if ((*header)[1] != std::to_string(version)) {
    return fail(error, fmt::format("format version {}, expected {}", (*header)[1], version));
  }
  if (text.back() != '\n' || text.size() < header_end + 2) {
    return fail(error, "truncated (no final newline)");
  }
  const size_t checksum_start = text.rfind('\n', text.size() - 2) + 1;
  auto checksum = split_fields(text.substr(checksum_start, text.size() - 1 - checksum_start));
  if (checksum_start <= header_end || !checksum || checksum->size() != 2 ||
      (*checksum)[0] != "checksum") {
    return fail(error, "truncated (no checksum line)");
  }
  if (hash_bytes(text.substr(0, checksum_start)).to_hex() != (*checksum)[1]) {
    return fail(error, "checksum mismatch (modified or torn)");
  }
  std::vector<LineFields> lines;
  std::string_view body = text.substr(header_end + 1, checksum_start - header_end - 1);
  while (!body.empty()) {
    const size_t end = body.find('\n');
    auto fields = split_fields(body.substr(0, end));
    if (!fields || fields->empty()) {
      return fail(error, "bad escape sequence");
    }
    lines.push_back(std::move(*fields));
    body.remove_prefix(end + 1);
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

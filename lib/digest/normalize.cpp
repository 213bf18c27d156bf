#include "digest/normalize.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace nvfresh {

namespace {

constexpr std::string_view k_tmpxft_prefix = "tmpxft_";
constexpr std::size_t k_hash_digits = 8;

bool is_hex(char c)
{
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool hex_run(std::string_view text, std::size_t at, std::size_t count)
{
  return at + count <= text.size() &&
         std::all_of(text.begin() + at, text.begin() + at + count, is_hex);
}

// "tmpxft_" + 8 hex + "_" + 8 hex starting at `at`?
bool tmpxft_stem_at(std::string_view text, std::size_t at)
{
  const std::size_t first = at + k_tmpxft_prefix.size();
  const std::size_t second = first + k_hash_digits + 1;
  return hex_run(text, first, k_hash_digits) && first + k_hash_digits < text.size() &&
         text[first + k_hash_digits] == '_' && hex_run(text, second, k_hash_digits);
}

// A cursor over one line-table header that refuses to move past `m_end`.
class LineHeaderCursor {
public:
  LineHeaderCursor(std::string& bytes, std::size_t at, std::size_t end)
    : m_bytes(bytes), m_at(at), m_end(end)
  {}

  bool ok() const { return m_ok; }
  std::uint8_t byte()
  {
    m_ok = m_ok && m_at < m_end;
    return m_ok ? static_cast<std::uint8_t>(m_bytes[m_at++]) : 0;
  }
  void skip(std::size_t count)
  {
    m_ok = m_ok && count <= m_end - m_at;
    m_at = m_ok ? m_at + count : m_at;
  }
  void skip_string()
  {
    while (m_ok && byte() != 0) {
    }
  }
  // Skips one ULEB128; when `zero` is set, rewrites it as a zero of the same length.
  void uleb(bool zero)
  {
    for (bool more = true; m_ok && more;) {
      const std::size_t at = m_at;
      more = (byte() & 0x80) != 0;
      if (m_ok && zero) {
        m_bytes[at] = static_cast<char>(more ? 0x80 : 0x00);
      }
    }
  }

private:
  std::string& m_bytes;
  std::size_t m_at;
  std::size_t m_end;
  bool m_ok = true;
};

// Rewrites the mtimes of one unit's file table; returns how many.
std::size_t normalize_line_unit(std::string& bytes, std::size_t unit, std::size_t unit_end)
{
  LineHeaderCursor cursor(bytes, unit + 4, unit_end);
  const unsigned low = cursor.byte();
  const unsigned version = low | (unsigned{cursor.byte()} << 8);
  if (version < 2 || version > 4) {
    return 0;
  }
  cursor.skip(4 + 1 + (version >= 4 ? 1 : 0) +
              3);  // header_length, min_inst_length, [max_ops], ...
  const std::uint8_t opcode_base = cursor.byte();
  cursor.skip(opcode_base > 0 ? opcode_base - 1u : 0u);
  while (cursor.ok() && cursor.byte() != 0) {  // include_directories
    cursor.skip_string();
  }
  std::size_t count = 0;
  while (cursor.ok() && cursor.byte() != 0) {  // file_names: name, directory, mtime, length
    cursor.skip_string();
    cursor.uleb(false);
    cursor.uleb(true);
    cursor.uleb(false);
    count += cursor.ok() ? 1 : 0;
  }
  return count;
}

}  // namespace

std::size_t normalize_dwarf_line_mtimes(std::string& debug_line)
{
  std::size_t count = 0;
  for (std::size_t unit = 0; unit + 4 <= debug_line.size();) {
    std::uint32_t length = 0;
    std::memcpy(&length, debug_line.data() + unit, sizeof(length));
    if (length >= 0xFFFFFFF0u || length > debug_line.size() - unit - 4) {
      break;  // 64-bit DWARF or a broken length: leave the rest as it is
    }
    count += normalize_line_unit(debug_line, unit, unit + 4 + length);
    unit += 4 + length;
  }
  return count;
}

std::size_t normalize_tmpxft_stems(std::string& bytes)
{
  std::size_t count = 0;
  for (auto at = bytes.find(k_tmpxft_prefix); at != std::string::npos;
       at = bytes.find(k_tmpxft_prefix, at + 1)) {
    if (!tmpxft_stem_at(bytes, at)) {
      continue;
    }
    const std::size_t first = at + k_tmpxft_prefix.size();
    std::fill_n(bytes.begin() + first, k_hash_digits, '0');
    std::fill_n(bytes.begin() + first + k_hash_digits + 1, k_hash_digits, '0');
    ++count;
  }
  return count;
}

std::string module_id_from_section(std::string_view section_data)
{
  const std::string_view id = section_data.substr(0, section_data.find('\0'));
  // Measured shape: "_" + 8 hex path hash + "_" + ...; the non-rdc placeholder is "__NV_MODULE_ID".
  if (id.size() < 2 + k_hash_digits || id[0] != '_' || !hex_run(id, 1, k_hash_digits) ||
      id[1 + k_hash_digits] != '_') {
    return {};
  }
  return std::string(id);
}

std::string normalized_module_id(std::string_view module_id)
{
  std::string result(module_id);
  if (module_id_from_section(module_id).empty()) {
    return result;
  }
  std::fill_n(result.begin() + 1, k_hash_digits, '0');
  return result;
}

std::size_t normalize_module_id(std::string& bytes, std::string_view module_id)
{
  if (module_id.empty()) {
    return 0;
  }
  const std::string replacement = normalized_module_id(module_id);
  std::size_t count = 0;
  for (auto at = bytes.find(module_id); at != std::string::npos;
       at = bytes.find(module_id, at + 1)) {
    bytes.replace(at, module_id.size(), replacement);
    ++count;
  }
  return count;
}

std::string ptx_without_register_numbers(std::string_view ptx)
{
  std::string out;
  out.reserve(ptx.size());
  for (std::size_t i = 0; i < ptx.size();) {
    out.push_back(ptx[i]);
    if (ptx[i] != '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < ptx.size() && std::isalpha(static_cast<unsigned char>(ptx[j])) != 0) {
      out.push_back(ptx[j++]);
    }
    const std::size_t digits = j;
    while (j < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[j])) != 0) {
      ++j;
    }
    if (j > digits) {
      out.push_back('#');
    }
    i = j;
  }
  return out;
}

}  // namespace nvfresh

#include "digest/normalize.hpp"

#include <algorithm>
#include <cctype>

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

} // namespace

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
  for (auto at = bytes.find(module_id); at != std::string::npos; at = bytes.find(module_id, at + 1)) {
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

} // namespace nvfresh

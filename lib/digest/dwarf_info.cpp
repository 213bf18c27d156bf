#include "digest/dwarf_info.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <vector>

namespace nvfresh {

namespace {

constexpr std::uint64_t k_tag_array_type = 0x01;
constexpr std::uint64_t k_tag_typedef = 0x16;
constexpr std::uint64_t k_tag_subrange_type = 0x21;
constexpr std::uint64_t k_tag_const_type = 0x26;
constexpr std::uint64_t k_tag_variable = 0x34;
constexpr std::uint64_t k_tag_volatile_type = 0x35;
constexpr std::uint64_t k_at_name = 0x03;
constexpr std::uint64_t k_at_decl_file = 0x3a;
constexpr std::uint64_t k_at_decl_line = 0x3b;
constexpr std::uint64_t k_at_upper_bound = 0x2f;
constexpr std::uint64_t k_at_count = 0x37;
constexpr std::uint64_t k_at_type = 0x49;
constexpr std::uint64_t k_form_string = 0x08;
constexpr std::uint64_t k_form_strp = 0x0e;
constexpr std::uint64_t k_form_ref_addr = 0x10;
constexpr std::uint64_t k_form_indirect = 0x16;
constexpr std::uint64_t k_form_implicit_const = 0x21;
constexpr std::uint64_t k_form_line_strp = 0x1f;
constexpr std::uint8_t k_unit_compile = 0x01;
constexpr std::uint8_t k_unit_partial = 0x03;
constexpr std::size_t k_max_type_chain = 16;

// How the value of a form is laid out.
enum class FormLayout {
  fixed,
  address,
  offset,
  ref_addr,
  uleb,
  sleb,
  string,
  block1,
  block2,
  block4,
  block_uleb
};

struct FormRow {
  std::uint64_t form;
  FormLayout layout;
  std::size_t size;  // FormLayout::fixed only
};

constexpr std::array k_forms{
  FormRow{0x01, FormLayout::address, 0},  FormRow{0x03, FormLayout::block2, 0},
  FormRow{0x04, FormLayout::block4, 0},   FormRow{0x05, FormLayout::fixed, 2},
  FormRow{0x06, FormLayout::fixed, 4},    FormRow{0x07, FormLayout::fixed, 8},
  FormRow{0x08, FormLayout::string, 0},   FormRow{0x09, FormLayout::block_uleb, 0},
  FormRow{0x0a, FormLayout::block1, 0},   FormRow{0x0b, FormLayout::fixed, 1},
  FormRow{0x0c, FormLayout::fixed, 1},    FormRow{0x0d, FormLayout::sleb, 0},
  FormRow{0x0e, FormLayout::offset, 0},   FormRow{0x0f, FormLayout::uleb, 0},
  FormRow{0x10, FormLayout::ref_addr, 0}, FormRow{0x11, FormLayout::fixed, 1},
  FormRow{0x12, FormLayout::fixed, 2},    FormRow{0x13, FormLayout::fixed, 4},
  FormRow{0x14, FormLayout::fixed, 8},    FormRow{0x15, FormLayout::uleb, 0},
  FormRow{0x17, FormLayout::offset, 0},   FormRow{0x18, FormLayout::block_uleb, 0},
  FormRow{0x19, FormLayout::fixed, 0},    FormRow{0x1a, FormLayout::uleb, 0},
  FormRow{0x1b, FormLayout::uleb, 0},     FormRow{0x1c, FormLayout::fixed, 4},
  FormRow{0x1d, FormLayout::offset, 0},   FormRow{0x1e, FormLayout::fixed, 16},
  FormRow{0x1f, FormLayout::offset, 0},   FormRow{0x20, FormLayout::fixed, 8},
  FormRow{0x21, FormLayout::fixed, 0},    FormRow{0x22, FormLayout::uleb, 0},
  FormRow{0x23, FormLayout::uleb, 0},     FormRow{0x24, FormLayout::fixed, 8},
  FormRow{0x25, FormLayout::fixed, 1},    FormRow{0x26, FormLayout::fixed, 2},
  FormRow{0x27, FormLayout::fixed, 3},    FormRow{0x28, FormLayout::fixed, 4},
  FormRow{0x29, FormLayout::fixed, 1},    FormRow{0x2a, FormLayout::fixed, 2},
  FormRow{0x2b, FormLayout::fixed, 3},    FormRow{0x2c, FormLayout::fixed, 4},
  FormRow{0x1f01, FormLayout::uleb, 0},   FormRow{0x1f02, FormLayout::uleb, 0},
  FormRow{0x1f20, FormLayout::offset, 0}, FormRow{0x1f21, FormLayout::offset, 0}};

// Reads little-endian DWARF data; once a read would pass `end`, every later read fails.
class DwarfCursor {
public:
  DwarfCursor(std::string_view bytes, std::size_t at, std::size_t end)
    : m_bytes(bytes), m_at(at), m_end(std::min(end, bytes.size()))
  {}

  bool ok() const { return m_ok; }
  bool at_end() const { return !m_ok || m_at >= m_end; }
  std::size_t position() const { return m_at; }
  void fail() { m_ok = false; }

  void skip(std::uint64_t count)
  {
    m_ok = m_ok && m_at <= m_end && count <= m_end - m_at;
    m_at = m_ok ? m_at + static_cast<std::size_t>(count) : m_at;
  }

  std::uint64_t fixed(std::size_t size)
  {
    std::uint64_t value = 0;
    const std::size_t at = m_at;
    skip(size);
    for (std::size_t i = 0; m_ok && i < std::min<std::size_t>(size, 8); ++i) {
      value |= std::uint64_t{static_cast<std::uint8_t>(m_bytes[at + i])} << (8 * i);
    }
    return m_ok ? value : 0;
  }

  std::uint64_t uleb()
  {
    std::uint64_t value = 0;
    for (unsigned shift = 0; m_ok;) {
      const std::uint64_t byte = fixed(1);
      value |= shift < 64 ? (byte & 0x7f) << shift : 0;
      shift += 7;
      if ((byte & 0x80) == 0) {
        break;
      }
    }
    return value;
  }

  std::string_view string()
  {
    const std::size_t at = m_at;
    const std::size_t nul = m_ok ? m_bytes.find('\0', at) : std::string_view::npos;
    if (nul == std::string_view::npos || nul >= m_end) {
      m_ok = false;
      return {};
    }
    m_at = nul + 1;
    return m_bytes.substr(at, nul - at);
  }

private:
  std::string_view m_bytes;
  std::size_t m_at;
  std::size_t m_end;
  bool m_ok = true;
};

struct AttributeSpec {
  std::uint64_t name;
  std::uint64_t form;
};

struct Abbrev {
  std::uint64_t tag = 0;
  bool has_children = false;
  std::vector<AttributeSpec> attributes;
};

using AbbrevTable = std::map<std::uint64_t, Abbrev>;

struct UnitShape {
  std::size_t start = 0;  // unit header offset: the base of CU-relative references
  std::uint16_t version = 0;
  std::size_t address_size = 8;
};

// Where an attribute's value lies in .debug_info.
struct FormValue {
  std::size_t at = 0;
  std::size_t size = 0;
  FormLayout layout = FormLayout::fixed;
  std::uint64_t number = 0;
  std::string_view text;
};

struct Die {
  std::uint64_t tag = 0;
  std::uint64_t unit = 0;
  std::uint64_t parent = 0;
  std::optional<std::uint64_t> decl_file;
  std::optional<FormValue> decl_line;
  std::optional<std::uint64_t> type;
  std::string name;
  std::vector<FormValue> bounds;
};

AbbrevTable read_abbrevs(std::string_view abbrev_bytes, std::uint64_t offset)
{
  AbbrevTable table;
  DwarfCursor cursor(abbrev_bytes, 0, abbrev_bytes.size());
  cursor.skip(offset);
  for (std::uint64_t code = cursor.uleb(); cursor.ok() && code != 0; code = cursor.uleb()) {
    Abbrev& abbrev = table[code];
    abbrev.tag = cursor.uleb();
    abbrev.has_children = cursor.fixed(1) != 0;
    for (AttributeSpec spec{cursor.uleb(), cursor.uleb()};
         cursor.ok() && (spec.name != 0 || spec.form != 0);
         spec = AttributeSpec{cursor.uleb(), cursor.uleb()}) {
      if (spec.form == k_form_implicit_const) {
        cursor.uleb();  // the constant (SLEB128: same length rules)
      }
      abbrev.attributes.push_back(spec);
    }
  }
  return table;
}

std::optional<FormRow> form_row(std::uint64_t form)
{
  const auto found = std::find_if(k_forms.begin(), k_forms.end(),
                                  [&](const FormRow& row) { return row.form == form; });
  return found == k_forms.end() ? std::nullopt : std::optional<FormRow>(*found);
}

std::size_t fixed_size(const FormRow& row, const UnitShape& unit)
{
  switch (row.layout) {
  case FormLayout::address: return unit.address_size;
  case FormLayout::offset: return 4;
  case FormLayout::ref_addr: return unit.version <= 2 ? unit.address_size : 4;
  default: return row.size;
  }
}

// Reads one attribute value of `form`; fails the cursor on a form it does not know.
FormValue read_value(DwarfCursor& cursor, std::uint64_t form, const UnitShape& unit)
{
  while (form == k_form_indirect && cursor.ok()) {
    form = cursor.uleb();
  }
  const std::optional<FormRow> row = form_row(form);
  if (!row) {
    cursor.fail();
    return {};
  }
  FormValue value;
  value.at = cursor.position();
  value.layout = row->layout;
  switch (row->layout) {
  case FormLayout::uleb:
  case FormLayout::sleb: value.number = cursor.uleb(); break;
  case FormLayout::string: value.text = cursor.string(); break;
  case FormLayout::block1: cursor.skip(cursor.fixed(1)); break;
  case FormLayout::block2: cursor.skip(cursor.fixed(2)); break;
  case FormLayout::block4: cursor.skip(cursor.fixed(4)); break;
  case FormLayout::block_uleb: cursor.skip(cursor.uleb()); break;
  default:
    value.number = cursor.fixed(fixed_size(*row, unit));
    value.layout = FormLayout::fixed;
    break;
  }
  value.size = cursor.position() - value.at;
  return value;
}

bool is_reference(std::uint64_t form)
{
  return (form >= 0x11 && form <= 0x15) || form == k_form_ref_addr;
}

bool is_constant(const FormValue& value)
{
  return (value.layout == FormLayout::fixed && value.size <= 8) ||
         value.layout == FormLayout::uleb || value.layout == FormLayout::sleb;
}

std::uint64_t relocated(const DebugInfoRelocations& relocations, const FormValue& value)
{
  const auto found = relocations.addends.find(value.at);
  return found != relocations.addends.end() ? found->second : value.number;
}

void record_attribute(Die& die, const AttributeSpec& spec, const FormValue& value,
                      const UnitShape& unit, const DebugInfoRelocations& relocations)
{
  if (spec.name == k_at_name && spec.form == k_form_string) {
    die.name = std::string(value.text);
  } else if (spec.name == k_at_name &&
             (spec.form == k_form_strp || spec.form == k_form_line_strp)) {
    const auto found = relocations.strings.find(value.at);
    die.name = found != relocations.strings.end() ? found->second : std::string();
  } else if (spec.name == k_at_type && is_reference(spec.form)) {
    die.type = relocated(relocations, value) + (spec.form == k_form_ref_addr ? 0 : unit.start);
  } else if (spec.name == k_at_decl_file && is_constant(value)) {
    die.decl_file = value.number;
  } else if (spec.name == k_at_decl_line && is_constant(value)) {
    die.decl_line = value;
  } else if ((spec.name == k_at_upper_bound || spec.name == k_at_count) && is_constant(value)) {
    die.bounds.push_back(value);
  }
}

// Parses the DIEs of one unit into `dies` (by offset); stops at the first thing it cannot parse.
void read_unit_dies(DwarfCursor& cursor, const UnitShape& unit, const AbbrevTable& abbrevs,
                    const DebugInfoRelocations& relocations, std::map<std::uint64_t, Die>& dies)
{
  std::vector<std::uint64_t> parents{0};
  while (!cursor.at_end()) {
    const std::uint64_t offset = cursor.position();
    const std::uint64_t code = cursor.uleb();
    if (code == 0) {
      if (parents.size() > 1) {
        parents.pop_back();
      }
      continue;
    }
    const auto abbrev = abbrevs.find(code);
    if (abbrev == abbrevs.end()) {
      return;
    }
    Die& die = dies[offset];
    die.tag = abbrev->second.tag;
    die.unit = unit.start;
    die.parent = parents.back();
    for (const AttributeSpec& spec : abbrev->second.attributes) {
      record_attribute(die, spec, read_value(cursor, spec.form, unit), unit, relocations);
    }
    if (abbrev->second.has_children) {
      parents.push_back(offset);
    }
  }
}

// Reads one unit header at `start`; returns the offset of the next unit, or nothing to stop.
std::optional<std::size_t> read_unit(std::string_view info, std::size_t start,
                                     std::string_view abbrev_bytes,
                                     const DebugInfoRelocations& relocations,
                                     std::map<std::uint64_t, Die>& dies)
{
  DwarfCursor header(info, start, info.size());
  const std::uint64_t length = header.fixed(4);
  if (!header.ok() || length >= 0xFFFFFFF0u || length > info.size() - start - 4) {
    return std::nullopt;  // 64-bit DWARF or a broken length
  }
  const std::size_t end = start + 4 + static_cast<std::size_t>(length);
  UnitShape unit;
  unit.start = start;
  unit.version = static_cast<std::uint16_t>(header.fixed(2));
  std::uint8_t unit_type = k_unit_compile;
  FormValue abbrev_offset;
  if (unit.version >= 5) {
    unit_type = static_cast<std::uint8_t>(header.fixed(1));
    unit.address_size = header.fixed(1);
    abbrev_offset = FormValue{header.position(), 4, FormLayout::fixed, header.fixed(4), {}};
  } else {
    abbrev_offset = FormValue{header.position(), 4, FormLayout::fixed, header.fixed(4), {}};
    unit.address_size = header.fixed(1);
  }
  const bool readable = header.ok() && unit.version >= 2 && unit.version <= 5 &&
                        (unit_type == k_unit_compile || unit_type == k_unit_partial);
  if (readable) {
    const AbbrevTable abbrevs = read_abbrevs(abbrev_bytes, relocated(relocations, abbrev_offset));
    DwarfCursor cursor(info, header.position(), end);
    read_unit_dies(cursor, unit, abbrevs, relocations, dies);
  }
  return end;
}

// The array type `type` names, through const, volatile and typedef; nothing when it is not one.
std::optional<std::uint64_t> array_type_of(const std::map<std::uint64_t, Die>& dies,
                                           std::optional<std::uint64_t> type)
{
  for (std::size_t step = 0; type && step < k_max_type_chain; ++step) {
    const auto found = dies.find(*type);
    if (found == dies.end()) {
      return std::nullopt;
    }
    const std::uint64_t tag = found->second.tag;
    if (tag == k_tag_array_type) {
      return type;
    }
    const bool qualifier =
      tag == k_tag_const_type || tag == k_tag_volatile_type || tag == k_tag_typedef;
    type = qualifier ? found->second.type : std::nullopt;
  }
  return std::nullopt;
}

// Overwrites one constant with a zero of the same length (LEB128: 0x80 continuation bytes, then 0x00).
void zero_value(std::string& bytes, const FormValue& value)
{
  const bool leb = value.layout != FormLayout::fixed;
  for (std::size_t i = 0; i < value.size; ++i) {
    const bool last = i + 1 == value.size;
    bytes[value.at + i] = static_cast<char>(leb && !last ? 0x80 : 0x00);
  }
}

std::size_t zero_subrange_bounds(std::string& debug_info, const std::map<std::uint64_t, Die>& dies,
                                 std::uint64_t array)
{
  std::size_t count = 0;
  for (const auto& [offset, die] : dies) {
    if (die.parent != array || die.tag != k_tag_subrange_type) {
      continue;
    }
    for (const FormValue& bound : die.bounds) {
      zero_value(debug_info, bound);
      ++count;
    }
  }
  return count;
}

// Zeroes the declaration line of every DIE declared in the same file as `variable_die`.
std::size_t zero_decl_lines(std::string& debug_info, const std::map<std::uint64_t, Die>& dies,
                            const Die& variable_die)
{
  std::size_t count = 0;
  for (const auto& [offset, die] : dies) {
    if (variable_die.decl_file && die.unit == variable_die.unit &&
        die.decl_file == variable_die.decl_file && die.decl_line) {
      zero_value(debug_info, *die.decl_line);
      ++count;
    }
  }
  return count;
}

std::map<std::uint64_t, Die> read_dies(std::string_view debug_info, std::string_view debug_abbrev,
                                       const DebugInfoRelocations& relocations)
{
  std::map<std::uint64_t, Die> dies;
  for (std::optional<std::size_t> unit = 0; unit && *unit + 4 <= debug_info.size();) {
    unit = read_unit(debug_info, *unit, debug_abbrev, relocations, dies);
  }
  return dies;
}

}  // namespace

std::size_t normalize_generated_declaration(std::string& debug_info, std::string_view debug_abbrev,
                                            const DebugInfoRelocations& relocations,
                                            std::string_view variable)
{
  const std::map<std::uint64_t, Die> dies = read_dies(debug_info, debug_abbrev, relocations);
  std::set<std::uint64_t> arrays;
  std::size_t count = 0;
  for (const auto& [offset, die] : dies) {
    if (die.tag != k_tag_variable || die.name != variable) {
      continue;
    }
    count += zero_decl_lines(debug_info, dies, die);
    if (const auto array = array_type_of(dies, die.type)) {
      arrays.insert(*array);
    }
  }
  for (const std::uint64_t array : arrays) {
    count += zero_subrange_bounds(debug_info, dies, array);
  }
  return count;
}

}  // namespace nvfresh

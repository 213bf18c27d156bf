#include "cache/line_layout.hpp"

#include "cache/front_end_builtins.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

namespace nvfresh {

namespace {

constexpr std::string_view k_table_magic = "nvfresh-lines 1";
constexpr std::string_view k_local_variable = "__cuda_local_var_";
// The largest line number a marker may give (larger: not a marker), and the largest number a
// stored table may hold (a marker's line plus every line of an input after it fits).
constexpr std::uint64_t k_most_lines = std::uint64_t{1} << 32U;
constexpr std::uint64_t k_most_in_table = std::uint64_t{1} << 40U;

// A line marker: `# <line> "<file>"[ <flag>]*` (the preprocessor's) or `#line <line> "<file>"`.
struct Marker {
  std::uint64_t line = 0;
  std::string_view file;       // between the quotes, escapes as written
  bool include_event = false;  // flag 1 (entering a header) or 2 (back from one)
  unsigned state = 0;          // flags 3 (system header) and 4 (extern "C"), one bit each
  size_t number_at = 0;        // where the line number's digits are in the line
  size_t number_size = 0;
};

bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}

// The number at `at` (digits, no leading zero), or nullopt; `at` moves past its digits.
std::optional<std::uint64_t> read_number(std::string_view text, size_t& at)
{
  const size_t begin = at;
  while (at < text.size() && is_digit(text[at])) {
    ++at;
  }
  std::uint64_t value = 0;
  if (at == begin || at - begin > 15 || (text[begin] == '0' && at - begin > 1) ||
      !parse_number(text.substr(begin, at - begin), value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<Marker> parse_marker(std::string_view line)
{
  size_t at = 0;
  if (line.starts_with("# ")) {
    at = 2;
  } else if (line.starts_with("#line ")) {
    at = 6;
  } else {
    return std::nullopt;
  }
  Marker marker;
  marker.number_at = at;
  auto number = read_number(line, at);
  if (!number || *number > k_most_lines || line.substr(at, 2) != " \"") {
    return std::nullopt;
  }
  marker.line = *number;
  marker.number_size = at - marker.number_at;
  at += 2;
  const size_t file_begin = at;
  while (at < line.size() && line[at] != '"') {
    at += line[at] == '\\' ? 2 : 1;
  }
  if (at >= line.size()) {
    return std::nullopt;
  }
  marker.file = line.substr(file_begin, at - file_begin);
  ++at;
  const bool directive = line[1] == 'l';
  while (at < line.size()) {
    if (directive || at + 1 >= line.size() || line[at] != ' ' || !is_digit(line[at + 1]) ||
        (at + 2 < line.size() && line[at + 2] != ' ')) {
      return std::nullopt;
    }
    const char flag = line[at + 1];
    if (flag == '1' || flag == '2') {
      marker.include_event = true;
    } else if (flag == '3' || flag == '4') {
      marker.state |= 1U << (flag - '3');
    } else {
      return std::nullopt;
    }
    at += 2;
  }
  return marker;
}

// A line that starts like a marker but is not one this file reads (`# 12` without a file).
bool looks_like_marker(std::string_view line)
{
  const size_t at = line.starts_with("# ") ? 2 : line.starts_with("#line ") ? 6 : 0;
  return at != 0 && at < line.size() && is_digit(line[at]);
}

// Calls `each(line)` for every line of `text` (the last one even without its newline).
template <typename Each>
void for_each_text_line(std::string_view text, Each&& each)
{
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    each(text.substr(at, end - at));
    at = end + 1;
  }
}

// Calls `each(digits_at, digits_end, number)` for every local variable's name on `line`: where the
// digits after its prefix are (none: digits_at == digits_end), and their number, nullopt where none
// or one read_number does not read. collect_wanted and rewritten both walk names with it, so they
// agree on which names there are.
template <typename Each>
void for_each_local_variable(std::string_view line, Each&& each)
{
  for (size_t at = line.find(k_local_variable); at != std::string_view::npos;
       at = line.find(k_local_variable, at)) {
    at += k_local_variable.size();
    const size_t digits_at = at;
    const auto number = read_number(line, at);
    each(digits_at, at, number);
  }
}

bool refuse(std::string* why, std::string reason)
{
  if (why != nullptr) {
    *why = std::move(reason);
  }
  return false;
}

// A marker's (file, line), the key of what move_lines looks up for it.
struct Position {
  std::uint32_t file = 0;
  std::uint64_t line = 0;
  auto operator<=>(const Position&) const = default;
};

constexpr std::int64_t k_not_found = -1;
constexpr std::int64_t k_ambiguous = -2;

// What an output names: each marker's position and each local variable's input line, with the new
// number once the tables are walked.
struct Wanted {
  std::unordered_map<std::string_view, std::uint32_t> file_index;  // from.files
  std::map<Position, std::int64_t> positions;
  std::map<std::uint64_t, std::int64_t> input_lines;
};

bool collect_wanted(std::string_view output, const LineTable& from, Wanted& wanted,
                    std::string* why)
{
  for (std::uint32_t i = 0; i < from.files.size(); ++i) {
    wanted.file_index.emplace(from.files[i], i);
  }
  bool known = true;
  for_each_text_line(output, [&](std::string_view line) {
    if (!known) {
      return;
    }
    if (auto marker = parse_marker(line)) {
      auto file = wanted.file_index.find(marker->file);
      if (file != wanted.file_index.end()) {
        wanted.positions.emplace(Position{file->second, marker->line}, k_not_found);
      } else if (marker->line != 1) {
        known = refuse(why, fmt::format("a marker names line {} of \"{}\", a file the input does "
                                        "not mark",
                                        marker->line, marker->file));
      }
      return;  // a marker holds no code, so no local variable: its file name is kept as written
    }
    if (looks_like_marker(line)) {
      known = refuse(why, fmt::format("a marker this reader does not know: {}", line));
      return;
    }
    for_each_local_variable(
      line, [&](size_t digits_at, size_t digits_end, std::optional<std::uint64_t> input_line) {
        if (input_line) {
          wanted.input_lines.emplace(*input_line, k_not_found);
        } else if (known && digits_end > digits_at) {
          known = refuse(why, "a local variable's name holds a number this reader does not know");
        }
      });
  });
  return known;
}

// Gives each answer in [begin, end) its key's number moved by `shift`, or marks it ambiguous where
// another code line gave it another.
template <typename Answers, typename Key, typename LineOf>
void settle(Answers& answers, const Key& begin, const Key& end, std::int64_t shift, LineOf line_of)
{
  for (auto answer = answers.lower_bound(begin); answer != answers.end() && answer->first < end;
       ++answer) {
    const std::int64_t moved = static_cast<std::int64_t>(line_of(answer->first)) + shift;
    if (answer->second == k_not_found || answer->second == moved) {
      answer->second = moved;
    } else {
      answer->second = k_ambiguous;
    }
  }
}

std::int64_t shift_between(std::uint64_t from, std::uint64_t to)
{
  return static_cast<std::int64_t>(to) - static_cast<std::int64_t>(from);
}

// Walks both tables a stretch of code lines at a time (lines that follow each other in both),
// answering what `wanted` asks.
bool walk_tables(const LineTable& from, const LineTable& to, Wanted& wanted, std::string* why)
{
  if (from.code_lines() != to.code_lines()) {
    return refuse(why, "the tables are of different code");
  }
  size_t to_run = 0;
  std::uint64_t to_offset = 0;
  for (const LineRun& run : from.runs) {
    std::uint64_t offset = 0;
    while (offset < run.count) {
      while (to_run < to.runs.size() && to.runs[to_run].count == to_offset) {
        ++to_run;
        to_offset = 0;
      }
      if (to_run == to.runs.size()) {
        return refuse(why, "the tables are of different code");
      }
      const LineRun& other = to.runs[to_run];
      if (from.files[run.file] != to.files[other.file]) {
        return refuse(why, fmt::format("a code line of \"{}\" is in \"{}\" now",
                                       from.files[run.file], to.files[other.file]));
      }
      const std::uint64_t count = std::min(run.count - offset, other.count - to_offset);
      const std::uint64_t line = run.line + offset;
      settle(wanted.positions, Position{run.file, line}, Position{run.file, line + count},
             shift_between(line, other.line + to_offset),
             [](const Position& position) { return position.line; });
      const std::uint64_t input_line = run.input_line + offset;
      settle(wanted.input_lines, input_line, input_line + count,
             shift_between(input_line, other.input_line + to_offset),
             [](std::uint64_t input) { return input; });
      offset += count;
      to_offset += count;
    }
  }
  return true;
}

// Whether `table` has a code line of `file` at `line`.
bool has_code_at(const LineTable& table, std::string_view file, std::uint64_t line)
{
  return std::any_of(table.runs.begin(), table.runs.end(), [&](const LineRun& run) {
    return table.files[run.file] == file && run.line <= line && line - run.line < run.count;
  });
}

bool all_answered(Wanted& wanted, const LineTable& from, const LineTable& to, std::string* why)
{
  for (auto& [position, answer] : wanted.positions) {
    const std::uint64_t line = position.line;
    const bool start_without_code = line == 1 && answer == k_not_found;
    if (start_without_code && !has_code_at(to, from.files[position.file], 1)) {
      answer = 1;  // a file's start, where no code line is, in both tables
    } else if (start_without_code) {
      return refuse(why, "a marker names line 1, where only the new input has code");
    } else if (answer == k_not_found) {
      return refuse(why, fmt::format("a marker names line {}, where the input has no code", line));
    } else if (answer == k_ambiguous) {
      return refuse(why, fmt::format("a marker names line {}, whose code lines moved apart", line));
    } else if (line == 1 && answer != 1) {
      // cicc marks a file's start as line 1 too: the start stays, the code line moves.
      return refuse(why, fmt::format("a marker names line 1 of \"{}\", its start or its first "
                                     "code line, which moved to line {}: no one can tell which",
                                     from.files[position.file], answer));
    }
  }
  for (const auto& [line, answer] : wanted.input_lines) {
    if (answer < 0) {
      return refuse(why,
                    fmt::format("a local variable names input line {}, which holds no code", line));
    }
  }
  return true;
}

std::string rewritten(std::string_view output, const Wanted& wanted)
{
  std::string result;
  result.reserve(output.size() + output.size() / 64);
  for_each_text_line(output, [&](std::string_view line) {
    size_t copied = 0;
    if (auto marker = parse_marker(line)) {
      if (auto file = wanted.file_index.find(marker->file); file != wanted.file_index.end()) {
        const auto moved = wanted.positions.at(Position{file->second, marker->line});
        result += line.substr(0, marker->number_at);
        result += std::to_string(moved);
        copied = marker->number_at + marker->number_size;
      }
    } else {
      for_each_local_variable(
        line, [&](size_t digits_at, size_t digits_end, std::optional<std::uint64_t> input_line) {
          if (input_line) {
            result += line.substr(copied, digits_at - copied);
            result += std::to_string(wanted.input_lines.at(*input_line));
            copied = digits_end;
          }
        });
    }
    result += line.substr(copied);
    result += '\n';
  });
  if (!output.empty() && output.back() != '\n') {
    result.pop_back();
  }
  return result;
}

// Why a code line of cicc's input may reach its outputs with its position other than through
// markers and local variables' names; "" when it cannot.
std::string code_line_refusal(std::string_view row)
{
  if (const std::string_view builtin = builtin_reading_position(row); !builtin.empty()) {
    return fmt::format("its code calls {}, which may read the line it is written at", builtin);
  }
  if (row.find(k_local_variable) != std::string_view::npos) {
    return fmt::format("its code spells {} itself, a name cicc gives local variables",
                       k_local_variable);
  }
  return {};
}

}  // namespace

std::uint64_t LineTable::code_lines() const
{
  std::uint64_t total = 0;
  for (const auto& run : runs) {
    total += run.count;
  }
  return total;
}

std::optional<LineLayout> split_line_layout(std::string_view preprocessed, std::string* why)
{
  if (preprocessed.find("R\"") != std::string_view::npos) {
    refuse(why, "it holds a raw string literal, where a blank line is code");
    return std::nullopt;
  }
  std::string refusal;
  LineLayout layout;
  layout.code.reserve(preprocessed.size() + preprocessed.size() / 32);
  std::unordered_map<std::string_view, std::uint32_t> file_index;
  auto index_of = [&](std::string_view file) {
    auto [known, added] =
      file_index.emplace(file, static_cast<std::uint32_t>(layout.table.files.size()));
    if (added) {
      layout.table.files.emplace_back(file);
    }
    return known->second;
  };
  std::uint32_t file = index_of("");
  unsigned state = 0;
  std::uint64_t line = 1;
  std::uint64_t input_line = 0;
  for_each_text_line(preprocessed, [&](std::string_view row) {
    ++input_line;
    if (auto marker = parse_marker(row)) {
      const std::uint32_t marked = index_of(marker->file);
      if (marker->include_event || marked != file || marker->state != state) {
        layout.code += 'm';
        layout.code += row.substr(marker->number_at + marker->number_size);
        layout.code += '\n';
      }
      file = marked;
      state = marker->state;
      line = marker->line;
      return;
    }
    if (!row.empty()) {
      if (refusal.empty()) {
        refusal = code_line_refusal(row);
      }
      layout.code += 'c';
      layout.code += row;
      layout.code += '\n';
      auto& runs = layout.table.runs;
      if (!runs.empty() && runs.back().file == file &&
          runs.back().line + runs.back().count == line &&
          runs.back().input_line + runs.back().count == input_line) {
        ++runs.back().count;
      } else {
        runs.push_back({1, file, line, input_line});
      }
    }
    ++line;
  });
  if (!refusal.empty()) {
    refuse(why, std::move(refusal));
    return std::nullopt;
  }
  if (!preprocessed.empty() && preprocessed.back() != '\n') {
    layout.code += "n\n";  // no newline at the end
  }
  return layout;
}

std::string serialize_line_table(const LineTable& table)
{
  std::string text = fmt::format("{}\nfiles {}\n", k_table_magic, table.files.size());
  for (const auto& file : table.files) {
    text += file;
    text += '\n';
  }
  text += fmt::format("runs {}\n", table.runs.size());
  for (const auto& run : table.runs) {
    text += fmt::format("{} {} {} {}\n", run.count, run.file, run.line, run.input_line);
  }
  return text;
}

std::optional<LineTable> parse_line_table(std::string_view text)
{
  auto next_line = [&text]() -> std::optional<std::string_view> {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    return line;
  };
  auto counted = [&](std::string_view word) -> std::optional<std::uint64_t> {
    auto line = next_line();
    std::uint64_t count = 0;
    if (!line || !line->starts_with(word) || !parse_number(line->substr(word.size()), count) ||
        count > text.size()) {
      return std::nullopt;
    }
    return count;
  };
  if (next_line() != k_table_magic) {
    return std::nullopt;
  }
  LineTable table;
  const auto files = counted("files ");
  if (!files || *files > std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < *files; ++i) {
    auto file = next_line();
    if (!file) {
      return std::nullopt;
    }
    table.files.emplace_back(*file);
  }
  const auto runs = counted("runs ");
  if (!runs) {
    return std::nullopt;
  }
  table.runs.reserve(*runs);
  for (std::uint64_t i = 0; i < *runs; ++i) {
    auto line = next_line();
    if (!line) {
      return std::nullopt;
    }
    LineRun run;
    std::string_view rest = *line;
    auto word = [&rest]() {
      const size_t space = rest.find(' ');
      std::string_view first = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      return first;
    };
    if (!parse_number(word(), run.count) || !parse_number(word(), run.file) ||
        !parse_number(word(), run.line) || !parse_number(word(), run.input_line) || !rest.empty() ||
        run.count == 0 || run.count > k_most_in_table || run.line > k_most_in_table ||
        run.input_line > k_most_in_table || run.file >= table.files.size()) {
      return std::nullopt;
    }
    table.runs.push_back(run);
  }
  if (!text.empty()) {
    return std::nullopt;
  }
  return table;
}

std::optional<std::string> move_lines(std::string_view output, const LineTable& from,
                                      const LineTable& to, std::string* why)
{
  Wanted wanted;
  if (!collect_wanted(output, from, wanted, why)) {
    return std::nullopt;
  }
  if (wanted.positions.empty() && wanted.input_lines.empty()) {
    return std::string(output);
  }
  if (!walk_tables(from, to, wanted, why) || !all_answered(wanted, from, to, why)) {
    return std::nullopt;
  }
  return rewritten(output, wanted);
}

}  // namespace nvfresh

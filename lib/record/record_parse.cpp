// Reads a record's text, head and note (the grammar: record_format.hpp).
#include "record/record.hpp"

#include "record/record_format.hpp"
#include "util/line_file.hpp"
#include "util/parallel.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <iterator>
#include <limits>
#include <type_traits>
#include <unordered_map>

namespace nvfresh {

using record_format::k_head_magic;
using record_format::k_magic;
using record_format::k_note_magic;
using record_format::k_role_names;

std::optional<RecordHead> parse_record_head(std::string_view text)
{
  auto lines = read_line_file(text, k_head_magic, 1);
  if (!lines || lines->size() != 2 || (*lines)[0].size() != 2 || (*lines)[0][0] != "object" ||
      (*lines)[1].size() != 2 || (*lines)[1][0] != "source") {
    return std::nullopt;
  }
  return RecordHead{(*lines)[0][1], (*lines)[1][1]};
}

namespace {

using Fields = std::vector<std::string>;

struct ParseError {
  std::string message;
};

// Up to 19 decimal digits fit an unsigned 64-bit sum: summed without an overflow check per digit
// (a signed value is range-checked once at the end). A record's 1061 input lines hold four such
// numbers each (times in ns have 19 digits), and std::from_chars was 6% of a skip's instructions.
constexpr size_t k_digits_without_overflow = 19;

template <typename Number>
Number to_number(std::string_view text)
{
  static_assert(std::is_integral_v<Number> && sizeof(Number) == sizeof(std::uint64_t));
  const bool negative = std::is_signed_v<Number> && !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (!digits.empty() && digits.size() <= k_digits_without_overflow) {
    std::uint64_t sum = 0;
    size_t i = 0;
    for (; i < digits.size(); ++i) {
      const auto digit = static_cast<unsigned>(static_cast<unsigned char>(digits[i]) - '0');
      if (digit > 9) {
        break;
      }
      sum = sum * 10 + digit;
    }
    constexpr auto k_max = static_cast<std::uint64_t>(std::numeric_limits<Number>::max());
    if (i == digits.size() && sum <= k_max) {
      return negative ? static_cast<Number>(-static_cast<Number>(sum)) : static_cast<Number>(sum);
    }
  }
  Number value{};  // longer, the most negative, or no digits: from_chars decides
  if (!parse_number(text, value)) {
    throw ParseError{fmt::format("'{}' is not a number", text)};
  }
  return value;
}

Digest to_digest(const std::string& text)
{
  auto digest = Digest::from_hex(text);
  if (!digest) {
    throw ParseError{fmt::format("'{}' is not a digest", text)};
  }
  return *digest;
}

void expect_fields(const Fields& fields, size_t count)
{
  if (fields.size() != count + 1) {
    throw ParseError{
      fmt::format("'{}' has {} fields, expected {}", fields[0], fields.size() - 1, count)};
  }
}

FileFingerprint to_fingerprint(const Fields& f, size_t first)
{
  FileFingerprint file;
  file.hash = to_digest(f[first]);
  file.size = to_number<std::uint64_t>(f[first + 1]);
  file.mtime_ns = to_number<std::int64_t>(f[first + 2]);
  file.ctime_ns = to_number<std::int64_t>(f[first + 3]);
  file.inode = to_number<std::uint64_t>(f[first + 4]);
  file.path = f.back();
  return file;
}

InputRole to_role(const std::string& name)
{
  if (auto role = role_from_name(name)) {
    return *role;
  }
  throw ParseError{fmt::format("unknown input role '{}'", name)};
}

InputRole to_role_view(std::string_view name)
{
  for (const auto& entry : k_role_names) {
    if (entry.name == name) {
      return entry.role;
    }
  }
  throw ParseError{fmt::format("unknown input role '{}'", name)};
}

RecordedInput to_input(const Fields& f)
{
  expect_fields(f, 8);
  RecordedInput input;
  input.role = to_role(f[1]);
  input.file = to_fingerprint(f, 2);
  input.passes = split_passes(f[7]);
  return input;
}

using LineHandler = std::function<void(const Fields&, Record&)>;

void set_string(const Fields& f, std::string& target)
{
  expect_fields(f, 1);
  target = f[1];
}

const std::unordered_map<std::string, LineHandler>& line_handlers()
{
  static const std::unordered_map<std::string, LineHandler> handlers = {
    {"object", [](const Fields& f, Record& r) { set_string(f, r.object); }},
    {"source", [](const Fields& f, Record& r) { set_string(f, r.source); }},
    {"cwd", [](const Fields& f, Record& r) { set_string(f, r.working_dir); }},
    {"compiler", [](const Fields& f, Record& r) { set_string(f, r.compiler); }},
    {"nvcc_version", [](const Fields& f, Record& r) { set_string(f, r.nvcc_version); }},
    {"launcher",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.launcher_prefix.push_back(f[1]);
     }},
    {"arg",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.signature_args.push_back(f[1]);
     }},
    {"env",
     [](const Fields& f, Record& r) {
       expect_fields(f, 2);
       r.env[f[1]] = f[2];
     }},
    {"signature",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.signature = to_digest(f[1]);
     }},
    {"cache_entry",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.cache_entry = to_digest(f[1]);
     }},
    {"inputs_from",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.inputs_from_trace = f[1] == "trace";
     }},
    {"input", [](const Fields& f, Record& r) { r.inputs.push_back(to_input(f)); }},
    {"probe_dir",
     [](const Fields& f, Record& r) {
       expect_fields(f, 5);
       r.probe_dirs.push_back({f[5], to_number<std::uint64_t>(f[1]), to_number<std::uint64_t>(f[2]),
                               to_number<std::int64_t>(f[3]), to_number<std::int64_t>(f[4])});
     }},
    {"component",
     [](const Fields& f, Record& r) {
       expect_fields(f, 2);
       r.components[f[1]] = to_digest(f[2]);
     }},
    {"dep",
     [](const Fields& f, Record& r) {
       expect_fields(f, 1);
       r.depfile_prerequisites.push_back(f[1]);
     }},
    {"console",
     [](const Fields& f, Record& r) {
       expect_fields(f, 3);
       r.console_mode = f[1];
       r.console_out = f[2];
       r.console_err = f[3];
     }},
    {"console_terminals", [](const Fields& f, Record& r) { set_string(f, r.console_terminals); }},
    {"console_terminal_env",
     [](const Fields& f, Record& r) {
       expect_fields(f, 2);
       r.console_terminal_env[f[1]] = f[2];
     }},
    {"output",
     [](const Fields& f, Record& r) {
       expect_fields(f, 6);
       r.output = to_fingerprint(f, 1);
     }},
    {"depfile",
     [](const Fields& f, Record& r) {
       expect_fields(f, 3);
       r.depfile_phony = f[1] == "1";
       r.depfile_path = f[2];
       r.depfile_target = f[3];
     }},
    {"times",
     [](const Fields& f, Record& r) {
       expect_fields(f, 2);
       r.start_ns = to_number<std::int64_t>(f[1]);
       r.end_ns = to_number<std::int64_t>(f[2]);
     }},
    {"pass_time",
     [](const Fields& f, Record& r) {
       expect_fields(f, 5);
       r.pass_times.push_back(
         {f[1], f[2], to_number<std::int64_t>(f[3]), to_number<std::int64_t>(f[4]), f[5] == "1"});
     }},
    {"trusted",
     [](const Fields& f, Record& r) {
       expect_fields(f, 2);
       r.trusted = f[1] == "1";
       r.untrusted_reason = f[2];
     }},
    {"mtime_dependent", [](const Fields& f, Record& r) { set_string(f, r.mtime_dependent); }},
    {"history",
     [](const Fields& f, Record& r) {
       expect_fields(f, 3);
       r.history.push_back({to_number<std::int64_t>(f[1]), f[2], f[3]});
     }},
  };
  return handlers;
}

Fields split_line(std::string_view line)
{
  auto fields = split_fields(line);
  if (!fields) {
    throw ParseError{"bad escape sequence"};
  }
  return std::move(*fields);
}

bool readable_version(std::string_view field)
{
  int version = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), version);
  return error == std::errc() && end == field.data() + field.size() &&
         version >= k_oldest_readable_record_format_version && version <= k_record_format_version;
}

// Checks header, version and checksum; returns the body (the lines between header and checksum).
std::string_view verified_body(std::string_view text)
{
  size_t header_end = text.find('\n');
  if (header_end == std::string_view::npos || text.substr(0, k_magic.size()) != k_magic) {
    throw ParseError{"not an nvfresh record"};
  }
  auto header = split_line(text.substr(0, header_end));
  if (header.size() != 2 || !readable_version(header[1])) {
    throw ParseError{fmt::format("format version {}, expected {} to {}",
                                 header.size() > 1 ? header[1] : "?",
                                 k_oldest_readable_record_format_version, k_record_format_version)};
  }
  if (text.empty() || text.back() != '\n') {
    throw ParseError{"truncated (no final newline)"};
  }
  size_t checksum_start = text.rfind('\n', text.size() - 2) + 1;
  auto checksum = split_line(text.substr(checksum_start, text.size() - 1 - checksum_start));
  if (checksum.size() != 2 || checksum[0] != "checksum") {
    throw ParseError{"truncated (no checksum line)"};
  }
  if (hash_bytes(text.substr(0, checksum_start)).to_hex() != checksum[1]) {
    throw ParseError{"checksum mismatch (the record was modified or torn)"};
  }
  return text.substr(header_end + 1, checksum_start - header_end - 1);
}

// The hot path: a big tree has millions of input lines. Parsed from views, one allocation per
// line (the path), same grammar and checks as the generic path.
std::string view_field(std::string_view text)
{
  if (text.find('\\') == std::string_view::npos) {
    return std::string(text);  // nothing escaped: the copy, without unescape_field's optional
  }
  auto plain = unescape_field(text);
  if (!plain) {
    throw ParseError{"bad escape sequence"};
  }
  return std::move(*plain);
}

// split_passes for a field with nothing escaped, without a copy of it first.
std::vector<std::string> split_passes_view(std::string_view text)
{
  std::vector<std::string> passes;
  if (text == "-") {
    return passes;
  }
  passes.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1);
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = std::min(text.find(',', begin), text.size());
    passes.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return passes;
}

RecordedInput parse_input_line(std::string_view line)
{
  constexpr size_t k_fields = 9;  // "input" role hash size mtime ctime inode passes path
  std::array<std::string_view, k_fields> f;
  for (size_t i = 0; i < k_fields; ++i) {
    size_t tab = i + 1 < k_fields ? line.find('\t') : std::string_view::npos;
    if (i + 1 < k_fields && tab == std::string_view::npos) {
      throw ParseError{"'input' has too few fields"};
    }
    f[i] = line.substr(0, tab);
    line = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
  }
  if (f[8].find('\t') != std::string_view::npos) {
    throw ParseError{"'input' has too many fields"};
  }
  RecordedInput input;
  input.role = to_role_view(f[1]);
  auto hash = Digest::from_hex(f[2]);
  if (!hash) {
    throw ParseError{fmt::format("'{}' is not a digest", f[2])};
  }
  input.file.hash = *hash;
  input.file.size = to_number<std::uint64_t>(f[3]);
  input.file.mtime_ns = to_number<std::int64_t>(f[4]);
  input.file.ctime_ns = to_number<std::int64_t>(f[5]);
  input.file.inode = to_number<std::uint64_t>(f[6]);
  input.passes = f[7].find('\\') == std::string_view::npos ? split_passes_view(f[7])
                                                           : split_passes(view_field(f[7]));
  input.file.path = view_field(f[8]);
  return input;
}

// A "probes" line, from views: a CUTLASS TU's record has hundreds, with thousands of names.
ProbeGroup parse_probes_line(std::string_view line)
{
  ProbeGroup group;
  std::string_view rest = line.substr(line.find('\t') + 1);  // past the key
  bool more = true;                                          // a field is left, maybe empty
  auto next_field = [&rest, &more]() -> std::string_view {
    const size_t tab = rest.find('\t');
    std::string_view field = rest.substr(0, tab);
    more = tab != std::string_view::npos;
    rest = more ? rest.substr(tab + 1) : std::string_view();
    return field;
  };
  // The fields are taken as they come: counting the tabs first was a byte loop over the line
  // (0.8 M instructions of a CUTLASS TU's skip, more than the names' copies).
  group.dir = view_field(next_field());
  if (more) {
    group.absent_under = view_field(next_field());
  }
  if (!more) {
    throw ParseError{"'probes' has no name"};
  }
  while (more) {
    group.names.push_back(view_field(next_field()));
  }
  return group;
}

// The one field after the key of such a line.
std::string single_field(std::string_view line)
{
  std::string_view field = line.substr(line.find('\t') + 1);
  if (field.find('\t') != std::string_view::npos) {
    throw ParseError{fmt::format("'{}' has too many fields", line.substr(0, line.find('\t')))};
  }
  return view_field(field);
}

// One line that failed to parse: where it starts in the body, and why.
struct LineError {
  size_t offset = 0;
  std::string message;
};

// A piece of the body, whole lines, parsed on its own thread: the lines a big record has
// thousands of (input, probes, dep, missing) parsed, the others left for the one pass, in order,
// that fills the rest of the record.
struct BodyPiece {
  std::string_view text;
  size_t offset = 0;  // of text in the body
  std::vector<RecordedInput> inputs;
  std::vector<ProbeGroup> probes;
  std::vector<std::string> deps;
  std::vector<std::string> missing;
  std::vector<std::pair<size_t, std::string_view>> other_lines;  // (offset in the body, line)
  std::optional<LineError> error;  // the piece's first line that failed; no line after it is read
};

// A piece is worth a thread from this size on (a CUTLASS TU's record is 358 KB of text).
constexpr size_t k_min_piece_bytes = size_t{64} * 1024;

// The body cut at line ends into at most `threads` pieces of about the same size (one piece for a
// small body).
std::vector<BodyPiece> split_body(std::string_view body, size_t threads)
{
  const size_t count =
    std::clamp<size_t>(body.size() / k_min_piece_bytes, 1, std::max<size_t>(threads, 1));
  std::vector<BodyPiece> pieces(count);
  size_t begin = 0;
  for (size_t i = 0; i < count; ++i) {
    size_t end = body.size();
    if (i + 1 < count) {
      const size_t newline = body.find('\n', std::max(begin, body.size() / count * (i + 1)));
      end = newline == std::string_view::npos ? body.size() : newline + 1;
    }
    pieces[i].text = body.substr(begin, end - begin);
    pieces[i].offset = begin;
    begin = end;
  }
  return pieces;
}

void parse_bulky_lines(BodyPiece& piece)
{
  constexpr std::string_view k_input_prefix = "input\t";
  constexpr std::string_view k_probes_prefix = "probes\t";
  constexpr std::string_view k_missing_prefix = "missing\t";
  constexpr std::string_view k_dep_prefix = "dep\t";
  std::string_view rest = piece.text;
  size_t offset = piece.offset;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');  // every body line ends in one (the checksum line follows)
    const std::string_view line = rest.substr(0, end);
    try {
      if (line.starts_with(k_input_prefix)) {
        piece.inputs.push_back(parse_input_line(line));
      } else if (line.starts_with(k_probes_prefix)) {
        piece.probes.push_back(parse_probes_line(line));
      } else if (line.starts_with(k_dep_prefix)) {
        piece.deps.push_back(single_field(line));
      } else if (line.starts_with(k_missing_prefix)) {
        piece.missing.push_back(single_field(line));
      } else {
        piece.other_lines.emplace_back(offset, line);
      }
    } catch (const ParseError& failure) {
      piece.error = LineError{offset, failure.message};
      return;
    }
    rest.remove_prefix(end + 1);
    offset += end + 1;
  }
}

template <typename T>
void append_moved(std::vector<T>& to, std::vector<T>& from)
{
  if (to.empty()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// The pieces' bulky lines into the record, in the body's order; the first failed line of all
// pieces, if any.
std::optional<LineError> gather_pieces(std::vector<BodyPiece>& pieces, Record& record,
                                       std::vector<std::string>& missing)
{
  size_t inputs = 0;
  size_t deps = 0;
  for (const BodyPiece& piece : pieces) {
    inputs += piece.inputs.size();
    deps += piece.deps.size();
  }
  if (pieces.size() > 1) {
    record.inputs.reserve(inputs);
    record.depfile_prerequisites.reserve(deps);
  }
  for (BodyPiece& piece : pieces) {
    if (piece.error) {
      return piece.error;  // pieces are in order, and each stopped at its first failed line
    }
    append_moved(record.inputs, piece.inputs);
    append_moved(record.probes, piece.probes);
    append_moved(record.depfile_prerequisites, piece.deps);
    append_moved(missing, piece.missing);
  }
  return std::nullopt;
}

// The other lines, in the body's order, up to the first failed bulky line (`bulky_error`): the
// first of them that fails, if any (it comes before that one).
std::optional<LineError> parse_other_lines(const std::vector<BodyPiece>& pieces, Record& record,
                                           const std::optional<LineError>& bulky_error)
{
  const auto& handlers = line_handlers();
  for (const BodyPiece& piece : pieces) {
    for (const auto& [offset, line] : piece.other_lines) {
      if (bulky_error && offset > bulky_error->offset) {
        return std::nullopt;
      }
      try {
        auto fields = split_line(line);
        auto handler = handlers.find(fields[0]);
        if (handler == handlers.end()) {
          throw ParseError{fmt::format("unknown line '{}'", fields[0])};
        }
        handler->second(fields, record);
      } catch (const ParseError& failure) {
        return LineError{offset, failure.message};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Record> parse_record(const std::string& text, std::string* error, size_t threads)
{
  try {
    std::string_view body = verified_body(text);
    std::vector<BodyPiece> pieces = split_body(body, threads);
    if (pieces.size() > 1) {
      for_each_index_on_threads(pieces.size(), 1, pieces.size(),
                                [&pieces](size_t i) { parse_bulky_lines(pieces[i]); });
    } else {
      parse_bulky_lines(pieces.front());
    }
    Record record;
    std::vector<std::string> missing;  // a record written before probes lines
    std::optional<LineError> first_error = gather_pieces(pieces, record, missing);
    if (std::optional<LineError> other = parse_other_lines(pieces, record, first_error)) {
      first_error = other;
    }
    if (first_error) {
      throw ParseError{first_error->message};
    }
    if (!missing.empty()) {
      std::vector<ProbeGroup> grouped = group_probes(missing);
      record.probes.insert(record.probes.end(), std::make_move_iterator(grouped.begin()),
                           std::make_move_iterator(grouped.end()));
    }
    return record;
  } catch (const ParseError& failure) {
    if (error != nullptr) {
      *error = failure.message;
    }
    return std::nullopt;
  }
}

std::optional<RecordNote> parse_record_note(std::string_view text)
{
  auto lines = read_line_file(text, k_note_magic, 1);
  if (!lines || lines->empty() || (*lines)[0].size() != 2 || (*lines)[0][0] != "base") {
    return std::nullopt;
  }
  try {
    RecordNote note;
    note.base = (*lines)[0][1];
    bool has_output = false;
    for (size_t i = 1; i < lines->size(); ++i) {
      const Fields& f = (*lines)[i];
      if (f[0] == "output" && !has_output) {
        expect_fields(f, 6);
        note.output = to_fingerprint(f, 1);
        has_output = true;
      } else if (f[0] == "history") {
        expect_fields(f, 3);
        note.history.push_back({to_number<std::int64_t>(f[1]), f[2], f[3]});
      } else {
        return std::nullopt;
      }
    }
    return has_output ? std::optional<RecordNote>(std::move(note)) : std::nullopt;
  } catch (const ParseError&) {
    return std::nullopt;
  }
}

}  // namespace nvfresh

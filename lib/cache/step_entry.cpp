// Step entry grammar, version 2 (stored as one zstd frame: cache_store.hpp):
//
//   entry    := "nvfresh-step" SP version LF head* "end" SP checksum LF payload
//   head     := "key" SP hex32 LF | "tool" SP path LF | "pass" SP word LF | "run-ns" SP n LF
//             | "read" SP hex32 SP path LF          a file the step read, with its content's XXH3-128
//             | "missing" SP path LF                a lookup of the step that found nothing
//             | "output" SP size SP path LF         a file the step wrote (its bytes: in payload)
//             | "stdout" SP size LF | "stderr" SP size LF
//             | "input-lines" SP size LF            its input's line table (line_layout.hpp)
//   payload  := the outputs' bytes in the order of their lines, then stdout's, then stderr's, then
//               the line table's: exactly the sizes the head names, nothing after
//   checksum := XXH3-128 (hex) of everything before the "end" line, followed by the payload
//
// Paths run to the end of their line (spaces allowed, never a newline). A line of another kind, a
// size that does not fit, a checksum that does not match: the entry is damaged (a miss).
#include "cache/step_entry.hpp"

#include "util/text_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace nvfresh {

namespace {

constexpr std::string_view k_magic = "nvfresh-step";

Digest entry_checksum(std::string_view head, std::string_view payload)
{
  Hasher hasher;
  hasher.add(head).add(payload);
  return hasher.digest();
}

std::string_view next_word(std::string_view& text)
{
  const size_t space = text.find(' ');
  std::string_view word = text.substr(0, space);
  text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  return word;
}

bool fail(std::string* error, const std::string& why)
{
  if (error != nullptr) {
    *error = why;
  }
  return false;
}

struct Sizes {
  std::vector<std::uint64_t> outputs;
  std::uint64_t out = 0;
  std::uint64_t err = 0;
  std::uint64_t input_lines = 0;
};

bool parse_head_line(std::string_view line, StepEntry& entry, Sizes& sizes, std::string* error)
{
  std::string_view rest = line;
  const std::string_view kind = next_word(rest);
  std::uint64_t size = 0;
  if (kind == "key" || kind == "read") {
    auto digest = Digest::from_hex(next_word(rest));
    if (!digest) {
      return fail(error, fmt::format("bad digest in '{}'", kind));
    }
    if (kind == "key") {
      entry.key = *digest;
    } else {
      entry.reads.push_back({std::string(rest), *digest});
    }
  } else if (kind == "tool") {
    entry.tool = std::string(rest);
  } else if (kind == "pass") {
    entry.pass = std::string(rest);
  } else if (kind == "run-ns") {
    if (!parse_number(rest, entry.run_ns)) {
      return fail(error, "bad run-ns");
    }
  } else if (kind == "missing") {
    entry.missing.emplace_back(rest);
  } else if (kind == "output") {
    if (!parse_number(next_word(rest), size)) {
      return fail(error, "bad output size");
    }
    sizes.outputs.push_back(size);
    entry.outputs.push_back({std::string(rest), {}});
  } else if (kind == "stdout" || kind == "stderr" || kind == "input-lines") {
    if (!parse_number(rest, size)) {
      return fail(error, fmt::format("bad {} size", kind));
    }
    (kind == "stdout" ? sizes.out : kind == "stderr" ? sizes.err : sizes.input_lines) = size;
  } else {
    return fail(error, fmt::format("unknown line '{}'", kind));
  }
  return true;
}

}  // namespace

std::string without_run_times(std::string_view text)
{
  constexpr std::string_view k_time_said = "Compile time = ";
  std::string out;
  out.reserve(text.size());
  size_t from = 0;
  for (size_t at = text.find(k_time_said); at != std::string_view::npos;
       at = text.find(k_time_said, from)) {
    const size_t number = at + k_time_said.size();
    const size_t end = std::min(text.find_first_not_of("0123456789.", number), text.size());
    out.append(text.substr(from, number - from));
    const bool is_time = end > number && text.substr(end, 3) == " ms";
    from = is_time ? end : number;
  }
  out.append(text.substr(from));
  return out;
}

std::string step_output_difference(const StepEntry& stored, const StepEntry& run)
{
  std::vector<std::string> differences;
  for (const auto& output : run.outputs) {
    auto same_path = [&](const StepOutput& other) { return other.path == output.path; };
    auto kept = std::find_if(stored.outputs.begin(), stored.outputs.end(), same_path);
    if (kept == stored.outputs.end()) {
      differences.push_back(fmt::format("output {} is not stored", output.path));
    } else if (kept->content != output.content) {
      differences.push_back(fmt::format("output {} differs: {} bytes, stored {}", output.path,
                                        output.content.size(), kept->content.size()));
    }
  }
  for (const auto& output : stored.outputs) {
    auto same_path = [&](const StepOutput& other) { return other.path == output.path; };
    if (std::none_of(run.outputs.begin(), run.outputs.end(), same_path)) {
      differences.push_back(fmt::format("stored output {} was not written", output.path));
    }
  }
  if (without_run_times(stored.out) != without_run_times(run.out)) {
    differences.emplace_back("stdout differs");
  }
  if (without_run_times(stored.err) != without_run_times(run.err)) {
    differences.emplace_back("stderr differs");
  }
  return fmt::format("{}", fmt::join(differences, "; "));
}

std::string serialize_step_entry(const StepEntry& entry)
{
  std::string head = fmt::format("{} {}\nkey {}\ntool {}\npass {}\nrun-ns {}\n", k_magic,
                                 k_step_entry_format_version, entry.key.to_hex(), entry.tool,
                                 entry.pass, entry.run_ns);
  for (const auto& read : entry.reads) {
    head += fmt::format("read {} {}\n", read.hash.to_hex(), read.path);
  }
  for (const auto& path : entry.missing) {
    head += fmt::format("missing {}\n", path);
  }
  std::string payload;
  for (const auto& output : entry.outputs) {
    head += fmt::format("output {} {}\n", output.content.size(), output.path);
    payload += output.content;
  }
  head += fmt::format("stdout {}\nstderr {}\n", entry.out.size(), entry.err.size());
  payload += entry.out;
  payload += entry.err;
  if (!entry.input_lines.empty()) {
    head += fmt::format("input-lines {}\n", entry.input_lines.size());
    payload += entry.input_lines;
  }
  return head + fmt::format("end {}\n", entry_checksum(head, payload).to_hex()) + payload;
}

std::optional<StepEntry> parse_step_entry(std::string_view text, std::string* error)
{
  StepEntry entry;
  Sizes sizes;
  size_t at = 0;
  bool first = true;
  while (true) {
    const size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      fail(error, "truncated before its end line");
      return std::nullopt;
    }
    const std::string_view line = text.substr(at, end - at);
    if (first) {
      if (line != fmt::format("{} {}", k_magic, k_step_entry_format_version)) {
        fail(error, "not a step entry of this version");
        return std::nullopt;
      }
      first = false;
    } else if (line.starts_with("end ")) {
      auto checksum = Digest::from_hex(line.substr(4));
      const std::string_view head = text.substr(0, at);
      const std::string_view payload = text.substr(end + 1);
      std::uint64_t expected = sizes.out + sizes.err + sizes.input_lines;
      for (auto size : sizes.outputs) {
        expected += size;
      }
      if (!checksum || payload.size() != expected || entry_checksum(head, payload) != *checksum) {
        fail(error, "its checksum or size does not match");
        return std::nullopt;
      }
      size_t offset = 0;
      for (size_t i = 0; i < entry.outputs.size(); ++i) {
        entry.outputs[i].content = std::string(payload.substr(offset, sizes.outputs[i]));
        offset += sizes.outputs[i];
      }
      entry.out = std::string(payload.substr(offset, sizes.out));
      entry.err = std::string(payload.substr(offset + sizes.out, sizes.err));
      entry.input_lines = std::string(payload.substr(offset + sizes.out + sizes.err));
      return entry;
    } else if (!parse_head_line(line, entry, sizes, error)) {
      return std::nullopt;
    }
    at = end + 1;
  }
}

}  // namespace nvfresh

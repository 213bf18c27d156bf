#include "step/step_key.hpp"

#include "cache/step_entry.hpp"
#include "freshness/file_hasher.hpp"
#include "util/file_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

namespace fs = std::filesystem;

namespace nvfresh {

namespace {

constexpr std::string_view k_stem_prefix = "tmpxft_";
constexpr size_t k_hex_run = 8;

// Flags of cicc and ptxas that ask for debug or line information (nvcc -G, -g, -lineinfo pass them).
constexpr std::array<std::string_view, 9> k_debug_flags = {
  "-g",        "-G",         "--debug_mode",   "-generate-line-info", "--generate-line-info",
  "-lineinfo", "--lineinfo", "--device-debug", "-device-debug",
};

bool hex_run_at(std::string_view text, size_t at)
{
  if (at + k_hex_run > text.size()) {
    return false;
  }
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(at),
                     text.begin() + static_cast<std::ptrdiff_t>(at + k_hex_run),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// The stem starting at `at`, or "".
std::string_view stem_at(std::string_view text, size_t at)
{
  const size_t first = at + k_stem_prefix.size();
  const size_t second = first + k_hex_run + 1;
  if (hex_run_at(text, first) && second <= text.size() && text[second - 1] == '_' &&
      hex_run_at(text, second)) {
    return text.substr(at, second + k_hex_run - at);
  }
  return {};
}

std::string_view basename_of(std::string_view path)
{
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool is_cached_step_tool(std::string_view program)
{
  const std::string_view name = basename_of(program);
  return name == "cicc" || name == "ptxas";
}

std::optional<std::string> find_nvcc_stem(const std::vector<std::string>& words)
{
  for (const auto& word : words) {
    for (size_t at = word.find(k_stem_prefix); at != std::string::npos;
         at = word.find(k_stem_prefix, at + 1)) {
      if (std::string_view stem = stem_at(word, at); !stem.empty()) {
        return std::string(stem);
      }
    }
  }
  return std::nullopt;
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to)
{
  std::string out;
  out.reserve(text.size());
  size_t done = 0;
  if (!from.empty()) {
    for (size_t at = text.find(from); at != std::string_view::npos; at = text.find(from, done)) {
      out.append(text.substr(done, at - done));
      out.append(to);
      done = at + from.size();
    }
  }
  out.append(text.substr(done));
  return out;
}

TempNames find_temp_names(const std::vector<std::string>& words)
{
  TempNames found;
  auto stem = find_nvcc_stem(words);
  if (!stem) {
    return found;
  }
  found.stem = *stem;
  for (const auto& word : words) {
    for (size_t at = word.find(found.stem); at != std::string::npos;
         at = word.find(found.stem, at + found.stem.size())) {
      const size_t end = word.find_first_of("\", ;", at);
      std::string name = word.substr(at, end == std::string::npos ? end : end - at);
      if (std::find(found.names.begin(), found.names.end(), name) == found.names.end()) {
        found.names.push_back(std::move(name));
      }
    }
  }
  return found;
}

namespace {

std::string placeholder(size_t index)
{
  return fmt::format("{}@{}@", k_stem_prefix, index);
}

}  // namespace

std::string normalize_temp_names(std::string_view text, const TempNames& names)
{
  std::vector<size_t> order(names.names.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return names.names[a].size() > names.names[b].size();
  });
  std::string out(text);
  for (size_t index : order) {
    out = replace_all(out, names.names[index], placeholder(index));
  }
  return out;
}

std::string restore_temp_names(std::string_view text, const TempNames& names)
{
  std::string out(text);
  for (size_t i = names.names.size(); i-- > 0;) {  // "@12@" before "@1@"... each is delimited
    out = replace_all(out, placeholder(i), names.names[i]);
  }
  return out;
}

bool has_stem(std::string_view text, const TempNames& names)
{
  return !names.stem.empty() && text.find(names.stem) != std::string_view::npos;
}

std::string step_refusal(const std::vector<std::string>& words)
{
  if (!find_nvcc_stem(words)) {
    return "not run by nvcc (no temporary file of nvcc's in its arguments)";
  }
  for (const auto& word : words) {
    const std::string_view flag = std::string_view(word).substr(0, word.find('='));
    if (std::find(k_debug_flags.begin(), k_debug_flags.end(), flag) != k_debug_flags.end()) {
      return fmt::format("debug or line information asked for ({})", word);
    }
  }
  return {};
}

std::string tool_name(const Step& step)
{
  return fs::path(step.tool).filename().string();
}

std::string pass_of(const std::vector<std::string>& argv)
{
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string value;
    if ((argv[i] == "-arch" || argv[i] == "--gpu-name") && i + 1 < argv.size()) {
      value = argv[i + 1];
    } else if (argv[i].starts_with("-arch=")) {
      value = argv[i].substr(6);
    } else if (argv[i].starts_with("--gpu-name=")) {
      value = argv[i].substr(11);
    }
    if (value.starts_with("compute_") || value.starts_with("sm_")) {
      return value;
    }
  }
  return "-";
}

std::optional<Digest> step_key(const Step& step, FileHasher& hasher, KeyedInputs* inputs)
{
  auto tool = hasher.fingerprint(step.tool_exe);
  if (!tool.fingerprint) {
    return std::nullopt;
  }
  const bool cicc = tool_name(step) == "cicc";
  Hasher key;
  key.tag(k_step_key_version)
    .tag("tool")
    .field(step.tool_exe)
    .field(tool.fingerprint->hash.to_hex());
  key.tag("cwd").field(step.cwd);
  key.tag("args");
  for (size_t i = 1; i < step.argv.size(); ++i) {
    key.field(normalize_temp_names(step.argv[i], step.temp));
  }
  key.tag("files");
  for (size_t i = 1; i < step.argv.size(); ++i) {
    const std::string& word = step.argv[i];
    if (!has_stem(word, step.temp)) {
      continue;
    }
    const std::string path = absolute_path(word, step.cwd);
    if (!stat_file(path).is_regular) {
      continue;
    }
    auto content = try_read_file(path);
    if (!content) {
      return std::nullopt;
    }
    std::string normalized = normalize_temp_names(*content, step.temp);
    key.field(normalize_temp_names(word, step.temp));
    std::optional<LineLayout> layout;
    if (cicc && !inputs->lines && word.ends_with(".ii")) {
      layout = split_line_layout(normalized, &inputs->whole_input_why);
    }
    if (layout) {
      key.tag("code").field(layout->code);
      inputs->lines_text = serialize_line_table(layout->table);
      inputs->lines = std::move(layout->table);
    } else {
      key.field(normalized);
    }
    inputs->given_files.insert(path);
  }
  return key.digest();
}

std::vector<std::string> remote_arguments(const Step& step)
{
  std::vector<std::string> arguments{tool_name(step)};
  for (size_t i = 1; i < step.argv.size(); ++i) {
    arguments.push_back(normalize_temp_names(step.argv[i], step.temp));
  }
  return arguments;
}

}  // namespace nvfresh

#include "repro/run_artifacts.hpp"

#include "digest/ptx.hpp"
#include "util/file_io.hpp"
#include "util/line_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fnmatch.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t k_sample_digits = 5;
constexpr std::size_t k_text_diff_context = 2;

std::vector<std::string_view> segments(std::string_view path)
{
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) {
      parts.push_back(path.substr(start, end - start));
    }
    start = end + 1;
  }
  return parts;
}

bool segment_match(std::string_view pattern, std::string_view name)
{
  return ::fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), FNM_PERIOD) == 0;
}

// Pattern segments [p..) against path segments [s..); '**' takes any number of path segments.
bool match_from(const std::vector<std::string_view>& pattern, std::size_t p,
                const std::vector<std::string_view>& path, std::size_t s)
{
  if (p == pattern.size()) {
    return s == path.size();
  }
  if (pattern[p] == "**") {
    for (std::size_t skip = s; skip <= path.size(); ++skip) {
      if (match_from(pattern, p + 1, path, skip)) {
        return true;
      }
    }
    return false;
  }
  return s < path.size() && segment_match(pattern[p], path[s]) &&
         match_from(pattern, p + 1, path, s + 1);
}

std::optional<std::size_t> sample_index(std::string_view name)
{
  if (!name.starts_with(k_sample_directory_prefix)) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(k_sample_directory_prefix.size());
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return index;
}

bool looks_binary(std::string_view bytes)
{
  return bytes.find('\0') != std::string_view::npos;
}

}  // namespace

std::string check_artifact_pattern(std::string_view pattern)
{
  if (pattern.empty()) {
    return "an empty --artifact pattern matches nothing";
  }
  if (pattern.front() == '/') {
    return fmt::format(
      "--artifact {}: give patterns relative to the run's working directory (each run has its "
      "own; an absolute path would be the same file for every run)",
      pattern);
  }
  const auto parts = segments(pattern);
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    return fmt::format(
      "--artifact {}: '..' leaves the run's working directory, to files every run shares", pattern);
  }
  return {};
}

bool glob_match(std::string_view pattern, std::string_view path)
{
  return match_from(segments(pattern), 0, segments(path), 0);
}

FoundArtifacts find_artifacts(const std::string& root, const std::vector<std::string>& patterns)
{
  std::set<std::string> files;
  std::vector<bool> matched(patterns.size(), false);
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file(error)) {
      continue;
    }
    const std::string relative = fs::relative(it->path(), root, error).generic_string();
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      if (glob_match(patterns[i], relative)) {
        matched[i] = true;
        files.insert(relative);
      }
    }
  }
  FoundArtifacts found{{files.begin(), files.end()}, {}};
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    if (!matched[i]) {
      found.unmatched.push_back(patterns[i]);
    }
  }
  return found;
}

std::vector<SampleDirectory> sample_directories(const std::string& root)
{
  std::vector<SampleDirectory> samples;
  std::error_code error;
  for (fs::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    const auto index = sample_index(it->path().filename().string());
    if (index && it->is_directory(error)) {
      samples.push_back({*index, it->path().string()});
    }
  }
  std::sort(samples.begin(), samples.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  return samples;
}

std::string sample_directory_name(std::size_t index)
{
  return fmt::format("{}{:0{}}", k_sample_directory_prefix, index, k_sample_digits);
}

ArtifactDigest digest_run_artifact(const std::string& root, const std::string& relative,
                                   const Rewrites& rewrites)
{
  ArtifactDigest artifact;
  artifact.path = relative;
  artifact.source = (fs::path(root) / relative).string();
  if (const FileStat stat = stat_file(artifact.source); stat.size > k_max_artifact_bytes) {
    throw std::runtime_error(fmt::format("{}: {} MiB, larger than the {} MiB limit of an artifact",
                                         artifact.source, stat.size >> 20,
                                         k_max_artifact_bytes >> 20));
  }
  std::optional<std::string> bytes = try_read_file(artifact.source, k_max_artifact_bytes);
  if (!bytes) {
    throw std::runtime_error(
      fmt::format("{}: cannot be read: {}", artifact.source,
                  errno == EINVAL ? "not a regular file" : std::strerror(errno)));
  }
  for (const auto& [from, to] : rewrites) {
    replace_same_length(*bytes, from, to);
  }
  try {
    artifact.digests = digest_bytes(*bytes, relative);
  } catch (const DigestError&) {
    artifact.content =
      hash_bytes(*bytes);  // not a CUDA artifact (or not a readable one): its bytes decide
  }
  return artifact;
}

ComponentDigestList artifact_component_list(const std::vector<ArtifactDigest>& artifacts)
{
  ComponentDigestList list;
  for (const auto& artifact : artifacts) {
    if (!artifact.digests) {
      list.emplace_back(artifact.path + ": bytes", artifact.content);
      continue;
    }
    for (const auto& [key, digest] : component_digest_list(*artifact.digests)) {
      list.emplace_back(artifact.path + ": " + key, digest);
    }
  }
  return list;
}

std::vector<std::string> file_diff(const std::string& a_path, const std::string& b_path,
                                   std::size_t max_lines)
{
  const std::string a = try_read_file(a_path).value_or("");
  const std::string b = try_read_file(b_path).value_or("");
  if (looks_binary(a) || looks_binary(b)) {
    return {a == b ? std::string("the files are the same") : std::string("binary files differ")};
  }
  const auto lines_a = split_text_lines(a);
  const auto lines_b = split_text_lines(b);
  std::vector<std::string> out;
  std::size_t hidden = 0;
  const auto add = [&](std::string line) {
    if (max_lines != 0 && out.size() >= max_lines) {
      ++hidden;
    } else {
      out.push_back(std::move(line));
    }
  };
  for (const auto& hunk : diff_hunks(diff_lines(lines_a, lines_b), lines_a.size(), lines_b.size(),
                                     k_text_diff_context)) {
    add(fmt::format("@@ -{},{} +{},{} @@", hunk.a_begin + (hunk.a_count == 0 ? 0 : 1), hunk.a_count,
                    hunk.b_begin + (hunk.b_count == 0 ? 0 : 1), hunk.b_count));
    for (const auto& line : hunk.lines) {
      add(fmt::format("{}{}", static_cast<char>(line.op),
                      line.op == DiffOp::added ? lines_b[line.b] : lines_a[line.a]));
    }
  }
  if (hidden > 0) {
    out.push_back(fmt::format("... {} more lines", hidden));
  }
  return out;
}

}  // namespace nvfresh

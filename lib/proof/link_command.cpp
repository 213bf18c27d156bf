#include "proof/link_command.hpp"

#include "nvcc/command_line.hpp"
#include "util/file_io.hpp"
#include "util/words.hpp"

#include <algorithm>
#include <filesystem>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_object_suffixes[] = {".o", ".obj"};
constexpr std::string_view k_compile_only_flags[] = {"-c", "-S", "-E"};

bool is_archiver(const std::string& word)
{
  std::string name = fs::path(word).filename().string();
  return name == "ar" || name.ends_with("-ar");
}

// "ar <op> <archive> <members...>": the archive and its members. An operation without "c" ("q",
// "r") adds to an archive that exists (CMake's ARCHIVE_APPEND after its ARCHIVE_CREATE "qc").
std::optional<LinkEdge> describe_archive(const std::vector<std::string>& words, size_t ar_at,
                                         const std::string& run_dir)
{
  if (ar_at + 2 >= words.size()) {
    return std::nullopt;
  }
  std::string operation = words[ar_at + 1];
  operation.erase(0, operation.find_first_not_of('-'));
  LinkEdge edge;
  edge.kind = ArtifactKind::static_library;
  edge.artifact = graph_path(words[ar_at + 2], run_dir);
  edge.appends =
    operation.find('c') == std::string::npos && operation.find_first_of("qr") != std::string::npos;
  for (size_t i = ar_at + 3; i < words.size(); ++i) {
    if (is_object_path(words[i])) {
      edge.objects.push_back(graph_path(words[i], run_dir));
    }
  }
  return edge;
}

ArtifactKind linked_kind(const std::vector<std::string>& words, const std::string& output)
{
  const auto has = [&](std::string_view word) {
    return std::find(words.begin(), words.end(), word) != words.end();
  };
  if (has("-dlink") || has("--device-link") || is_object_path(output)) {
    return ArtifactKind::object;  // nvcc -dlink writes an object, even with -shared on its line
  }
  return has("-shared") ? ArtifactKind::shared_library : ArtifactKind::executable;
}

// A driver told to stop before linking ("-c", "-S", "-E") writes no linked artifact.
bool is_compile_only(const std::vector<std::string>& words)
{
  return std::any_of(words.begin(), words.end(), [](const std::string& word) {
    return std::find(std::begin(k_compile_only_flags), std::end(k_compile_only_flags), word) !=
           std::end(k_compile_only_flags);
  });
}

bool is_nvcc(const std::string& word)
{
  return fs::path(word).filename() == "nvcc";
}

}  // namespace

bool is_object_path(std::string_view path)
{
  return std::any_of(std::begin(k_object_suffixes), std::end(k_object_suffixes),
                     [&](std::string_view suffix) { return path.ends_with(suffix); });
}

std::string graph_path(const std::string& path, const std::string& base)
{
  return lexically_normal(absolute_path(path, base));
}

std::optional<LinkEdge> describe_link_command(const std::vector<std::string>& words,
                                              const std::string& run_dir)
{
  for (size_t i = 0; i < words.size(); ++i) {
    if (is_archiver(words[i])) {
      return describe_archive(words, i, run_dir);
    }
  }
  auto output = std::find(words.begin(), words.end(), "-o");
  if (output == words.end() || output + 1 == words.end() || is_compile_only(words)) {
    return std::nullopt;
  }
  LinkEdge edge;
  edge.artifact = graph_path(*(output + 1), run_dir);
  edge.kind = linked_kind(words, *(output + 1));
  for (auto word = words.begin() + 1; word != words.end(); ++word) {
    if (word == output + 1 || word->empty() || word->front() == '-' || word->front() == '@') {
      continue;
    }
    (is_object_path(*word) ? edge.objects : edge.libraries).push_back(graph_path(*word, run_dir));
  }
  return edge;
}

std::vector<std::string> expand_response_files(const std::vector<std::string>& words,
                                               const std::string& run_dir)
{
  std::vector<std::string> expanded;
  for (const std::string& word : words) {
    auto text = word.size() > 1 && word[0] == '@'
                  ? try_read_file(absolute_path(word.substr(1), run_dir))
                  : std::nullopt;
    if (!text) {
      expanded.push_back(word);
      continue;
    }
    for (auto& inner : split_words(*text, k_shell_quotes)) {
      expanded.push_back(std::move(inner));
    }
  }
  // nvcc's options files are nvcc's: expanded as nvcc does, in the words after nvcc itself.
  auto nvcc = std::find_if(expanded.begin(), expanded.end(), is_nvcc);
  if (nvcc == expanded.end()) {
    return expanded;
  }
  const std::vector<std::string> nvcc_words(nvcc + 1, expanded.end());
  if (auto expanded_nvcc = expand_nvcc_options_files(nvcc_words, run_dir)) {
    expanded.erase(nvcc + 1, expanded.end());
    expanded.insert(expanded.end(), expanded_nvcc->begin(), expanded_nvcc->end());
  }
  return expanded;
}

}  // namespace nvfresh

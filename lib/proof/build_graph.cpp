#include "proof/build_graph.hpp"

#include "nvcc/command_line.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

// How CMake's Ninja generator names the link rule of each kind of artifact.
struct KindRule {
  ArtifactKind kind;
  std::string_view ninja_rule_part;
};

constexpr std::string_view k_cuda_compile_rule = "CUDA_COMPILER__";  // "CUDA_COMPILER__<t>_<cfg>"

constexpr KindRule k_kind_rules[] = {
  {ArtifactKind::executable, "_EXECUTABLE_LINKER__"},
  {ArtifactKind::shared_library, "_SHARED_LIBRARY_LINKER__"},
  {ArtifactKind::module_library, "_MODULE_LIBRARY_LINKER__"},
  {ArtifactKind::static_library, "_STATIC_LIBRARY_LINKER__"},
};

constexpr std::string_view k_object_suffixes[] = {".o", ".obj"};
constexpr std::string_view k_compile_only_flags[] = {"-c", "-S", "-E"};

bool ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_object_path(std::string_view path)
{
  return std::any_of(std::begin(k_object_suffixes), std::end(k_object_suffixes),
                     [&](std::string_view suffix) { return ends_with(path, suffix); });
}

std::string resolve(const std::string& path, const std::string& base)
{
  return lexically_normal(absolute_path(path, base));
}

// Records name objects with symlinks resolved (record_store.hpp): so do graph paths.
std::string canonical_dir(const std::string& dir)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(dir, error);
  return error ? dir : canonical.string();
}

// One logical line of build.ninja ("$\n" continuations joined), split into words with the
// escapes "$ ", "$:", "$$" undone. An unescaped ':' ends a word and is its own word ":".
std::vector<std::string> ninja_words(std::string_view line)
{
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '$' && i + 1 < line.size()) {
      char next = line[++i];
      word += (next == ' ' || next == ':' || next == '$') ? std::string(1, next)
                                                          : "$" + std::string(1, next);
    } else if (c == ' ') {
      flush();
    } else if (c == ':') {
      flush();
      words.emplace_back(":");
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

// The logical lines that start with "build " (continuations joined).
std::vector<std::string> ninja_build_lines(std::string_view text)
{
  std::vector<std::string> lines;
  std::string current;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    bool continued =
      !line.empty() && line.back() == '$' && (line.size() < 2 || line[line.size() - 2] != '$');
    if (!current.empty()) {
      line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    }
    current += continued ? line.substr(0, line.size() - 1) : line;
    if (!continued) {
      if (current.rfind("build ", 0) == 0) {
        lines.push_back(std::move(current));
      }
      current.clear();
    }
  }
  return lines;
}

const KindRule* kind_of_rule(std::string_view rule)
{
  for (const auto& entry : k_kind_rules) {
    if (rule.find(entry.ninja_rule_part) != std::string_view::npos) {
      return &entry;
    }
  }
  return nullptr;
}

struct NinjaEdge {
  std::vector<std::string> outputs;
  std::string rule;
  std::vector<std::string> explicit_inputs;
  std::vector<std::string> implicit_inputs;
};

NinjaEdge parse_build_words(const std::vector<std::string>& words)
{
  NinjaEdge edge;
  size_t i = 1;  // skip "build"
  for (; i < words.size() && words[i] != ":"; ++i) {
    if (words[i] != "|") {
      edge.outputs.push_back(words[i]);
    }
  }
  if (++i < words.size()) {
    edge.rule = words[i++];
  }
  auto* target = &edge.explicit_inputs;
  for (; i < words.size(); ++i) {
    if (words[i] == "|") {
      target = &edge.implicit_inputs;
    } else if (words[i] == "||" || words[i] == "|@") {
      break;
    } else {
      target->push_back(words[i]);
    }
  }
  return edge;
}

LinkEdge link_edge_from(const NinjaEdge& edge, const KindRule& kind, const std::string& build_dir)
{
  LinkEdge link;
  link.artifact = resolve(edge.outputs.front(), build_dir);
  link.kind = kind.kind;
  size_t name_at = edge.rule.find(kind.ninja_rule_part) + kind.ninja_rule_part.size();
  std::string name = edge.rule.substr(name_at);
  link.target = name.substr(0, name.rfind('_'));
  for (const auto* inputs : {&edge.explicit_inputs, &edge.implicit_inputs}) {
    for (const auto& input : *inputs) {
      (is_object_path(input) ? link.objects : link.libraries).push_back(resolve(input, build_dir));
      link.dependencies.push_back(resolve(input, build_dir));
    }
  }
  link.dependencies_known = true;
  return link;
}

// Keeps only the libraries that are artifacts of this graph.
void keep_known_libraries(BuildGraph& graph)
{
  std::set<std::string> artifacts;
  for (const auto& edge : graph.edges) {
    artifacts.insert(edge.artifact);
  }
  for (auto& edge : graph.edges) {
    std::erase_if(edge.libraries, [&](const std::string& lib) {
      return lib == edge.artifact || artifacts.count(lib) == 0;
    });
  }
}

}  // namespace

BuildGraph parse_ninja_manifest(std::string_view text, const std::string& build_dir)
{
  BuildGraph graph;
  graph.generator = "ninja";
  std::map<std::string, std::string> aliases;  // artifact -> phony target name
  for (const auto& line : ninja_build_lines(text)) {
    NinjaEdge edge = parse_build_words(ninja_words(line));
    if (edge.outputs.empty()) {
      continue;
    }
    if (edge.rule == "phony" && edge.outputs.size() == 1 && edge.explicit_inputs.size() == 1 &&
        edge.outputs[0].find('/') == std::string::npos) {
      aliases.emplace(resolve(edge.explicit_inputs[0], build_dir), edge.outputs[0]);
    } else if (const KindRule* kind = kind_of_rule(edge.rule)) {
      graph.edges.push_back(link_edge_from(edge, *kind, build_dir));
    } else if (edge.rule.starts_with(k_cuda_compile_rule) && !edge.explicit_inputs.empty()) {
      graph.cuda_compiles.push_back({resolve(edge.outputs.front(), build_dir),
                                     resolve(edge.explicit_inputs.front(), build_dir)});
    }
  }
  for (auto& edge : graph.edges) {
    if (auto alias = aliases.find(edge.artifact); alias != aliases.end()) {
      edge.target = alias->second;
    }
  }
  keep_known_libraries(graph);
  return graph;
}

namespace {

bool is_archiver(const std::string& word)
{
  std::string name = fs::path(word).filename().string();
  return name == "ar" || ends_with(name, "-ar");
}

// "ar <op> <archive> <members...>": the archive and its members.
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
  edge.artifact = resolve(words[ar_at + 2], run_dir);
  edge.appends =
    operation.find('c') == std::string::npos && operation.find_first_of("qr") != std::string::npos;
  for (size_t i = ar_at + 3; i < words.size(); ++i) {
    if (is_object_path(words[i])) {
      edge.objects.push_back(resolve(words[i], run_dir));
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

}  // namespace

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
  edge.artifact = resolve(*(output + 1), run_dir);
  edge.kind = linked_kind(words, *(output + 1));
  for (auto word = words.begin() + 1; word != words.end(); ++word) {
    if (word == output + 1 || word->empty() || word->front() == '-' || word->front() == '@') {
      continue;
    }
    (is_object_path(*word) ? edge.objects : edge.libraries).push_back(resolve(*word, run_dir));
  }
  return edge;
}

std::vector<std::string> split_command_line(std::string_view line)
{
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
      }
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}

namespace {

// nvcc's options-file spellings: the file's words replace them.
constexpr std::string_view k_options_file_flags[] = {"--options-file", "-optf"};

// The file an "@file", "--options-file file", "-optf file", "--options-file=file" or "-optf=file"
// names at words[i] (and how many words that takes), else nullopt.
std::optional<std::pair<std::string, size_t>> options_file_at(const std::vector<std::string>& words,
                                                              size_t i)
{
  const std::string& word = words[i];
  if (word.size() > 1 && word[0] == '@') {
    return std::pair<std::string, size_t>(word.substr(1), 1);
  }
  for (std::string_view flag : k_options_file_flags) {
    if (word == flag && i + 1 < words.size()) {
      return std::pair<std::string, size_t>(words[i + 1], 2);
    }
    if (word.size() > flag.size() + 1 && word.starts_with(flag) && word[flag.size()] == '=') {
      return std::pair<std::string, size_t>(word.substr(flag.size() + 1), 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> expand_response_files(const std::vector<std::string>& words,
                                               const std::string& run_dir)
{
  std::vector<std::string> expanded;
  for (size_t i = 0; i < words.size();) {
    auto named = options_file_at(words, i);
    auto text = named ? try_read_file(absolute_path(named->first, run_dir)) : std::nullopt;
    if (!text) {
      expanded.push_back(words[i++]);
      continue;
    }
    const bool nvcc_syntax = words[i][0] != '@';
    for (auto& inner : nvcc_syntax ? split_nvcc_words(*text) : split_command_line(*text)) {
      expanded.push_back(std::move(inner));
    }
    i += named->second;
  }
  return expanded;
}

std::vector<LinkEdge> parse_make_link_commands(std::string_view text, const std::string& run_dir,
                                               const std::string& target)
{
  std::vector<LinkEdge> edges;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    auto words =
      expand_response_files(split_command_line(text.substr(begin, end - begin)), run_dir);
    begin = end + 1;
    if (auto edge = describe_link_command(words, run_dir)) {
      edge->target = target;
      edges.push_back(std::move(*edge));
    }
  }
  return edges;
}

std::map<std::string, std::vector<std::string>> parse_make_prerequisites(std::string_view text,
                                                                         const std::string& run_dir)
{
  std::map<std::string, std::vector<std::string>> prerequisites;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    const size_t colon = line.find(": ");
    if (line.empty() || line[0] == '\t' || line[0] == '#' || line[0] == '.' ||
        colon == std::string_view::npos || line.find('$') != std::string_view::npos) {
      continue;
    }
    prerequisites[resolve(std::string(line.substr(0, colon)), run_dir)].push_back(
      resolve(std::string(line.substr(colon + 2)), run_dir));
  }
  return prerequisites;
}

std::vector<CompileEdge> parse_make_cuda_compiles(std::string_view text, const std::string& run_dir)
{
  // "<object>: <prerequisite>" lines come first, then the recipe that echoes "Building CUDA object
  // <object>": the source is the prerequisite that is none of CMake's own files.
  constexpr std::string_view k_echo = "Building CUDA object ";
  std::vector<CompileEdge> compiles;
  std::map<std::string, std::string> sources;  // object -> source, as the rules name them
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (auto at = line.find(k_echo); at != std::string_view::npos) {
      std::string object(line.substr(at + k_echo.size()));
      object.erase(object.find_last_not_of("\"' \t\r") + 1);
      auto source = sources.find(object);
      compiles.push_back({resolve(object, run_dir), source != sources.end()
                                                      ? resolve(source->second, run_dir)
                                                      : std::string()});
      continue;
    }
    const size_t colon = line.find(": ");
    if (line.empty() || line[0] == '\t' || line[0] == '#' || colon == std::string_view::npos) {
      continue;
    }
    const std::string prerequisite(line.substr(colon + 2));
    const bool cmake_file = prerequisite.ends_with(".make") || prerequisite.ends_with(".rsp") ||
                            prerequisite.ends_with(".ts") ||
                            prerequisite.find('$') != std::string::npos;
    if (!cmake_file && !prerequisite.empty()) {
      sources[std::string(line.substr(0, colon))] = prerequisite;
    }
  }
  return compiles;
}

namespace {

// "ar qc lib.a <objects>" then "ar q lib.a cmake_device_link.o": one artifact, one edge.
void add_or_merge(BuildGraph& graph, LinkEdge edge)
{
  auto same = std::find_if(graph.edges.begin(), graph.edges.end(),
                           [&](const LinkEdge& e) { return e.artifact == edge.artifact; });
  if (same == graph.edges.end()) {
    graph.edges.push_back(std::move(edge));
    return;
  }
  same->objects.insert(same->objects.end(), edge.objects.begin(), edge.objects.end());
  same->libraries.insert(same->libraries.end(), edge.libraries.begin(), edge.libraries.end());
}

// One target's link.txt and dlink.txt (its device link, CUDA_SEPARABLE_COMPILATION or
// CUDA_RESOLVE_DEVICE_SYMBOLS) and the CUDA compiles of its build.make.
void add_make_target(const fs::path& target_dir, BuildGraph& graph)
{
  std::string run_dir = target_dir.parent_path().parent_path().string();
  std::string target = target_dir.stem().string();
  for (const char* commands : {"dlink.txt", "link.txt"}) {
    if (auto text = try_read_file((target_dir / commands).string())) {
      for (auto& edge : parse_make_link_commands(*text, run_dir, target)) {
        add_or_merge(graph, std::move(edge));
      }
    }
  }
  if (auto text = try_read_file((target_dir / "build.make").string())) {
    for (auto& compile : parse_make_cuda_compiles(*text, run_dir)) {
      graph.cuda_compiles.push_back(std::move(compile));
    }
    const auto prerequisites = parse_make_prerequisites(*text, run_dir);
    for (auto& edge : graph.edges) {
      if (auto found = prerequisites.find(edge.artifact); found != prerequisites.end()) {
        edge.dependencies = found->second;
        edge.dependencies_known = true;
      }
    }
  }
}

BuildGraph load_make_graph(const std::string& build_dir)
{
  BuildGraph graph;
  graph.generator = "make";
  std::error_code error;
  fs::recursive_directory_iterator it(build_dir, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const fs::path& path = it->path();
    if (!it->is_directory(error)) {
      continue;
    }
    std::string name = path.filename().string();
    if (name == ".nvfresh" || name == ".git") {
      it.disable_recursion_pending();
    } else if (ends_with(name, ".dir") && path.parent_path().filename() == "CMakeFiles") {
      add_make_target(path, graph);
      it.disable_recursion_pending();
    }
  }
  keep_known_libraries(graph);
  return graph;
}

}  // namespace

BuildGraph load_build_graph(const std::string& build_dir)
{
  std::string dir = canonical_dir(resolve(build_dir, current_directory()));
  if (auto text = try_read_file(dir + "/build.ninja")) {
    return parse_ninja_manifest(*text, dir);
  }
  if (stat_file(dir + "/Makefile").exists) {
    return load_make_graph(dir);
  }
  return {};
}

const LinkEdge* BuildGraph::find(const std::string& wanted) const
{
  std::string absolute = resolve(wanted, current_directory());
  std::string canonical = canonical_dir(absolute);
  for (const auto& edge : edges) {
    if (edge.artifact == absolute || edge.artifact == canonical || edge.target == wanted ||
        fs::path(edge.artifact).filename() == wanted) {
      return &edge;
    }
  }
  return nullptr;
}

std::vector<std::string> BuildGraph::linked_closure(const std::string& artifact) const
{
  std::vector<std::string> closure;
  std::vector<std::string> todo = {artifact};
  while (!todo.empty()) {
    std::string current = todo.back();
    todo.pop_back();
    const LinkEdge* edge = find(current);
    for (const auto& lib : edge != nullptr ? edge->libraries : std::vector<std::string>{}) {
      if (std::find(closure.begin(), closure.end(), lib) == closure.end()) {
        closure.push_back(lib);
        todo.push_back(lib);
      }
    }
  }
  return closure;
}

std::vector<const LinkEdge*> BuildGraph::containing(const std::string& object) const
{
  std::vector<const LinkEdge*> result;
  for (const auto& edge : edges) {
    if (std::find(edge.objects.begin(), edge.objects.end(), object) != edge.objects.end()) {
      result.push_back(&edge);
    }
  }
  return result;
}

}  // namespace nvfresh

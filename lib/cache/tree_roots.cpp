#include "cache/tree_roots.hpp"

#include "util/file_io.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

// A root ends where a path component ends: "/b/build" is not a prefix of "/b/build2".
bool ends_component(std::string_view text, size_t at)
{
  constexpr std::string_view k_boundaries = "/\"' :()[]<>,;\t\n\r";
  return at == text.size() || k_boundaries.find(text[at]) != std::string_view::npos;
}

std::string canonical_or_same(const std::string& path)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(path, error);
  return error ? lexically_normal(path) : lexically_normal(canonical.string());
}

// CMAKE_HOME_DIRECTORY:INTERNAL=<dir> of a CMakeCache.txt, or "".
std::string cmake_home_directory(const std::string& cache_file)
{
  constexpr std::string_view k_key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
  auto text = try_read_file(cache_file, 16 << 20);
  if (!text) {
    return {};
  }
  const size_t at = text->find(k_key);
  if (at == std::string::npos || (at != 0 && (*text)[at - 1] != '\n')) {
    return {};
  }
  const size_t begin = at + k_key.size();
  return text->substr(begin, text->find('\n', begin) - begin);
}

struct Replacement {
  std::string_view from;
  std::string_view to;
};

// Replaces every `from` that ends a path component, longest first (one root may hold the other).
template <size_t N>
std::string replace_all(std::string_view text, std::array<Replacement, N> rules)
{
  std::sort(rules.begin(), rules.end(), [](const Replacement& a, const Replacement& b) {
    return a.from.size() > b.from.size();
  });
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    // Every root is absolute: only a '/' can start one.
    const size_t slash = text.find('/', at);
    if (slash == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    out.append(text.substr(at, slash - at));
    at = slash;
    bool replaced = false;
    for (const auto& rule : rules) {
      if (!rule.from.empty() && text.compare(at, rule.from.size(), rule.from) == 0 &&
          ends_component(text, at + rule.from.size())) {
        out += rule.to;
        at += rule.from.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      out += text[at++];
    }
  }
  return out;
}

std::string alias_of(const std::string& root)
{
  const std::string canonical = root.empty() ? root : canonical_or_same(root);
  return canonical == root ? std::string() : canonical;
}

}  // namespace

TreeRoots tree_roots_of(const std::string& build_tree)
{
  TreeRoots roots;
  roots.build = lexically_normal(build_tree);
  roots.source = lexically_normal(cmake_home_directory(build_tree + "/CMakeCache.txt"));
  if (roots.build == "/") {
    roots.build.clear();
  }
  if (roots.source == "/" || roots.source == "." || roots.source == roots.build) {
    roots.source.clear();
  }
  roots.build_alias = alias_of(roots.build);
  roots.source_alias = alias_of(roots.source);
  return roots;
}

PathMap::PathMap(TreeRoots roots) : m_roots(std::move(roots)) {}

std::string PathMap::to_key(const std::string& path) const
{
  // A path holds a root only at its start: the longest root that ends a component there wins.
  const std::string* best_root = nullptr;
  std::string_view best_token;
  for (const auto& [root, token] :
       {std::pair<const std::string&, std::string_view>{m_roots.build, k_build_token},
        {m_roots.source, k_source_token},
        {m_roots.build_alias, k_build_token},
        {m_roots.source_alias, k_source_token}}) {
    if (!root.empty() && path.starts_with(root) && ends_component(path, root.size()) &&
        (best_root == nullptr || root.size() > best_root->size())) {
      best_root = &root;
      best_token = token;
    }
  }
  if (best_root == nullptr) {
    return path;
  }
  return std::string(best_token) + path.substr(best_root->size());
}

std::string PathMap::to_tree(const std::string& key_path) const
{
  if (key_path.empty() || key_path[0] != k_build_token[0]) {
    return key_path;
  }
  return text_to_tree(key_path);
}

std::string PathMap::text_to_key(std::string_view text) const
{
  return replace_all(text,
                     std::array<Replacement, 4>{Replacement{m_roots.build, k_build_token},
                                                Replacement{m_roots.source, k_source_token},
                                                Replacement{m_roots.build_alias, k_build_token},
                                                Replacement{m_roots.source_alias, k_source_token}});
}

std::string PathMap::text_to_tree(std::string_view text) const
{
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t mark = text.find(k_build_token[0], at);  // both tokens start with STX
    if (mark == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    out.append(text.substr(at, mark - at));
    at = mark;
    if (text.compare(at, k_build_token.size(), k_build_token) == 0) {
      out += m_roots.build;
      at += k_build_token.size();
    } else if (text.compare(at, k_source_token.size(), k_source_token) == 0) {
      out += m_roots.source;
      at += k_source_token.size();
    } else {
      out += text[at++];
    }
  }
  return out;
}

PathMap::Named PathMap::roots_named(std::string_view bytes) const
{
  Named named;
  if (!names_a_root(bytes)) {
    return named;  // the common case, at the speed of a substring search
  }
  std::array<std::pair<std::string_view, bool Named::*>, 4> roots{{
    {m_roots.build, &Named::build},
    {m_roots.source, &Named::source},
    {m_roots.build_alias, &Named::build},
    {m_roots.source_alias, &Named::source},
  }};
  std::sort(roots.begin(), roots.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  // No component boundary is asked for: in bytes a root may end anywhere, and a root that names
  // more than it should only binds an entry more tightly.
  for (size_t at = bytes.find('/'); at != std::string_view::npos; at = bytes.find('/', at)) {
    const auto root = std::find_if(roots.begin(), roots.end(), [&](const auto& candidate) {
      return !candidate.first.empty() &&
             bytes.compare(at, candidate.first.size(), candidate.first) == 0;
    });
    if (root == roots.end()) {
      ++at;
      continue;
    }
    named.*(root->second) = true;
    at += root->first.size();
  }
  return named;
}

bool PathMap::names_a_root(std::string_view bytes) const
{
  for (const std::string& root :
       {m_roots.build, m_roots.source, m_roots.build_alias, m_roots.source_alias}) {
    if (!root.empty() && bytes.find(root) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace nvfresh

// Cache entry file format, version 2 (util/line_file.hpp: escaped TAB-separated fields, checksum).
// Stored as one zstd frame (util/compressed_file.hpp).
//
//   entry      := "nvfresh-cache-entry" TAB "2" LF body checksum
//   body       := (line LF)*, in any order, each at most once unless marked *:
//   "key" TAB manifest_hex32 TAB result_hex32  the keys it was stored under (required)
//   "object_digest" TAB hex32                 XXH3-128 of the object's bytes (required)
//   "object" TAB bytes                        the object (escaped: any byte may appear)
//   "dep" TAB path *                          a depfile prerequisite, in order
//   "console" TAB mode TAB stdout TAB stderr  mode = combined | separate
//   "console_terminals" TAB streams           absent: no terminal
//   "console_terminal_env" TAB name TAB value *
//   "component" TAB name TAB hex32 *          normalized digest of one component
//   "variant" TAB index TAB name TAB hex32 *  a digest of another variant a recompile saw
//   "created" TAB time_ns TAB compile_ns
//   "origin" TAB tree TAB cwd TAB object TAB nvcc_version
//   "bound" TAB build_root TAB source_root    the roots its object names ("" for none)
//   "origin_arg" TAB word *                   the command, in order
//   "origin_env" TAB name TAB value *
//
// An entry that fails its checks is a miss, and the next compile of it replaces it.
//
// History: 1, the first; 2 adds "key" and "object_digest": an entry file copied under another
// key, or whose object was replaced, is a miss. A version 1 entry is a miss. "bound" came later
// within version 2: an entry without it is served by lookups only.
#include "cache/cache_entry.hpp"

#include "util/line_file.hpp"

#include <functional>
#include <unordered_map>

namespace nvfresh {

namespace {

constexpr std::string_view k_magic = "nvfresh-cache-entry";

// The fields are the reader's buffer: a handler may take a field (the object's megabytes are
// moved, not copied).
using Handler = std::function<void(LineFields&, CacheEntry&)>;

struct Rule {
  size_t fields;  // including the key
  Handler apply;
};

const std::unordered_map<std::string, Rule>& rules()
{
  static const std::unordered_map<std::string, Rule> table = {
    {"key",
     {3,
      [](LineFields& f, CacheEntry& e) {
        e.manifest_key = digest_field(f[1]);
        e.result_key = digest_field(f[2]);
      }}},
    {"object_digest",
     {2, [](LineFields& f, CacheEntry& e) { e.object_digest = digest_field(f[1]); }}},
    {"object", {2, [](LineFields& f, CacheEntry& e) { e.object = std::move(f[1]); }}},
    {"dep", {2, [](LineFields& f, CacheEntry& e) { e.depfile_prerequisites.push_back(f[1]); }}},
    {"console",
     {4,
      [](LineFields& f, CacheEntry& e) {
        e.console_mode = f[1];
        e.console_out = f[2];
        e.console_err = f[3];
      }}},
    {"console_terminals", {2, [](LineFields& f, CacheEntry& e) { e.console_terminals = f[1]; }}},
    {"console_terminal_env",
     {3, [](LineFields& f, CacheEntry& e) { e.console_terminal_env[f[1]] = f[2]; }}},
    {"component",
     {3, [](LineFields& f, CacheEntry& e) { e.components[f[1]] = digest_field(f[2]); }}},
    {"variant",
     {4,
      [](LineFields& f, CacheEntry& e) {
        const auto index = number_field<size_t>(f[1]);
        if (index > e.other_variants.size() || index > 64) {
          throw LineParseError{"variants out of order"};
        }
        if (index == e.other_variants.size()) {
          e.other_variants.emplace_back();
        }
        e.other_variants[index][f[2]] = digest_field(f[3]);
      }}},
    {"created",
     {3,
      [](LineFields& f, CacheEntry& e) {
        e.created_ns = number_field<std::int64_t>(f[1]);
        e.compile_ns = number_field<std::int64_t>(f[2]);
      }}},
    {"origin",
     {5,
      [](LineFields& f, CacheEntry& e) {
        e.origin_tree = f[1];
        e.origin_cwd = f[2];
        e.origin_object = f[3];
        e.nvcc_version = f[4];
      }}},
    {"bound",
     {3,
      [](LineFields& f, CacheEntry& e) {
        e.bound = CacheEntry::Binding{f[1], f[2]};
      }}},
    {"origin_arg", {2, [](LineFields& f, CacheEntry& e) { e.origin_command.push_back(f[1]); }}},
    {"origin_env", {3, [](LineFields& f, CacheEntry& e) { e.origin_env[f[1]] = f[2]; }}},
  };
  return table;
}

}  // namespace

std::string serialize_cache_entry(const CacheEntry& e)
{
  LineWriter out(k_magic, k_cache_entry_format_version);
  out.line("key", e.manifest_key, e.result_key);
  out.line("object_digest", e.object_digest);
  out.line("created", e.created_ns, e.compile_ns);
  out.line("origin", e.origin_tree, e.origin_cwd, e.origin_object, e.nvcc_version);
  if (e.bound) {
    out.line("bound", e.bound->build_root, e.bound->source_root);
  }
  for (const auto& word : e.origin_command) {
    out.line("origin_arg", word);
  }
  for (const auto& [name, value] : e.origin_env) {
    out.line("origin_env", name, value);
  }
  for (const auto& [name, digest] : e.components) {
    out.line("component", name, digest);
  }
  for (size_t i = 0; i < e.other_variants.size(); ++i) {
    for (const auto& [name, digest] : e.other_variants[i]) {
      out.line("variant", i, name, digest);
    }
  }
  for (const auto& dep : e.depfile_prerequisites) {
    out.line("dep", dep);
  }
  out.line("console", e.console_mode, e.console_out, e.console_err);
  if (!e.console_terminals.empty()) {
    out.line("console_terminals", e.console_terminals);
  }
  for (const auto& [name, value] : e.console_terminal_env) {
    out.line("console_terminal_env", name, value);
  }
  out.line("object", e.object);
  return out.finish();
}

std::optional<CacheEntry> parse_cache_entry(std::string_view text, std::string* error)
{
  CacheEntry entry;
  bool has_object = false;
  bool has_key = false;
  bool has_object_digest = false;
  try {
    const bool read = for_each_line(
      text, k_magic, k_cache_entry_format_version,
      [&](LineFields& fields) {
        auto rule = rules().find(fields[0]);
        if (rule == rules().end()) {
          throw LineParseError{"unknown line '" + fields[0] + "'"};
        }
        if (fields.size() != rule->second.fields) {
          throw LineParseError{"'" + fields[0] + "' has the wrong number of fields"};
        }
        has_object = has_object || fields[0] == "object";
        has_key = has_key || fields[0] == "key";
        has_object_digest = has_object_digest || fields[0] == "object_digest";
        rule->second.apply(fields, entry);
      },
      error);
    if (!read) {
      return std::nullopt;
    }
    if (!has_object || !has_key || !has_object_digest) {
      throw LineParseError{"no object, key or object digest"};
    }
  } catch (const LineParseError& failure) {
    if (error != nullptr) {
      *error = failure.message;
    }
    return std::nullopt;
  }
  return entry;
}

}  // namespace nvfresh

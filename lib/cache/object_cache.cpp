#include "cache/object_cache.hpp"

#include "cache/code_text.hpp"
#include "cache/entry_verifier.hpp"
#include "digest/elf_reader.hpp"
#include "digest/fatbin_reader.hpp"
#include "freshness/input_check.hpp"
#include "freshness/path_lookups.hpp"
#include "record/signature.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/words.hpp"

#include <fmt/format.h>

#include <array>
#include <filesystem>

namespace nvfresh {

namespace {

constexpr std::string_view k_key_version = k_cache_key_version;
constexpr std::uint64_t k_max_object = 4ULL << 30;
constexpr std::uint64_t k_max_options_file = 16ULL << 20;
constexpr std::uint64_t k_max_code_file = 16ULL << 20;

// The device code of an object, decompressed: where __FILE__ of a kernel (assert) lands.
std::vector<std::string> device_payloads(const std::string& object)
{
  std::vector<std::string> payloads;
  try {
    if (looks_like_fatbin(object)) {
      for (auto& entry : read_fatbin(object, "object")) {
        payloads.push_back(std::move(entry.payload));
      }
      return payloads;
    }
    if (!ElfReader::looks_like_elf(object)) {
      return payloads;
    }
    const ElfReader elf(object, "object");
    for (std::string_view section : find_fatbin_sections(elf, "object")) {
      for (auto& entry : read_fatbin(section, "object")) {
        payloads.push_back(std::move(entry.payload));
      }
    }
  } catch (const std::exception& error) {
    log::info("cache: cannot read the device code of an object: {}", error.what());
  }
  return payloads;
}

bool has_lto_entries(const std::string& object)
{
  try {
    if (!ElfReader::looks_like_elf(object)) {
      return false;
    }
    const ElfReader elf(object, "object");
    for (std::string_view section : find_fatbin_sections(elf, "object")) {
      for (const auto& entry : read_fatbin(section, "object")) {
        if (entry.kind == FatbinKind::ltoir || entry.kind == FatbinKind::other) {
          return true;
        }
      }
    }
  } catch (const std::exception&) {
    return true;  // not readable: cannot tell, so bound
  }
  return false;
}

// The roots the object depends on: those it names in its host bytes or its decompressed device
// code (__FILE__, assert, debug and line info), and both where it holds bytes no tool here can
// read (LTO-IR). The module id of -rdc hashes the source's path without naming it: `nvfresh
// compare` factors it out (DESIGN.md: what a compile of this tree would give), so it binds nothing.
PathMap::Named roots_bound(const std::string& object, const PathMap& map)
{
  if (has_lto_entries(object)) {
    return {true, true};
  }
  PathMap::Named named = map.roots_named(object);
  for (const auto& payload : device_payloads(object)) {
    named |= map.roots_named(payload);
  }
  return named;
}

ManifestEntry manifest_entry_of(const Record& record, const PathMap& map)
{
  ManifestEntry entry;
  entry.time_ns = now_ns();
  for (const auto& input : record.inputs) {
    Digest hash = input.file.hash;
    if (input.role == InputRole::options_file) {
      auto content = try_read_file(input.file.path, k_max_options_file);
      if (!content || hash_bytes(*content) != input.file.hash) {
        throw std::runtime_error(input.file.path + " changed since the compile read it");
      }
      hash = hash_bytes(map.text_to_key(*content));
    }
    entry.inputs.push_back({map.to_key(input.file.path),
                            hash,
                            std::string(role_name(input.role)),
                            join_passes(input.passes),
                            {},
                            std::nullopt});
  }
  for (const auto& probe : probe_paths(record.probes)) {
    add_probe(entry.probes, map.to_key(probe));
  }
  for (DirectoryStamp dir : record.probe_dirs) {
    dir.path = map.to_key(dir.path);
    entry.probe_dirs.push_back(std::move(dir));
  }
  for (const auto& lookup : path_lookups_of(record)) {
    entry.lookups.push_back({lookup.name, map.to_key(lookup.resolved), lookup.program});
  }
  return entry;
}

// Whether the compile could see the comments of its headers: it printed something (a diagnostic
// quotes the source line), asked for line information (ptxas puts the source's mtime in the
// cubin's line table), kept comments in the preprocessed text (-C, -CC), took any comment for a
// fallthrough mark (-Wimplicit-fallthrough=1), has clang read doc comments (-Wdocumentation…,
// -Weverything, with -ccbin clang++), or has GCC judge the blanks at line ends or the bytes of
// comments (-Wtrailing-whitespace, -Winvalid-utf8). Its words are the command's, its options files' and
// NVCC_PREPEND_FLAGS' and NVCC_APPEND_FLAGS', each also split at ',' and after '=' (-Xcompiler=-C,-O2).
bool comments_may_matter(const Record& record, const std::vector<std::string>& command,
                         const Environment& env)
{
  if (!record.console_out.empty() || !record.console_err.empty()) {
    return true;
  }
  std::vector<std::string> words = command;
  for (const auto& input : record.inputs) {
    if (input.role == InputRole::options_file) {
      auto content = try_read_file(input.file.path, k_max_options_file);
      if (!content) {
        return true;
      }
      auto more = split_words(*content, k_nvcc_options_file_quotes);
      words.insert(words.end(), more.begin(), more.end());
    }
  }
  for (const std::string name : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) {
    auto more = split_words(env_value(env, name), k_nvcc_env_flags_quotes);
    words.insert(words.end(), more.begin(), more.end());
  }
  constexpr std::array<std::string_view, 9> k_seeing = {"-G",
                                                        "--device-debug",
                                                        "-lineinfo",
                                                        "--generate-line-info",
                                                        "-generate-line-info",
                                                        "-C",
                                                        "-CC",
                                                        "--lineinfo",
                                                        "-Wimplicit-fallthrough=1"};
  const auto sees = [&](std::string_view part) {
    return std::find(k_seeing.begin(), k_seeing.end(), part) != k_seeing.end() ||
           part.starts_with("-Wdocumentation") || part == "-Weverything" ||
           part.starts_with("-Wtrailing-whitespace") || part == "-Winvalid-utf8";
  };
  for (const auto& word : words) {
    std::string_view rest = word;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view part = rest.substr(0, comma);
      const size_t equals = part.find('=');
      if (sees(part) || (equals != std::string_view::npos && sees(part.substr(equals + 1)))) {
        return true;
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return false;
}

// The code digest (cache/code_text.hpp) of each of the tree's headers, read now and taken only
// where the bytes are still those the compile read: a file that differs from it only in comments
// nothing sees may then stand in for it. Only headers: a file that a program other than the C/C++
// front ends read (InputRole::data: the assembler's .incbin) is bytes. None at all where the
// source or a header of the tree may embed a file (`.incbin`, `#embed`: code_text.hpp), which an
// integrated assembler or the preprocessor then reads as bytes though it is named a header.
void add_code_digests(ManifestEntry& entry, const Record& record)
{
  std::vector<std::pair<size_t, std::string>> headers;
  for (size_t i = 0; i < record.inputs.size() && i < entry.inputs.size(); ++i) {
    const RecordedInput& input = record.inputs[i];
    const bool tree_header =
      input.role == InputRole::header && entry.inputs[i].path != input.file.path;
    if (!tree_header && input.role != InputRole::source) {
      continue;  // not the tree's text (the toolkit's comments are not edited)
    }
    auto content = try_read_file(input.file.path, k_max_code_file);
    if (!content || hash_bytes(*content) != entry.inputs[i].hash) {
      continue;
    }
    if (may_embed_files(*content)) {
      log::info("cache: {} may embed a file (.incbin, #embed): comments count in every header",
                input.file.path);
      return;
    }
    if (tree_header) {
      headers.emplace_back(i, std::move(*content));
    }
  }
  for (const auto& [i, content] : headers) {
    entry.inputs[i].code = code_digest(content);
  }
}

// The stamps of the record's inputs that still hold now and have settled (FileHasher's rule: a
// same-size rewrite within one coarse timestamp tick keeps its stat), with their device: a lookup
// in another build dir of this checkout then stats those files and hashes none of them.
// An options file has none: its entry hash is of its content with the roots mapped.
void add_input_stamps(ManifestEntry& entry, const Record& record, FileHasher& hasher)
{
  std::vector<const std::string*> paths;
  paths.reserve(record.inputs.size());
  for (const auto& input : record.inputs) {
    paths.push_back(&input.file.path);
  }
  const std::vector<FileStat> now = hasher.stat_ahead(paths);
  const std::int64_t settled_before = now_ns() - FileHasher::k_default_settle_ns;
  for (size_t i = 0; i < record.inputs.size() && i < entry.inputs.size(); ++i) {
    const FileStat& s = now[i];
    if (record.inputs[i].role != InputRole::options_file &&
        record.inputs[i].file.same_stamp_as(s) && s.ctime_ns <= settled_before) {
      entry.inputs[i].stamp = {s.size, s.mtime_ns, s.ctime_ns, s.inode, s.device};
    }
  }
}

}  // namespace

Digest result_key(const Digest& manifest_key, const ManifestEntry& entry)
{
  Hasher hasher;
  hasher.tag(k_key_version).tag("result").field(manifest_key.to_hex());
  hasher.tag("bound").field(entry.bound_build_root).field(entry.bound_source_root);
  hasher.tag("inputs");
  for (const auto& input : entry.inputs) {
    hasher.field(input.path).field(input.hash.to_hex());
  }
  hasher.tag("probes");  // each probe's whole path, as when they were stored one by one
  for (const auto& run : entry.probes) {
    for (const auto& name : run.names) {
      hasher.field(probe_run_path(run.dir, name));
    }
  }
  hasher.tag("lookups");
  for (const auto& lookup : entry.lookups) {
    hasher.field(lookup.name).field(lookup.resolved);
  }
  return hasher.digest();
}

size_t drop_relinked_entries(const Digest& manifest_key, std::vector<ManifestEntry>& entries)
{
  return std::erase_if(entries, [&](const ManifestEntry& entry) {
    const Digest own = result_key(manifest_key, entry);
    if (own == entry.result) {
      return false;
    }
    log::info("remote: entry {} refused: it names another result key than its input set's ({})",
              entry.result.short_hex(), own.short_hex());
    return true;
  });
}

namespace {

struct LookupSet {
  std::vector<RecordedInput> inputs;
  std::vector<ProbeGroup> probes;
  std::vector<DirectoryStamp> probe_dirs;
};

}  // namespace

std::optional<Digest> options_file_hash(const std::string& path, const PathMap& map)
{
  auto content = try_read_file(path, k_max_options_file);
  if (!content) {
    return std::nullopt;
  }
  return hash_bytes(map.text_to_key(*content));
}

void seed_hasher(const CacheHit& hit, FileHasher& hasher)
{
  std::vector<FileFingerprint> known;
  known.reserve(hit.inputs.size());
  for (const auto& input : hit.inputs) {
    if (input.role != InputRole::options_file) {
      known.push_back(input.file);
    }
  }
  hasher.seed(known);
}

std::vector<ProbeGroup> probe_groups_in_tree(const std::vector<ProbeRun>& runs, const PathMap& map)
{
  std::vector<ProbeGroup> groups;
  groups.reserve(runs.size());
  ProbeGroup loose;  // whole paths, each stat'ed itself
  for (const auto& run : runs) {
    // A run's directory is mapped once: no root token holds a '/', so a probe's directory and
    // name map apart to what its whole path maps to.
    std::string dir = run.dir.empty() ? std::string() : map.to_tree(run.dir);
    const bool as_group =
      !dir.empty() && dir.front() == '/' &&
      std::none_of(run.names.begin(), run.names.end(), [](const std::string& name) {
        return name.empty() || name.find(k_root_token_start) != std::string::npos;
      });
    if (as_group) {
      groups.push_back({std::move(dir), run.names, {}});
      continue;
    }
    for (const auto& name : run.names) {
      loose.names.push_back(map.to_tree(probe_run_path(run.dir, name)));
    }
  }
  if (!loose.names.empty()) {
    groups.push_back(std::move(loose));
  }
  return groups;
}

namespace {

LookupSet lookup_set_in_tree(const ManifestEntry& entry, const PathMap& map)
{
  LookupSet set;
  set.inputs.reserve(entry.inputs.size());
  for (const auto& input : entry.inputs) {
    RecordedInput recorded;
    recorded.file.path = map.to_tree(input.path);
    recorded.file.hash = input.hash;
    recorded.role = role_from_name(input.role).value_or(InputRole::header);
    set.inputs.push_back(std::move(recorded));
  }
  set.probes = probe_groups_in_tree(entry.probes, map);
  for (DirectoryStamp dir : entry.probe_dirs) {
    dir.path = map.to_tree(dir.path);
    set.probe_dirs.push_back(std::move(dir));
  }
  return set;
}

// Where this tree's file of an input has the stamp the entry stored (device included: the same
// file, as the source tree's and the toolkit's are for every build dir of a checkout), its content
// is the entry's: the input takes the stamp, so that neither the check nor the record a hit writes
// reads the file. The indices of the inputs vouched for so.
std::vector<size_t> take_stored_stamps(const ManifestEntry& entry, LookupSet& set,
                                       FileHasher& hasher)
{
  std::vector<const std::string*> paths;
  std::vector<size_t> stamped;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    if (entry.inputs[i].stamp.known()) {
      paths.push_back(&set.inputs[i].file.path);
      stamped.push_back(i);
    }
  }
  const std::vector<FileStat> now = hasher.stat_ahead(paths);
  std::vector<size_t> vouched;
  vouched.reserve(stamped.size());
  for (size_t n = 0; n < stamped.size(); ++n) {
    const InputStamp& stored = entry.inputs[stamped[n]].stamp;
    const FileStat& s = now[n];
    if (!s.exists || !s.is_regular || s.size != stored.size || s.mtime_ns != stored.mtime_ns ||
        s.ctime_ns != stored.ctime_ns || s.inode != stored.inode || s.device != stored.device) {
      continue;
    }
    FileFingerprint& file = set.inputs[stamped[n]].file;
    file.size = s.size;
    file.mtime_ns = s.mtime_ns;
    file.ctime_ns = s.ctime_ns;
    file.inode = s.inode;
    vouched.push_back(stamped[n]);
  }
  return vouched;
}

// The fingerprints of the vouched inputs, handed to the hasher (FileHasher::seed) where a compile
// may follow (the entry did not match): its record then hashes none of them again.
void seed_vouched(const LookupSet& set, const std::vector<size_t>& vouched, FileHasher& hasher)
{
  std::vector<FileFingerprint> known;
  known.reserve(vouched.size());
  for (const size_t i : vouched) {
    known.push_back(set.inputs[i].file);
  }
  hasher.seed(known);
}

// After a match: every input of the set as the disk has it now, the stamp included (a vouched
// input has it already; the check hashed every other one, so the hasher has it at hand). An
// options file keeps its mapped hash: the record takes its own fingerprint (compile/serve.cpp).
void complete_fingerprints(LookupSet& set, const std::vector<size_t>& vouched, FileHasher& hasher)
{
  std::vector<char> is_vouched(set.inputs.size(), 0);
  for (const size_t i : vouched) {
    is_vouched[i] = 1;
  }
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    RecordedInput& input = set.inputs[i];
    if (input.role == InputRole::options_file || is_vouched[i] != 0) {
      continue;
    }
    if (FingerprintResult now = hasher.fingerprint(input.file.path); now.fingerprint) {
      input.file = *now.fingerprint;
    }
  }
}

// Where `changed` is an input with a code digest whose file now has that code (it differs from
// the entry only in comments nothing sees): the input takes the file's hash, in the lookup set and
// in `entry` (so that the record a hit writes holds what the disk holds), its path goes to
// *comment_only, and the answer is true. Each input once: a file that changes again is a change.
bool same_code_now(ManifestEntry& entry, LookupSet& set, const StaleReason& changed,
                   std::vector<std::string>& comment_only)
{
  if (changed.kind != Cause::input_changed ||
      std::find(comment_only.begin(), comment_only.end(), changed.path) != comment_only.end()) {
    return false;
  }
  for (size_t i = 0; i < set.inputs.size() && i < entry.inputs.size(); ++i) {
    if (set.inputs[i].file.path != changed.path || !entry.inputs[i].code) {
      continue;
    }
    auto content = try_read_file(changed.path, k_max_code_file);
    if (!content || code_digest(*content) != entry.inputs[i].code) {
      return false;
    }
    const Digest now = hash_bytes(*content);
    set.inputs[i].file.hash = now;
    entry.inputs[i].hash = now;
    comment_only.push_back(changed.path);
    return true;
  }
  return false;
}

// Does the disk (and PATH) still look as the entry says? The first difference, or "". An input
// that differs only in comments nothing sees is no difference: it takes its hash now in `entry`.
// On a match, *matched (when given) gets the set as this tree has it.
std::string mismatch(ManifestEntry& entry, const PathMap& map, FileHasher& hasher,
                     const std::string& path_value, const std::string& working_dir,
                     MatchedSet* matched = nullptr)
{
  // The check a skip makes (freshness/input_check.hpp), on the entry's input set in this tree: an
  // input whose file still has the stamp the entry stored is unchanged; every other one is judged
  // by its hash (the tree's hash cache makes that a stat where the file is unchanged).
  LookupSet set = lookup_set_in_tree(entry, map);
  const std::vector<size_t> vouched = take_stored_stamps(entry, set, hasher);
  const auto differs = [&](std::string why) {
    seed_vouched(set, vouched, hasher);
    return why;
  };
  // Options files (the Makefiles generator's includes_CUDA.rsp) are compared by their content
  // with the roots mapped, as the arguments they hold are in the manifest key; the check below
  // takes the other inputs.
  std::vector<RecordedInput> without_options_files;
  const bool has_options_files =
    std::any_of(set.inputs.begin(), set.inputs.end(),
                [](const RecordedInput& input) { return input.role == InputRole::options_file; });
  if (has_options_files) {
    for (const auto& input : set.inputs) {
      if (input.role != InputRole::options_file) {
        without_options_files.push_back(input);
      } else if (options_file_hash(input.file.path, map) != input.file.hash) {
        return differs(input.file.path + " holds other options");
      }
    }
  }
  std::vector<std::string> same_code;
  while (auto changed = first_changed_lookup(
           {has_options_files ? without_options_files : set.inputs, set.probes, set.probe_dirs},
           hasher)) {
    if (!same_code_now(entry, set, *changed, same_code)) {
      return differs(changed->describe());
    }
    if (has_options_files) {  // the file's new hash in the checked copy too
      const auto updated =
        std::find_if(set.inputs.begin(), set.inputs.end(),
                     [&](const RecordedInput& input) { return input.file.path == changed->path; });
      for (auto& input : without_options_files) {
        if (updated != set.inputs.end() && input.file.path == changed->path) {
          input.file.hash = updated->file.hash;
        }
      }
    }
  }
  for (const auto& lookup : entry.lookups) {
    if (resolve_in_path(lookup.name, path_value, working_dir, lookup.program) !=
        map.to_tree(lookup.resolved)) {
      return differs(lookup.name + " resolves elsewhere on PATH");
    }
  }
  for (const auto& path : same_code) {
    log::info("cache: {} differs from entry {} only in comments", path, entry.result.short_hex());
  }
  if (matched != nullptr) {
    complete_fingerprints(set, vouched, hasher);
    matched->inputs = std::move(set.inputs);
    matched->probes = std::move(set.probes);
    matched->comment_only = std::move(same_code);
  }
  return {};
}

// The root of another tree that an entry bound to these roots names (this tree's root is
// elsewhere), or "": it names only this tree's roots, or none.
std::string other_root_named(const CacheEntry::Binding& bound, const TreeRoots& roots)
{
  if (!bound.source_root.empty() && bound.source_root != roots.source) {
    return bound.source_root;
  }
  if (!bound.build_root.empty() && bound.build_root != roots.build) {
    return bound.build_root;
  }
  return {};
}

CacheEntry::Binding binding_of(const ManifestEntry& entry)
{
  return {entry.bound_build_root, entry.bound_source_root};
}

// What a hit of an entry naming `other` says: another checkout where it names another source
// tree, another build dir where it names only another build tree.
std::string other_tree_note(const CacheEntry::Binding& bound, const std::string& other)
{
  if (other.empty()) {
    return {};
  }
  return fmt::format("served from another {}: names {}",
                     other == bound.source_root ? "checkout" : "build dir", other);
}

CacheEntry entry_of(const Record& record, std::string object, const PathMap& map,
                    const std::vector<std::string>& command, const Environment& env)
{
  CacheEntry entry;
  entry.object = std::move(object);
  for (const auto& dep : record.depfile_prerequisites) {
    entry.depfile_prerequisites.push_back(map.text_to_key(dep));
  }
  entry.console_mode = record.console_mode;
  entry.console_out = map.text_to_key(record.console_out);
  entry.console_err = map.text_to_key(record.console_err);
  entry.console_terminals = record.console_terminals;
  entry.console_terminal_env = record.console_terminal_env;
  entry.components = record.components;
  entry.created_ns = now_ns();
  entry.compile_ns = record.end_ns - record.start_ns;
  entry.origin_tree = map.roots().build;
  entry.origin_cwd = record.working_dir;
  entry.origin_object = record.object;
  entry.nvcc_version = record.nvcc_version;
  entry.origin_command = command;
  entry.origin_env = record.env;
  for (const char* name : {"HOME", "TMPDIR", "LANG", "LC_ALL"}) {
    if (env.count(name) != 0) {
      entry.origin_env[name] = env.at(name);
    }
  }
  return entry;
}

}  // namespace

ObjectCache::ObjectCache(const CacheSettings& settings) : m_storage(settings) {}

std::optional<Digest> ObjectCache::manifest_key(const CompileIdentity& identity, const PathMap& map,
                                                FileHasher& hasher) const
{
  auto source = hasher.fingerprint(identity.source);
  if (!source.fingerprint) {
    return std::nullopt;
  }
  Hasher key;
  key.tag(k_key_version).tag("args");
  for (const auto& arg : identity.signature_args) {
    key.field(map.text_to_key(arg));
  }
  key.tag("env");
  for (const auto& [name, value] : identity.signature_env) {
    if (name != k_path_variable) {  // judged by what it resolves: the entries' lookups
      key.field(name).field(map.text_to_key(value));
    }
  }
  key.tag("cwd").field(map.to_key(identity.working_dir));
  key.tag("compiler").field(identity.compiler);
  key.tag("source").field(map.to_key(identity.source)).field(source.fingerprint->hash.to_hex());
  return key.digest();
}

struct ObjectCache::RemoteLookup {
  RemoteBackend& remote;
  const CompileIdentity& identity;
  std::string object_output;
  bool fetched = false;  // an entry came from the remote
};

std::optional<CacheHit> ObjectCache::lookup(const CompileIdentity& identity, FileHasher& hasher,
                                            const Environment& env)
{
  PathMap map(tree_roots_of(identity.build_tree));
  auto key = manifest_key(identity, map, hasher);
  if (!key) {
    return std::nullopt;
  }
  const SearchPath path{env_value(env, std::string(k_path_variable)), identity.working_dir};
  // The manifest's entries are parsed one at a time, newest first, up to the first that matches:
  // the older ones (up to k_manifest_entry_limit, each thousands of lines) are not parsed.
  std::optional<CacheHit> hit;
  std::optional<CacheHit> elsewhere;  // one naming another tree: served when none names this one
  if (auto text = store().read_manifest_text(*key)) {
    for_each_manifest_entry(
      *text,
      [&](ManifestEntry& entry) {
        hit = judge(entry, *key, map, hasher, path, nullptr, elsewhere);
        return hit.has_value();
      },
      nullptr,
      [&](const ManifestEntry& entry) {  // not parsed further where judge would pass it over
        return !passed_over(entry, other_root_named(binding_of(entry), map.roots()),
                            elsewhere.has_value());
      });
  }
  if (!hit) {
    hit = std::move(elsewhere);
  }
  if (!hit) {
    m_storage.with_remote(*key, false, [&](RemoteBackend& remote) {
      hit = remote_lookup(remote, identity, *key, map, hasher, path);
    });
  }
  if (hit) {
    note_hit(hit->key, hit->entry);
    return hit;
  }
  store().count(*key, CacheCounter::misses);
  return std::nullopt;
}

std::optional<CacheHit> ObjectCache::search(std::vector<ManifestEntry> entries, const Digest& key,
                                            const PathMap& map, FileHasher& hasher,
                                            const SearchPath& path, RemoteLookup* fetch)
{
  std::optional<CacheHit> elsewhere;  // one naming another tree: served when none names this one
  for (auto& entry : entries) {
    if (auto hit = judge(entry, key, map, hasher, path, fetch, elsewhere)) {
      return hit;
    }
  }
  return elsewhere;
}

bool ObjectCache::passed_over(const ManifestEntry& entry, const std::string& other,
                              bool have_elsewhere) const
{
  if (other.empty() || (settings().across_checkouts && !have_elsewhere)) {
    return false;
  }
  log::info("cache: entry {} does not match: bound to another tree (its object names {}){}",
            entry.result.short_hex(), other,
            settings().across_checkouts ? "" : "; NVFRESH_CACHE_ACROSS_CHECKOUTS=1 serves it");
  return true;
}

std::optional<CacheHit> ObjectCache::judge(ManifestEntry& entry, const Digest& key,
                                           const PathMap& map, FileHasher& hasher,
                                           const SearchPath& path, RemoteLookup* fetch,
                                           std::optional<CacheHit>& elsewhere)
{
  const std::string other = other_root_named(binding_of(entry), map.roots());
  if (passed_over(entry, other, elsewhere.has_value())) {
    return std::nullopt;
  }
  if (fetch != nullptr && !stat_file(store().entry_file(entry.result)).is_regular) {
    // Judged against the disk first, as a local entry: only a match is worth fetching.
    if (std::string why = mismatch(entry, map, hasher, path.path_value, path.working_dir);
        !why.empty()) {
      log::info("remote: entry {} does not match: {}", entry.result.short_hex(), why);
      return std::nullopt;
    }
    std::int64_t bytes = 0;
    auto fetched = fetch->remote.fetch_entry(
      result_action(key, entry, fetch->identity, fetch->identity.object, map, k_key_version),
      fetch->object_output, bytes);
    store().count(key, CacheCounter::remote_bytes_down, bytes);
    if (!fetched) {
      log::info("remote: entry {} is not on the remote", entry.result.short_hex());
      return std::nullopt;
    }
    // Stored as it came, never bound to the keys here: it must name them itself.
    if (std::string refused = store().write_foreign_entry(key, entry.result, *fetched);
        !refused.empty()) {
      store().count(key, CacheCounter::remote_refused);
      log::info("remote: entry {} refused: {}", entry.result.short_hex(), refused);
      return std::nullopt;
    }
    fetch->fetched = true;
    log::info("remote: entry {} fetched ({} bytes)", entry.result.short_hex(), bytes);
  }
  MatchedSet matched;
  auto stored = matching_entry(entry, map, hasher, {path.path_value, path.working_dir}, &matched);
  if (!stored) {
    return std::nullopt;
  }
  if (stored->manifest_key != key) {
    log::info("cache: entry {} was stored under another manifest ({}): a miss",
              entry.result.short_hex(), stored->manifest_key.short_hex());
    return std::nullopt;
  }
  std::string note = other_tree_note(binding_of(entry), other);
  CacheHit hit{entry.result,
               std::move(*stored),
               std::move(entry),
               map,
               std::move(matched.inputs),
               std::move(matched.probes),
               std::move(note),
               std::move(matched.comment_only)};
  if (other.empty()) {
    return hit;
  }
  elsewhere = std::move(hit);
  return std::nullopt;
}

std::optional<CacheHit> ObjectCache::remote_lookup(RemoteBackend& backend,
                                                   const CompileIdentity& identity,
                                                   const Digest& key, const PathMap& map,
                                                   FileHasher& hasher, const SearchPath& path)
{
  std::int64_t bytes = 0;
  auto remote = backend.fetch_manifest(manifest_action(key, identity, map, k_key_version), bytes);
  store().count(key, CacheCounter::remote_bytes_down, bytes);
  if (!remote || remote->entries.empty()) {
    store().count(key, CacheCounter::remote_misses);
    log::info("remote: no manifest {} on the remote", key.short_hex());
    return std::nullopt;
  }
  // Neither kept nor judged: a relinked entry would serve another input set's result, from the
  // remote or from this machine's own cache.
  if (const size_t refused = drop_relinked_entries(key, remote->entries); refused != 0) {
    store().count(key, CacheCounter::remote_refused, static_cast<std::int64_t>(refused));
  }
  // Another machine's stat stamps say nothing about this machine's files (a container image
  // can repeat device and inode numbers): its inputs are judged by their hashes.
  for (auto& entry : remote->entries) {
    for (auto& input : entry.inputs) {
      input.stamp = InputStamp{};
    }
  }
  // Kept locally too: the next store uploads every input set seen, this machine's and others'.
  store().update_manifest(key, [&](Manifest& manifest) {
    for (const auto& entry : remote->entries) {
      const bool known =
        std::any_of(manifest.entries.begin(), manifest.entries.end(),
                    [&](const ManifestEntry& e) { return e.result == entry.result; });
      if (!known && manifest.entries.size() < k_manifest_entry_limit) {
        manifest.entries.push_back(entry);
      }
    }
  });
  RemoteLookup fetch{backend, identity, object_output_path(identity, identity.object, map)};
  auto hit = search(remote->entries, key, map, hasher, path, &fetch);
  store().count(key, hit ? CacheCounter::remote_hits : CacheCounter::remote_misses);
  return hit;
}

std::optional<CacheEntry> ObjectCache::matching_entry(ManifestEntry& entry, const PathMap& map,
                                                      FileHasher& hasher, const SearchPath& search,
                                                      MatchedSet* matched)
{
  if (std::string why =
        mismatch(entry, map, hasher, search.path_value, search.working_dir, matched);
      !why.empty()) {
    log::info("cache: entry {} does not match: {}", entry.result.short_hex(), why);
    return std::nullopt;
  }
  std::string error;
  auto stored = store().read_entry(entry.result, &error);
  if (!stored) {
    log::info("cache: entry {} unreadable ({}): a miss", entry.result.short_hex(), error);
    store().remove_entry(entry.result);
  }
  return stored;
}

std::optional<CacheEntry> ObjectCache::entry_for_record(const Record& record,
                                                        const std::string& build_tree,
                                                        std::string* elsewhere)
{
  if (!record.cache_entry) {
    return std::nullopt;
  }
  const Digest& key = *record.cache_entry;
  std::string error;
  auto stored = store().read_entry(key, &error);
  if (!stored) {
    log::info("cache: entry {} that the record names is unreadable ({})", key.short_hex(), error);
    return std::nullopt;
  }
  if (hash_bytes(stored->object) != record.output.hash) {
    log::info("cache: entry {} holds another object than the record names", key.short_hex());
    return std::nullopt;
  }
  // The binding, as a lookup checks it: an object that names another tree's paths is not what a
  // compile of this tree gives (the record may have been written by a hit from another checkout
  // while cache_across_checkouts was set, or the tree may have moved since).
  if (!stored->bound) {
    log::info("cache: entry {} does not say what its object names: looking it up", key.short_hex());
    return std::nullopt;
  }
  const bool names_a_root =
    !stored->bound->build_root.empty() || !stored->bound->source_root.empty();
  const std::string other =
    names_a_root ? other_root_named(*stored->bound, tree_roots_of(build_tree)) : std::string();
  if (!other.empty() && !settings().across_checkouts) {
    log::info("cache: entry {} that the record names is bound to another tree (its object names "
              "{}); NVFRESH_CACHE_ACROSS_CHECKOUTS=1 serves it",
              key.short_hex(), other);
    return std::nullopt;
  }
  if (elsewhere != nullptr) {
    *elsewhere = other_tree_note(*stored->bound, other);
  }
  note_hit(key, *stored);
  return stored;
}

void ObjectCache::note_hit(const Digest& key, const CacheEntry& entry)
{
  store().touch_entry(key);
  store().count(key, {{CacheCounter::hits, 1},
                      {CacheCounter::saved_ns, entry.compile_ns},
                      {CacheCounter::saved_bytes, static_cast<std::int64_t>(entry.object.size())}});
}

StoreOutcome ObjectCache::store_result(const CompileIdentity& identity, const Record& record,
                                       const std::vector<std::string>& command,
                                       const Environment& env)
{
  if (!record.trusted || !record.inputs_from_trace || record.console_mode == "none") {
    return {false, false,
            "not stored: the record is untrusted, untraced, or its output was not captured",
            std::nullopt};
  }
  if (!record.mtime_dependent.empty()) {
    // A touch changes such an output, and a hit is judged by content: it would serve the old one.
    return {false, false,
            "not stored: the output depends on its inputs' mtimes: " + record.mtime_dependent,
            std::nullopt};
  }
  try {
    if (!store().has_room()) {
      store().count(Digest{}, CacheCounter::not_stored_full);
      return {false, true,
              fmt::format("not cached: the file system of {} is below its free-space floor",
                          store().root()),
              std::nullopt};
    }
    PathMap map(tree_roots_of(identity.build_tree));
    FileHasher hasher;
    auto key = manifest_key(identity, map, hasher);
    auto object = try_read_file(record.object, k_max_object);
    if (!key || !object || hash_bytes(*object) != record.output.hash) {
      return {false, false, "not stored: the object or the source changed since it was recorded",
              std::nullopt};
    }
    ManifestEntry manifest_entry = manifest_entry_of(record, map);
    add_input_stamps(manifest_entry, record, hasher);
    if (!comments_may_matter(record, command, env)) {
      add_code_digests(manifest_entry, record);
    }
    const PathMap::Named bound = roots_bound(*object, map);
    manifest_entry.bound_build_root = bound.build ? map.roots().build : std::string();
    manifest_entry.bound_source_root = bound.source ? map.roots().source : std::string();
    manifest_entry.result = result_key(*key, manifest_entry);
    CacheEntry entry = entry_of(record, std::move(*object), map, command, env);
    entry.manifest_key = *key;
    entry.bound = binding_of(manifest_entry);
    entry.result_key = manifest_entry.result;
    entry.object_digest = record.output.hash;
    store().write_entry(manifest_entry.result, entry);
    store().update_manifest(*key, [&](Manifest& manifest) { add_entry(manifest, manifest_entry); });
    if (m_storage.remote_writable()) {
      publish(identity, *key, manifest_entry, entry, record.object, map);
    }
    return {true, false, fmt::format("stored as {}", manifest_entry.result.short_hex()),
            manifest_entry.result};
  } catch (const FileWriteError& error) {
    return {false, error.disk_full(), fmt::format("not cached: {}", error.what()), std::nullopt};
  } catch (const std::exception& error) {
    return {false, false, fmt::format("not cached: {}", error.what()), std::nullopt};
  }
}

void ObjectCache::publish(const CompileIdentity& identity, const Digest& key,
                          const ManifestEntry& entry, const CacheEntry& stored,
                          const std::string& object, const PathMap& map)
{
  // Only what every machine could check: every output present and not empty, every input still
  // there (the input root is read now).
  if (stored.object.empty()) {
    log::info("remote: not uploaded: the object is empty");
    return;
  }
  for (const auto& input : entry.inputs) {
    if (!stat_file(map.to_tree(input.path)).is_regular) {
      log::info("remote: not uploaded: input {} is gone", map.to_tree(input.path));
      return;
    }
  }
  auto manifest = store().read_manifest(key);
  if (!manifest) {
    return;
  }
  m_storage.upload(entry.result, CacheCounter::remote_uploads,
                   [&](RemoteBackend& remote, const std::string& job_dir) {
                     return remote.publish(
                       result_action(key, entry, identity, object, map, k_key_version),
                       object_output_path(identity, object, map), stored,
                       manifest_action(key, identity, map, k_key_version), *manifest, job_dir);
                   });
}

std::string ObjectCache::inputs_changed(const Digest& key, const CacheEntry& entry,
                                        FileHasher& hasher) const
{
  auto manifest = store().read_manifest(entry.manifest_key);
  for (auto& stored : manifest ? manifest->entries : std::vector<ManifestEntry>{}) {
    if (stored.result == key) {
      const PathMap map(tree_roots_of(entry.origin_tree));
      return mismatch(stored, map, hasher,
                      env_value(entry.origin_env, std::string(k_path_variable)), entry.origin_cwd);
    }
  }
  return "its input set is no longer in the cache";
}

bool ObjectCache::note_verified(const Digest& key, const CacheEntry& entry,
                                const std::map<std::string, Digest>& compiled)
{
  if (compiled == held_components(entry)) {
    store().count(key, CacheCounter::verified);
    return true;
  }
  store().count(key, CacheCounter::verify_mismatches);
  if (std::find(entry.other_variants.begin(), entry.other_variants.end(), compiled) !=
      entry.other_variants.end()) {
    return false;
  }
  CacheEntry updated = entry;
  updated.other_variants.push_back(compiled);
  try {
    store().write_entry(key, std::move(updated));
  } catch (const std::exception& error) {
    log::info("cache: cannot keep the new variant of {}: {}", key.short_hex(), error.what());
  }
  return false;
}

}  // namespace nvfresh

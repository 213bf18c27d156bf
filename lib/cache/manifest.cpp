// Manifest file format, version 1 (util/line_file.hpp: escaped TAB-separated fields, checksum).
// Stored as one zstd frame (util/compressed_file.hpp).
//
//   manifest := "nvfresh-manifest" TAB "1" LF entry* checksum
//   entry    := "entry" TAB hex32 TAB time_ns TAB bound_build TAB bound_source LF
//               (input | probe | probe_dir | lookup)*
//   input    := "input" TAB hex32 TAB role TAB passes TAB [stamp TAB] path LF
//               an input of every pass, with its content hash (role and passes as in records)
//   stamp    := size TAB mtime_ns TAB ctime_ns TAB inode TAB device
//               the stat stamp it had when stored (manifest.hpp: InputStamp), "0" fields when
//               none; manifests written before stamps have no stamp fields and still read
//   code     := "code" TAB hex32 LF
//               the digest of the input before it with its invisible comments taken out
//               (cache/code_text.hpp), where one that differs only in them may stand in for it
//   probes   := "probes" TAB dir (TAB name)+ LF        lookups that found nothing, by directory
//               (ProbeRun; older manifests have a "probe" TAB path line per probe, still read)
//   probe_dir := "probe_dir" TAB inode TAB device TAB mtime_ns TAB ctime_ns TAB path LF
//               a directory of probes that vouched for them when the compile was recorded
//               (freshness/input_check.hpp: its probes need no stat while its stat is unchanged)
//   lookup   := "lookup" TAB name TAB ("1"|"0") TAB resolved LF
//               a name found through PATH ("1": a program), resolved "" when found nowhere
//
// Paths are tree-relative ("\x02BUILD\x03/…", "\x02SOURCE\x03/…") or absolute. Entries are newest
// first; a reader keeps at most k_manifest_entry_limit. A manifest that fails its checks is a miss.
#include "cache/manifest.hpp"

#include "util/line_file.hpp"

#include <algorithm>

namespace nvfresh {

namespace {

constexpr std::string_view k_magic = "nvfresh-manifest";

ManifestEntry& current(Manifest& manifest, const LineFields& fields)
{
  if (manifest.entries.empty()) {
    throw LineParseError{"'" + fields[0] + "' before any entry"};
  }
  return manifest.entries.back();
}

void apply(LineFields& f, Manifest& manifest)
{
  if (f[0] == "entry") {
    expect_field_count(f, 5);
    ManifestEntry entry;
    entry.result = digest_field(f[1]);
    if (!parse_number(f[2], entry.time_ns)) {
      throw LineParseError{"bad entry time"};
    }
    entry.bound_build_root = f[3];
    entry.bound_source_root = f[4];
    manifest.entries.push_back(std::move(entry));
  } else if (f[0] == "input") {
    if (f.size() == 5) {
      current(manifest, f).inputs.push_back({f[4], digest_field(f[1]), f[2], f[3], {}, {}});
      return;
    }
    expect_field_count(f, 10);
    InputStamp stamp;
    if (!parse_number(f[4], stamp.size) || !parse_number(f[5], stamp.mtime_ns) ||
        !parse_number(f[6], stamp.ctime_ns) || !parse_number(f[7], stamp.inode) ||
        !parse_number(f[8], stamp.device)) {
      throw LineParseError{"bad input stamp"};
    }
    current(manifest, f)
      .inputs.push_back({std::move(f[9]), digest_field(f[1]), f[2], f[3], stamp, {}});
  } else if (f[0] == "probes") {
    if (f.size() < 3) {
      throw LineParseError{"'probes' without a name"};
    }
    current(manifest, f)
      .probes.push_back(
        {std::move(f[1]),
         {std::make_move_iterator(f.begin() + 2), std::make_move_iterator(f.end())}});
  } else if (f[0] == "probe") {
    expect_field_count(f, 2);
    add_probe(current(manifest, f).probes, f[1]);
  } else if (f[0] == "code") {
    expect_field_count(f, 2);
    auto& inputs = current(manifest, f).inputs;
    if (inputs.empty() || inputs.back().code) {
      throw LineParseError{"'code' without an input before it"};
    }
    inputs.back().code = digest_field(f[1]);
  } else if (f[0] == "probe_dir") {
    expect_field_count(f, 6);
    DirectoryStamp stamp;
    stamp.path = f[5];
    if (!parse_number(f[1], stamp.inode) || !parse_number(f[2], stamp.device) ||
        !parse_number(f[3], stamp.mtime_ns) || !parse_number(f[4], stamp.ctime_ns)) {
      throw LineParseError{"bad probe_dir stamp"};
    }
    current(manifest, f).probe_dirs.push_back(std::move(stamp));
  } else if (f[0] == "lookup") {
    expect_field_count(f, 4);
    current(manifest, f).lookups.push_back({f[1], f[3], f[2] == "1"});
  } else {
    throw LineParseError{"unknown line '" + f[0] + "'"};
  }
}

}  // namespace

std::string probe_run_path(std::string_view dir, std::string_view name)
{
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  path += dir;
  if (!dir.empty() && dir != "/") {
    path += '/';
  }
  path += name;
  return path;
}

void add_probe(std::vector<ProbeRun>& runs, std::string_view path)
{
  const size_t slash = path.rfind('/');
  std::string_view dir;
  std::string_view name = path;
  if (slash != std::string_view::npos && slash + 1 < path.size()) {
    dir = slash == 0 ? std::string_view("/") : path.substr(0, slash);
    name = path.substr(slash + 1);
    if (probe_run_path(dir, name) != path) {  // "//name": kept whole
      dir = {};
      name = path;
    }
  }
  if (runs.empty() || runs.back().dir != dir) {
    runs.push_back({std::string(dir), {}});
  }
  runs.back().names.emplace_back(name);
}

std::size_t probe_count(const std::vector<ProbeRun>& runs)
{
  std::size_t count = 0;
  for (const auto& run : runs) {
    count += run.names.size();
  }
  return count;
}

std::string serialize_manifest(const Manifest& manifest)
{
  LineWriter out(k_magic, k_manifest_format_version);
  for (const auto& entry : manifest.entries) {
    out.line("entry", entry.result, entry.time_ns, entry.bound_build_root, entry.bound_source_root);
    for (const auto& input : entry.inputs) {
      const InputStamp& s = input.stamp;
      out.line("input", input.hash, input.role, input.passes, s.size, s.mtime_ns, s.ctime_ns,
               s.inode, s.device, input.path);
      if (input.code) {
        out.line("code", *input.code);
      }
    }
    for (const auto& run : entry.probes) {
      out.line("probes", run.dir, run.names);
    }
    for (const auto& dir : entry.probe_dirs) {
      out.line("probe_dir", dir.inode, dir.device, dir.mtime_ns, dir.ctime_ns, dir.path);
    }
    for (const auto& lookup : entry.lookups) {
      out.line("lookup", lookup.name, lookup.program, lookup.resolved);
    }
  }
  return out.finish();
}

bool for_each_manifest_entry(std::string_view text, const std::function<bool(ManifestEntry&)>& each,
                             std::string* error,
                             const std::function<bool(const ManifestEntry&)>& wanted)
{
  // `reading` holds the entry being read (apply adds to its last entry); a new entry line hands
  // the one before it over.
  Manifest reading;
  std::size_t entries_read = 0;
  bool stopped = false;
  bool skipping = false;  // the entry being read is not wanted: its lines are passed over
  const auto hand_over = [&]() {
    if (reading.entries.empty() || skipping) {
      reading.entries.clear();
      return false;
    }
    ManifestEntry entry = std::move(reading.entries.back());
    reading.entries.clear();
    return each(entry);
  };
  try {
    const bool read = for_each_line_until(
      text, k_magic, k_manifest_format_version,
      [&](LineFields& fields) {
        if (fields[0] == "entry") {
          if (hand_over() || entries_read == k_manifest_entry_limit) {
            stopped = true;
            return true;
          }
          ++entries_read;
          skipping = false;
          apply(fields, reading);
          skipping = wanted && !wanted(reading.entries.back());
          return false;
        }
        if (!skipping) {
          apply(fields, reading);
        }
        return false;
      },
      error);
    if (!read) {
      return false;
    }
  } catch (const LineParseError& failure) {
    if (error != nullptr) {
      *error = failure.message;
    }
    return false;
  }
  if (!stopped) {
    hand_over();
  }
  return true;
}

std::optional<Manifest> parse_manifest(std::string_view text, std::string* error)
{
  Manifest manifest;
  if (!for_each_manifest_entry(
        text,
        [&](ManifestEntry& entry) {
          manifest.entries.push_back(std::move(entry));
          return false;
        },
        error)) {
    return std::nullopt;
  }
  return manifest;
}

void add_entry(Manifest& manifest, ManifestEntry entry)
{
  std::erase_if(manifest.entries, [&](const ManifestEntry& e) { return e.result == entry.result; });
  manifest.entries.insert(manifest.entries.begin(), std::move(entry));
  if (manifest.entries.size() > k_manifest_entry_limit) {
    manifest.entries.resize(k_manifest_entry_limit);
  }
}

}  // namespace nvfresh

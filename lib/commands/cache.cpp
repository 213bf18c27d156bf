// nvfresh cache <stats|clear|evict|verify>: the object cache shared by the user's build trees
// (cache/object_cache.hpp).
//   stats [--json]                      entries, size and cap, hits, misses, stores, evictions,
//                                       bytes and nvcc time saved, verifications
//   clear                               removes every entry
//   evict [--max-size S] [--older-than D]   least recently used first, down to S; entries not used
//                                       for D (30d, 12h, 90m, 3600s)
//   verify [--sample N] [--json]        compiles N stored entries again (all without --sample) and
//                                       compares their codegen; exits 1 when one differs or
//                                       is damaged; one whose inputs changed is not verified
#include "cache/entry_verifier.hpp"
#include "cache/object_cache.hpp"
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "util/clock.hpp"
#include "util/disk_space.hpp"
#include "util/json.hpp"
#include "util/process.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <random>

namespace nvfresh {

namespace {

constexpr int k_exit_differs = 1;

std::optional<std::int64_t> parse_duration_ns(const std::string& text)
{
  if (text.empty()) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  double seconds = 0;
  if (unit.empty() || unit == "s") {
    seconds = value;
  } else if (unit == "m") {
    seconds = value * 60;
  } else if (unit == "h") {
    seconds = value * 3600;
  } else if (unit == "d") {
    seconds = value * 86400;
  } else if (unit == "w") {
    seconds = value * 7 * 86400;
  } else {
    return std::nullopt;
  }
  return value < 0 ? std::nullopt
                   : std::optional<std::int64_t>(static_cast<std::int64_t>(seconds * 1e9));
}

std::int64_t counter(const CacheCounters& counters, CacheCounter which)
{
  return std::max<std::int64_t>(0, counters[which]);
}

nlohmann::json stats_json(const ObjectCache& cache, const CacheCounters& counters, size_t entries)
{
  nlohmann::json json = {{"dir", cache.settings().dir},
                         {"entries", entries},
                         {"max_bytes", cache.store().limits().max_bytes},
                         {"min_free_bytes", cache.store().limits().min_free}};
  for (CacheCounter which : k_cache_counters) {
    json[std::string(counter_name(which))] = counter(counters, which);
  }
  return json;
}

void print_stats(const ObjectCache& cache, const CacheCounters& counters, size_t entries)
{
  const auto& limits = cache.store().limits();
  const FileSystemSpace space = file_system_space(cache.settings().dir);
  fmt::print("nvfresh cache: {}\n", cache.settings().dir);
  fmt::print("  entries      {}\n", entries);
  fmt::print("  size         {} of a {} cap ({} files)\n",
             format_size(static_cast<std::uint64_t>(counter(counters, CacheCounter::bytes))),
             format_size(limits.max_bytes), counter(counters, CacheCounter::files));
  if (space.known) {
    fmt::print("  free space   {} on {} (stores stop below {})\n", format_size(space.free_bytes),
               space.mount_point, format_size(limits.min_free));
  }
  fmt::print("  hits {}, misses {}, stores {}, evictions {}\n",
             counter(counters, CacheCounter::hits), counter(counters, CacheCounter::misses),
             counter(counters, CacheCounter::stores), counter(counters, CacheCounter::evictions));
  fmt::print("  saved        {} of objects, {:.1f} s of nvcc time\n",
             format_size(static_cast<std::uint64_t>(counter(counters, CacheCounter::saved_bytes))),
             static_cast<double>(counter(counters, CacheCounter::saved_ns)) / 1e9);
  fmt::print(
    "  steps        {} served, {} run, {} stored (cicc, ptxas); {:.1f} s of tool time saved\n",
    counter(counters, CacheCounter::step_hits), counter(counters, CacheCounter::step_misses),
    counter(counters, CacheCounter::step_stores),
    static_cast<double>(counter(counters, CacheCounter::step_saved_ns)) / 1e9);
  fmt::print("  verified     {} the same, {} with codegen that differs from the entry\n",
             counter(counters, CacheCounter::verified),
             counter(counters, CacheCounter::verify_mismatches));
  const std::int64_t remote_lookups = counter(counters, CacheCounter::remote_hits) +
                                      counter(counters, CacheCounter::remote_misses) +
                                      counter(counters, CacheCounter::remote_errors) +
                                      counter(counters, CacheCounter::remote_untrusted) +
                                      counter(counters, CacheCounter::remote_over_budget);
  const std::int64_t remote_steps = counter(counters, CacheCounter::remote_step_hits) +
                                    counter(counters, CacheCounter::remote_step_misses) +
                                    counter(counters, CacheCounter::remote_step_uploads);
  if (remote_lookups + counter(counters, CacheCounter::remote_uploads) + remote_steps != 0) {
    fmt::print(
      "  remote       hits {}, misses {}, errors {}, refused {}, untrusted {}, over budget {}, "
      "uploads {}; {} fetched, {} sent\n",
      counter(counters, CacheCounter::remote_hits), counter(counters, CacheCounter::remote_misses),
      counter(counters, CacheCounter::remote_errors),
      counter(counters, CacheCounter::remote_refused),
      counter(counters, CacheCounter::remote_untrusted),
      counter(counters, CacheCounter::remote_over_budget),
      counter(counters, CacheCounter::remote_uploads),
      format_size(static_cast<std::uint64_t>(counter(counters, CacheCounter::remote_bytes_down))),
      format_size(static_cast<std::uint64_t>(counter(counters, CacheCounter::remote_bytes_up))));
  }
  if (remote_steps != 0) {
    fmt::print("  remote steps {} served, {} not on the remote, {} uploaded\n",
               counter(counters, CacheCounter::remote_step_hits),
               counter(counters, CacheCounter::remote_step_misses),
               counter(counters, CacheCounter::remote_step_uploads));
  }
  if (counter(counters, CacheCounter::not_stored_full) != 0) {
    fmt::print("  not stored   {} (the cache's file system was below its free-space floor)\n",
               counter(counters, CacheCounter::not_stored_full));
  }
}

int run_stats_command(ObjectCache& cache, bool json)
{
  const CacheCounters counters = cache.store().counters();
  const size_t entries = cache.store().entry_keys().size();
  if (json) {
    print_json(stats_json(cache, counters, entries));
  } else {
    print_stats(cache, counters, entries);
  }
  return 0;
}

int run_evict_command(ObjectCache& cache, const std::string& max_size,
                      const std::string& older_than)
{
  std::uint64_t max_bytes = cache.store().limits().max_bytes;
  if (!max_size.empty()) {
    auto parsed = parse_size(max_size);
    if (!parsed) {
      fmt::print(stderr, "nvfresh cache evict: --max-size {} is not a size (like 2G, 500M)\n",
                 max_size);
      return k_exit_usage_error;
    }
    max_bytes = *parsed;
  }
  std::int64_t older_than_ns = 0;
  if (!older_than.empty()) {
    auto age = parse_duration_ns(older_than);
    if (!age) {
      fmt::print(stderr, "nvfresh cache evict: --older-than {} is not a duration (like 30d, 12h)\n",
                 older_than);
      return k_exit_usage_error;
    }
    older_than_ns = now_ns() - *age;
  }
  EvictionSummary summary = cache.store().evict(max_bytes, older_than_ns);
  fmt::print("nvfresh cache: evicted {} files ({})\n", summary.files,
             format_size(static_cast<std::uint64_t>(summary.bytes)));
  return 0;
}

struct StoredVerification {
  std::optional<CacheEntry> entry;
  EntryVerification verified;
};

// One entry of cache verify: damaged when it is not the entry its key names (a file copied under
// another key), not verified when its own inputs changed since it was stored (compiled against
// today's inputs it would differ and be blamed wrongly), else compiled again and compared.
StoredVerification verify_stored_entry(ObjectCache& cache, const Digest& key,
                                       const std::string& scratch, FileHasher& hasher)
{
  StoredVerification result;
  std::string error;
  result.entry = cache.store().read_entry(key, &error);
  if (!result.entry) {
    result.verified.verdict = error == "missing" ? Verification::not_run : Verification::damaged;
    result.verified.detail = error == "missing" ? "gone (evicted meanwhile)" : error;
    return result;
  }
  if (result.entry->origin_command.empty()) {  // cache/remote_cache.hpp: entry_for_readers
    result.verified.verdict = Verification::not_run;
    result.verified.detail = "fetched from the remote, it keeps no command (a reader never runs a "
                             "writer's): NVFRESH_CACHE_VERIFY verifies it when a compile is served";
    return result;
  }
  if (std::string changed = cache.inputs_changed(key, *result.entry, hasher); !changed.empty()) {
    result.verified.verdict = Verification::not_verified;
    result.verified.detail = "inputs changed since stored (" + changed + "): not verified";
    return result;
  }
  result.verified = verify_entry(*result.entry, scratch);
  if (result.verified.verdict == Verification::same ||
      result.verified.verdict == Verification::differs ||
      result.verified.verdict == Verification::known_variant) {
    cache.note_verified(key, *result.entry, result.verified.compiled);
  }
  return result;
}

int run_verify_command(ObjectCache& cache, size_t sample, bool json)
{
  std::vector<Digest> keys = cache.store().entry_keys();
  if (sample != 0 && sample < keys.size()) {
    std::mt19937_64 engine{std::random_device{}()};
    std::shuffle(keys.begin(), keys.end(), engine);
    keys.resize(sample);
  }
  std::error_code no_tmpdir;
  std::string scratch = std::filesystem::temp_directory_path(no_tmpdir).string();  // TMPDIR
  if (no_tmpdir || scratch.empty()) {
    scratch = "/tmp";
  }
  nlohmann::json results = nlohmann::json::array();
  size_t differs = 0;
  size_t damaged = 0;
  FileHasher hasher;
  ProgressLine progress("nvfresh cache verify", progress_wanted(progress_facts(json)));
  size_t done = 0;
  for (const auto& key : keys) {
    progress.update(done, keys.size(), fmt::format(", {} differ", differs));
    auto [entry, verified] = verify_stored_entry(cache, key, scratch, hasher);
    ++done;
    differs += verified.verdict == Verification::differs ? 1 : 0;
    damaged += verified.verdict == Verification::damaged ? 1 : 0;
    const std::string object = entry ? entry->origin_object : std::string();
    if (json) {
      results.push_back({{"entry", key.to_hex()},
                         {"object", object},
                         {"verdict", verification_name(verified.verdict)},
                         {"detail", verified.detail}});
    } else {
      progress.clear_line();
      fmt::print("{:<14} {}  {}{}{}\n", verification_name(verified.verdict), key.short_hex(),
                 object, verified.detail.empty() ? "" : ": ", verified.detail);
    }
  }
  progress.clear();
  if (json) {
    print_json({{"verified", keys.size()},
                {"differs", differs},
                {"damaged", damaged},
                {"entries", results}});
  } else {
    fmt::print("nvfresh cache verify: {} entries compiled again, {} with codegen that differs{}\n",
               keys.size(), differs, damaged == 0 ? "" : fmt::format(", {} damaged", damaged));
  }
  return differs == 0 && damaged == 0 ? 0 : k_exit_differs;
}

}  // namespace

int run_cache(const std::vector<std::string>& args)
{
  SubcommandOptions cli("cache");
  cli.app().require_subcommand();
  bool json = false;
  std::string max_size;
  std::string older_than;
  size_t sample = 0;
  auto stats = cli.app().add_subcommand("stats", "entries, size and cap, hits, misses, savings");
  stats.add_flag("--json", json, "machine-readable output");
  auto clear = cli.app().add_subcommand("clear", "remove every entry");
  auto evict = cli.app().add_subcommand("evict", "remove least recently used entries");
  evict.add_option("--max-size", max_size, "evict down to this size (2G, 500M)");
  evict.add_option("--older-than", older_than, "evict what was not used for this long (30d, 12h)");
  auto verify = cli.app().add_subcommand("verify", "compile stored entries again and compare");
  verify.add_option("--sample", sample, "how many entries, chosen at random (default: all)");
  verify.add_flag("--json", json, "machine-readable output");
  if (auto status = cli.parse(args)) {
    return *status;
  }
  const Environment env = current_environment();
  CacheSettings settings = cache_settings(load_config(env), env);
  if (settings.dir.empty()) {
    fmt::print(stderr, "nvfresh cache: no cache directory (set NVFRESH_CACHE_DIR, or HOME)\n");
    return k_exit_usage_error;
  }
  ObjectCache cache(settings);
  if (stats.parsed()) {
    return run_stats_command(cache, json);
  }
  const std::string command = clear.parsed() ? "clear" : evict.parsed() ? "evict" : "verify";
  // A cache dir another user controls is neither cleaned nor verified (verify runs the commands
  // its entries name).
  if (std::string why = cache.store().refusal(); !why.empty()) {
    fmt::print(stderr,
               "nvfresh cache {}: not using the cache {}: {} (use a cache dir of your own, or set "
               "NVFRESH_CACHE_SHARED=1 for a team's)\n",
               command, settings.dir, why);
    return k_exit_usage_error;
  }
  try {
    if (clear.parsed()) {
      cache.store().clear();
      fmt::print("nvfresh cache: cleared {}\n", settings.dir);
      return 0;
    }
    if (evict.parsed()) {
      return run_evict_command(cache, max_size, older_than);
    }
    return run_verify_command(cache, sample, json);
  } catch (const std::exception& error) {  // a read-only cache dir, a lock that cannot be made
    fmt::print(stderr,
               "nvfresh cache {}: cannot change {}: {} (make it writable, or point "
               "NVFRESH_CACHE_DIR elsewhere)\n",
               command, settings.dir, error.what());
    return k_exit_usage_error;
  }
}

}  // namespace nvfresh

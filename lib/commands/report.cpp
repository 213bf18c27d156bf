// nvfresh report [-C build-dir] [-o report.html] [--json]: the build tree seen whole, from its
// records, link records and events log (report/build_report.hpp): the last build and the history,
// each TU's last compile time, what an edit of each header costs, the artifacts with their objects,
// and the cache's real hit/miss split. --json prints the data; otherwise one self-contained HTML
// page is written (report/report_html.hpp), to -o or "<build dir>/nvfresh-report.html".
#include "cache/object_cache.hpp"
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "config/config.hpp"
#include "record/events.hpp"
#include "report/build_report.hpp"
#include "report/report_html.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/keep_until_exit.hpp"
#include "util/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace nvfresh {

namespace {

// The shared cache's counters, when the cache is on and its directory exists (a report makes none).
StoreCounters read_store_counters(const Environment& env)
{
  CacheSettings settings = cache_settings(load_config(env), env);
  StoreCounters store;
  if (!settings.enabled || settings.dir.empty() || !stat_file(settings.dir).is_directory) {
    return store;
  }
  ObjectCache cache(settings);
  const CacheCounters counters = cache.store().counters();
  auto value = [&](CacheCounter which) { return std::max<std::int64_t>(0, counters[which]); };
  store.dir = settings.dir;
  store.hits = value(CacheCounter::hits);
  store.misses = value(CacheCounter::misses);
  store.step_hits = value(CacheCounter::step_hits);
  store.step_misses = value(CacheCounter::step_misses);
  store.step_saved_ns = value(CacheCounter::step_saved_ns);
  return store;
}

}  // namespace

int run_report(const std::vector<std::string>& args)
{
  SubcommandOptions cli("report");
  std::string build_dir = ".";
  std::string output;
  bool json = false;
  cli.add_build_dir(build_dir);
  cli.add_json(json);
  cli.app().add_option("-o,--output", output,
                       "the HTML file to write (default: <build dir>/nvfresh-report.html)");
  if (auto status = cli.parse(args)) {
    return *status;
  }
  const Environment env = current_environment();
  const bool show_progress = progress_wanted(progress_facts(json));
  ProgressLine proving("nvfresh report: records", show_progress);
  const ProvenTree& tree = keep_until_exit(prove_tree(
    build_dir, env, [&](size_t done, size_t total) { proving.update(done, total); },
    TreeRecords::every_record));
  proving.clear();
  ProgressLine gathering("nvfresh report: objects", show_progress);
  Report report =
    build_report(tree.record_root, tree.objects, tree.artifacts, read_events(tree.record_root),
                 [&](size_t done, size_t total) { gathering.update(done, total); });
  gathering.clear();
  report.store = read_store_counters(env);
  if (json) {
    print_json(report_to_json(report));
    return 0;
  }
  if (output.empty()) {
    output = tree.scope.build_dir + "/nvfresh-report.html";
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  write_file_atomically(output, render_report_html(report, std::chrono::nanoseconds(now).count()));
  fmt::print("nvfresh report: wrote {} ({} objects, {} inputs costed)\n", output, report.objects,
             report.header_costs.size());
  return 0;
}

}  // namespace nvfresh

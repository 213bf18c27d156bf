// nvfresh check [-C build-dir] [--json]: every recorded object of the build tree, fresh or stale
// with its reasons. Exit status: 0 all fresh, 1 stale found, 2 cannot tell (no records).
#include "commands/commands.hpp"
#include "config.hpp"
#include "record_store.hpp"
#include "tree_status.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nvfresh {

namespace {

nlohmann::json reason_json(const StaleReason& reason)
{
  return {{"kind", kind_name(reason.kind)}, {"path", reason.path}, {"before", reason.before},
          {"after", reason.after},          {"text", reason.describe()}};
}

nlohmann::json status_json(const ObjectStatus& status)
{
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& reason : status.verdict.reasons) {
    reasons.push_back(reason_json(reason));
  }
  return {{"object", status.object},
          {"source", status.source},
          {"fresh", status.verdict.fresh()},
          {"reasons", reasons}};
}

void print_text(const std::vector<ObjectStatus>& statuses, size_t stale)
{
  for (const auto& status : statuses) {
    if (status.verdict.fresh()) {
      continue;
    }
    fmt::print("stale  {}\n", status.object.empty() ? status.record_file : status.object);
    for (const auto& reason : status.verdict.reasons) {
      fmt::print("         {}\n", reason.describe());
    }
  }
  fmt::print("nvfresh check: {} of {} recorded objects stale\n", stale, statuses.size());
}

} // namespace

int run_check(const std::vector<std::string>& args)
{
  CLI::App app{"Report every recorded object as fresh or stale, with reasons", "nvfresh check"};
  std::string build_dir = ".";
  bool json = false;
  app.add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
  app.add_flag("--json", json, "machine-readable output");
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  Environment env = current_environment();
  std::string root = record_root_of_build_dir(load_config(env).record_dir, build_dir);
  auto statuses = evaluate_tree(root, env);
  size_t stale = 0;
  for (const auto& status : statuses) {
    stale += status.verdict.fresh() ? 0 : 1;
  }
  int exit_status = statuses.empty() ? 2 : (stale > 0 ? 1 : 0);
  if (json) {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& status : statuses) {
      objects.push_back(status_json(status));
    }
    fmt::print("{}\n", nlohmann::json{{"record_root", root}, {"objects", objects},
                                      {"stale", stale}, {"exit_status", exit_status}}
                         .dump(2));
  } else if (statuses.empty()) {
    fmt::print(stderr, "nvfresh check: no records under {} (was the build done through nvfresh?)\n",
               root);
  } else {
    print_text(statuses, stale);
  }
  return exit_status;
}

} // namespace nvfresh

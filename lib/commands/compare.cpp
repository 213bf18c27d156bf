// nvfresh compare A B [--json]: compares two compiled artifacts by normalized per-component digests.
// Exit status: 0 same, 1 different, 2 unreadable (or a usage error).
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "digest/comparison_report.hpp"
#include "digest/object_digest.hpp"
#include "util/json.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace nvfresh {

namespace {

constexpr int k_exit_same = 0;
constexpr int k_exit_different = 1;
constexpr int k_exit_unreadable = 2;

struct CompareOptions {
  std::string a;
  std::string b;
  bool json = false;
};

}  // namespace

int run_compare(const std::vector<std::string>& args)
{
  CompareOptions options;
  SubcommandOptions cli("compare");
  cli.app().add_option("A", options.a, "first artifact (.o, .fatbin, .cubin, .ptx)").required();
  cli.app().add_option("B", options.b, "second artifact").required();
  cli.add_json(options.json);
  cli.app().footer("Exit status: 0 same, 1 different, 2 unreadable (or a usage error).");
  if (auto status = cli.parse(args)) {
    return *status == 0 ? k_exit_same : k_exit_unreadable;
  }
  try {
    const Comparison comparison =
      compare_digests(digest_artifact(options.a), digest_artifact(options.b));
    if (options.json) {
      print_json(comparison_json(options.a, options.b, comparison));
    } else {
      fmt::print("{}", format_comparison(options.a, options.b, comparison));
    }
    std::fflush(stdout);
    return comparison.same() ? k_exit_same : k_exit_different;
  } catch (const DigestError& error) {
    fmt::print(stderr, "nvfresh compare: {}\n", error.what());
    return k_exit_unreadable;
  }
}

}  // namespace nvfresh

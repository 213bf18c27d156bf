#include "commands/commands.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvfresh {

const std::vector<Command>& commands()
{
  static const std::vector<Command> table = {
    {"check", "report every recorded object and linked artifact as fresh or stale, with reasons",
     run_check},
    {"explain", "show one object's record compared with the disk, and its build history",
     run_explain},
    {"compare", "compare two objects/fatbins/cubins/PTX by normalized per-component digests",
     run_compare},
    {"rdeps",
     "list the objects that depend on a file, through which pass, and the artifacts holding them",
     run_rdeps},
    {"link-record",
     "link launcher: run a link unchanged and record what it read (set by nvfresh.cmake)",
     run_link_record},
    {"repro",
     "run a compile N times under perturbation and report the distinct outputs (-- nvcc ..., or "
     "--artifact GLOB -- <command>)",
     run_repro},
    {"sync", "make the build tool rebuild exactly the stale objects (run before or inside a build)",
     run_sync},
    {"stats", "what nvfresh did in a build tree: compiles, skips (time saved), races, reasons",
     run_stats},
    {"cache",
     "the object cache shared by your build trees: stats, clear, evict, verify (compile entries "
     "again and compare)",
     run_cache},
    {"space",
     "build trees by size, free space per file system; --clean removes old regenerable ones",
     run_space},
    {"doctor",
     "check the setup of a build tree: every CUDA compile through nvfresh, sync, the tracer, "
     "disks, compiler caches, the build tool",
     run_doctor},
    {"report",
     "one self-contained HTML page (or --json): time per TU, what each header edit costs, "
     "artifacts, the cache's real hit/miss split",
     run_report},
    {"help", "list the subcommands, or show one's options: nvfresh help <command>", run_help},
    {"--version", "print nvfresh's version", run_version},
  };
  return table;
}

const Command* find_command(std::string_view name)
{
  for (const auto& command : commands()) {
    if (command.name == name) {
      return &command;
    }
  }
  return nullptr;
}

int run_guarded(const Command& command, const std::vector<std::string>& args, std::FILE* errors)
{
  constexpr int k_exit_unexpected = 2;
  std::string what;
  try {
    return command.run(args);
  } catch (const std::exception& error) {
    what = error.what();
  } catch (...) {
    what = "an unexpected error that is not a std::exception";
  }
  std::fflush(stdout);
  std::replace(what.begin(), what.end(), '\n', ' ');
  fmt::print(errors, "nvfresh {}: {}\n", command.name, what);
  std::fflush(errors);
  return k_exit_unexpected;
}

int run_help(const std::vector<std::string>& args)
{
  if (!args.empty() && find_command(args[0]) != nullptr && args[0] != "help") {
    return find_command(args[0])->run({"--help"});
  }
  fmt::print(
    "usage: nvfresh <compiler> <args...>     compile through nvfresh (e.g. nvfresh nvcc -c a.cu)\n"
    "       nvfresh <command> [options]\n\ncommands:\n");
  for (const auto& command : commands()) {
    fmt::print("  {:<10} {}\n", command.name, command.summary);
  }
  fmt::print(
    "\nsettings: NVFRESH_DISABLE, NVFRESH_RECORD_DIR, NVFRESH_LOG_FILE, NVFRESH_TRACE_LIB, "
    "NVFRESH_SPACE_FLOOR, NVFRESH_CONFIG,\n          NVFRESH_CACHE, NVFRESH_CACHE_DIR, "
    "NVFRESH_CACHE_MAX_SIZE, "
    "NVFRESH_CACHE_MIN_FREE, "
    "NVFRESH_CACHE_VERIFY,\n          NVFRESH_CACHE_ACROSS_CHECKOUTS, NVFRESH_CACHE_SHARED "
    "(see doc/manual.md, \"Settings\")\n");
  return 0;
}

int run_version(const std::vector<std::string>& /*args*/)
{
  fmt::print("nvfresh {}\n", NVFRESH_VERSION);
  return 0;
}

}  // namespace nvfresh

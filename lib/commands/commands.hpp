// nvfresh's subcommands: one table of name, one-line help and the function that runs it.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

using CommandFunction = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFunction run;
};

const std::vector<Command>& commands();
const Command* find_command(std::string_view name);

// The one top-level handler of every subcommand: runs it with `args`; an exception that escapes it
// becomes one line on `errors`, "nvfresh <command>: <what>", and exit status 2 (never an abort).
int run_guarded(const Command& command, const std::vector<std::string>& args,
                std::FILE* errors = stderr);

int run_help(const std::vector<std::string>& args);
int run_version(const std::vector<std::string>& args);
int run_sync(const std::vector<std::string>& args);
int run_check(const std::vector<std::string>& args);
int run_explain(const std::vector<std::string>& args);
int run_stats(const std::vector<std::string>& args);
int run_rdeps(const std::vector<std::string>& args);
int run_link_record(const std::vector<std::string>& args);
int run_repro(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_cache(const std::vector<std::string>& args);
int run_space(const std::vector<std::string>& args);
int run_doctor(const std::vector<std::string>& args);
int run_report(const std::vector<std::string>& args);

}  // namespace nvfresh

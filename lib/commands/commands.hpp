// nvfresh's subcommands: one table of name, one-line help and the function that runs it.
#pragma once

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

}  // namespace nvfresh

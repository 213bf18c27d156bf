#include "doctor/nvcc_runs.hpp"

#include "nvcc/nvcc_options.hpp"
#include "util/words.hpp"

#include <algorithm>

namespace nvfresh {

namespace {

bool separates_programs(const std::string& word)
{
  return word == "&&" || word == "||" || word == ";" || word == "|";
}

// The programs of a shell command line: its words, split at && || ; | (also when glued to the end
// of a word: "a.o;").
std::vector<std::vector<std::string>> programs_of(std::string_view command)
{
  std::vector<std::vector<std::string>> programs(1);
  for (auto word : split_words(command, k_shell_quotes)) {
    if (separates_programs(word)) {
      programs.emplace_back();
      continue;
    }
    bool ends_program = word.size() > 1 && word.back() == ';';
    if (ends_program) {
      word.pop_back();
    }
    programs.back().push_back(std::move(word));
    if (ends_program) {
      programs.emplace_back();
    }
  }
  std::erase_if(programs, [](const auto& words) { return words.empty(); });
  return programs;
}

// Programs that name paths but run no compiler: "cd <dir>", CMake's "cmake -E echo …" messages.
bool runs_no_compiler(const std::vector<std::string>& words)
{
  const std::string_view first = file_name_of(words.front());
  return first == "cd" || first == "echo" || first == "cmake" || first == ":";
}

bool is_nvfresh(std::string_view word)
{
  return file_name_of(word) == "nvfresh";
}

// nvcc's arguments: whether they make a compile nvfresh handles, and -ccbin's value.
void classify_arguments(NvccRun& run, const std::vector<std::string>& args)
{
  bool mode = false;
  bool not_a_compile = false;
  for (size_t i = 0; i < args.size(); ++i) {
    auto match = match_nvcc_option(args[i]);
    if (!match) {
      continue;
    }
    const OptionRole role = match->option->role;
    mode = mode || role == OptionRole::compile_mode;
    not_a_compile = not_a_compile || role == OptionRole::not_a_compile;
    if (role == OptionRole::host_compiler) {
      run.host_compiler = match->value ? std::string(*match->value)
                                       : (i + 1 < args.size() ? args[i + 1] : std::string());
    }
    if (match->option->takes_value() && !match->value) {
      ++i;
    }
  }
  run.compile = mode && !not_a_compile;
}

}  // namespace

std::string_view file_name_of(std::string_view path)
{
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> NvccRun::launchers() const
{
  auto nvfresh = std::find_if(before.begin(), before.end(), is_nvfresh);
  return {nvfresh == before.end() ? before.begin() : nvfresh + 1, before.end()};
}

std::vector<std::string> NvccRun::launchers_before_nvfresh() const
{
  auto nvfresh = std::find_if(before.begin(), before.end(), is_nvfresh);
  return nvfresh == before.end() ? std::vector<std::string>()
                                 : std::vector<std::string>(before.begin(), nvfresh);
}

std::vector<NvccRun> nvcc_runs_of(const BuildCommand& command, IsNvfreshAlias is_alias)
{
  const bool stamped =
    std::any_of(command.inputs.begin(), command.inputs.end(), [](const std::string& input) {
      return input.find(".nvfresh/stamps/") != std::string::npos;
    });
  std::vector<NvccRun> runs;
  for (const auto& words : programs_of(command.command)) {
    if (runs_no_compiler(words)) {
      continue;
    }
    auto nvcc = std::find_if(words.begin(), words.end(), [](const std::string& word) {
      return file_name_of(word).find("nvcc") != std::string_view::npos && !word.starts_with("-");
    });
    if (nvcc == words.end()) {
      continue;
    }
    NvccRun run;
    run.step = command.output;
    run.description = command.description;
    run.before.assign(words.begin(), nvcc);
    run.nvcc = *nvcc;
    run.through_nvfresh = std::any_of(run.before.begin(), run.before.end(), is_nvfresh) ||
                          (is_alias != nullptr && is_alias(run.nvcc));
    run.stamped = stamped;
    classify_arguments(run, std::vector<std::string>(nvcc + 1, words.end()));
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<NvccRun> nvcc_runs_of(const std::vector<BuildCommand>& commands,
                                  IsNvfreshAlias is_alias)
{
  std::vector<NvccRun> runs;
  for (const auto& command : commands) {
    for (auto& run : nvcc_runs_of(command, is_alias)) {
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

}  // namespace nvfresh

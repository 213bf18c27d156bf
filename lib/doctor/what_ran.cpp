#include "doctor/what_ran.hpp"

#include "digest/elf_reader.hpp"
#include "digest/fatbin_reader.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace nvfresh {

namespace {

constexpr size_t k_named = 3;
// A record is written after its object; a coarse file system clock may stamp both alike.
constexpr std::int64_t k_record_slack_ns = 1'000'000'000;

// The nvfresh word of a run: the one before nvcc (`nvfresh nvcc`, `nvfresh ccache nvcc`).
std::string launcher_word(const NvccRun& run)
{
  auto word = std::find_if(run.before.begin(), run.before.end(),
                           [](const std::string& w) { return file_name_of(w) == "nvfresh"; });
  return word == run.before.end() ? std::string() : *word;
}

std::string resolved_file(const std::string& written, const Environment& env)
{
  const std::string path =
    written.find('/') == std::string::npos ? find_program(written, env) : written;
  return !path.empty() && stat_file(path).is_regular ? path : std::string();
}

bool is_nvfresh_version(const std::string& output)
{
  return output.starts_with("nvfresh ") && output.find('\n') == output.size() - 1;
}

std::string first_line(const std::string& text)
{
  const std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? std::string("nothing") : fmt::format("'{}'", line);
}

std::string listed(const std::vector<std::string>& items)
{
  std::string out;
  for (size_t i = 0; i < items.size() && i < k_named; ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  return items.size() > k_named ? fmt::format("{} and {} more", out, items.size() - k_named) : out;
}

constexpr std::uint16_t k_elf_relocatable = 1;  // ET_REL

bool names_an_object(std::string_view output)
{
  return output.ends_with(".o") || output.ends_with(".obj");
}

// The objects with device code that steps running no nvcc made.
std::vector<std::string> device_objects_of_other_steps(const TreeCommands& top)
{
  std::set<std::string> nvcc_steps;
  for (const auto& run : top.runs) {
    nvcc_steps.insert(run.step);
  }
  std::vector<std::string> found;
  for (const auto& command : top.commands.commands) {
    if (!names_an_object(command.output) || nvcc_steps.contains(command.output)) {
      continue;
    }
    const std::string object = absolute_path(command.output, top.tree);
    if (const auto bytes = try_read_file(object); bytes && holds_device_code(*bytes)) {
      found.push_back(object);
    }
  }
  return found;
}

}  // namespace

bool holds_device_code(std::string_view object_bytes)
{
  if (!ElfReader::looks_like_elf(object_bytes)) {
    return false;
  }
  try {
    const ElfReader elf(object_bytes, "object");
    return elf.file_type() == k_elf_relocatable &&
           std::any_of(elf.sections().begin(), elf.sections().end(), [](const ElfSection& section) {
             return is_fatbin_section_name(section.name);
           });
  } catch (const ElfError&) {
    return false;  // not an object doctor can read: not one nvcc wrote
  }
}

std::vector<LauncherFacts> gather_launchers(const std::vector<NvccRun>& runs,
                                            const Environment& env)
{
  std::map<std::string, size_t> written;
  for (const auto& run : runs) {
    if (run.compile && run.through_nvfresh) {
      if (const std::string word = launcher_word(run); !word.empty()) {
        ++written[word];
      }
    }
  }
  std::vector<LauncherFacts> launchers;
  for (const auto& [word, compiles] : written) {
    LauncherFacts facts{word, resolved_file(word, env), std::nullopt, compiles};
    if (!facts.resolved.empty()) {
      facts.version_output = capture_output({facts.resolved, "--version"}, env);
    }
    launchers.push_back(std::move(facts));
  }
  return launchers;
}

LastBuildFacts gather_last_build(const TreeCommands& top, const std::string& record_root,
                                 bool disabled_here)
{
  LastBuildFacts facts;
  facts.disabled_here = disabled_here;
  for (const auto& run : top.runs) {
    if (!run.compile || !run.through_nvfresh) {
      continue;
    }
    ++facts.compiles;
    const std::string object = absolute_path(run.step, top.tree);
    const FileStat built = stat_file(object);
    if (!built.is_regular) {
      continue;
    }
    BuiltObject found{object, built.mtime_ns, std::nullopt};
    const FileStat record =
      stat_file(record_file_for(record_root, canonical_object_path(object, top.tree)));
    if (record.is_regular) {
      found.record_mtime_ns = record.mtime_ns;
    }
    facts.objects.push_back(std::move(found));
  }
  facts.device_objects_of_other_steps = device_objects_of_other_steps(top);
  return facts;
}

SetupCheck judge_launchers(const std::vector<LauncherFacts>& launchers)
{
  if (launchers.empty()) {
    return passed("launcher", "no compile names nvfresh as its launcher (see compiles)");
  }
  std::vector<std::string> found;
  for (const auto& launcher : launchers) {
    if (launcher.resolved.empty()) {
      return failed("launcher",
                    fmt::format("{}, the launcher of {} CUDA compiles, is not there (removed "
                                "after configure?): every one of them fails",
                                launcher.written, launcher.compiles),
                    "install nvfresh there again, or configure again with "
                    "-DNVFRESH_EXECUTABLE=<the nvfresh binary>");
    }
    if (!launcher.version_output || !is_nvfresh_version(*launcher.version_output)) {
      return failed(
        "launcher",
        fmt::format("{}, the launcher of {} CUDA compiles, is not nvfresh: '{} --version' "
                    "printed {}{}",
                    launcher.written, launcher.compiles, launcher.resolved,
                    first_line(launcher.version_output.value_or("")),
                    launcher.version_output ? "" : " and failed"),
        "configure with -DNVFRESH_EXECUTABLE=<the nvfresh binary> (a wrapper script must exec "
        "nvfresh with its arguments)");
    }
    found.push_back(
      fmt::format("{} ({})", launcher.resolved,
                  launcher.version_output->substr(0, launcher.version_output->size() - 1)));
  }
  return passed("launcher", fmt::format("the compiles run {}", listed(found)));
}

SetupCheck judge_last_build(const LastBuildFacts& facts)
{
  if (facts.disabled_here) {
    return failed("last-build",
                  "NVFRESH_DISABLE is set here: a build started from this environment compiles "
                  "without nvfresh, and records nothing",
                  "unset NVFRESH_DISABLE (and remove 'disable' from nvfresh's config file)");
  }
  std::vector<std::string> unrecorded;
  for (const auto& built : facts.objects) {
    if (!built.record_mtime_ns ||
        *built.record_mtime_ns + k_record_slack_ns < built.object_mtime_ns) {
      unrecorded.push_back(built.object);
    }
  }
  if (!facts.device_objects_of_other_steps.empty()) {
    const auto& hidden = facts.device_objects_of_other_steps;
    const bool one = hidden.size() == 1;
    return failed(
      "last-build",
      fmt::format("{} built object{} CUDA device code but came from {} that run{} no nvcc, so "
                  "nvfresh never saw {}: {}",
                  hidden.size(), one ? " holds" : "s hold", one ? "a step" : "steps",
                  one ? "s" : "", one ? "its compile" : "their compiles", listed(hidden)),
      "a wrapper not named nvcc compiles CUDA there: run nvcc through nvfresh inside it "
      "('nvfresh nvcc ...'), or put ${NVFRESH_EXECUTABLE} before the wrapper in that step");
  }
  if (facts.objects.empty()) {
    return passed("last-build", fmt::format("not built yet: none of the {} objects of compiles "
                                            "through nvfresh exists, so none to check",
                                            facts.compiles));
  }
  if (!unrecorded.empty()) {
    return failed(
      "last-build",
      fmt::format("{} of {} built objects were made by a compile nvfresh did not record: {}",
                  unrecorded.size(), facts.objects.size(), listed(unrecorded)),
      "look for NVFRESH_DISABLE=1 in the build's environment or nvfresh's config file, and a "
      "launcher that is not nvfresh; 'nvfresh stats' says why a compile passed through");
  }
  return passed("last-build", fmt::format("nvfresh recorded the compile of each of the {} built "
                                          "objects",
                                          facts.objects.size()));
}

}  // namespace nvfresh

// Tests of the nvcc option table: every spelling of every row, the value forms nvcc accepts and
// rejects, the roles the launcher relies on, and coverage of `nvcc --help` (nvcc 13.0).
#include "nvcc/nvcc_options.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace nvfresh {
namespace {

std::vector<std::string_view> spellings_of(const NvccOption& option)
{
  std::vector<std::string_view> spellings;
  for (std::string_view spelling : {option.long_name, option.short_name}) {
    if (!spelling.empty()) {
      spellings.push_back(spelling);
    }
  }
  return spellings;
}

const NvccOption& option_named(std::string_view spelling)
{
  const auto match = match_nvcc_option(spelling);
  REQUIRE(match);
  REQUIRE(match->spelling == spelling);
  return *match->option;
}

TEST_CASE("every spelling of every row matches its own row, alone and with '=value'")
{
  for (const NvccOption& option : nvcc_options()) {
    REQUIRE_FALSE(spellings_of(option).empty());
    for (std::string_view spelling : spellings_of(option)) {
      INFO("spelling " << spelling);
      const auto alone = match_nvcc_option(spelling);
      REQUIRE(alone);
      CHECK(alone->option == &option);
      CHECK_FALSE(alone->value);
      const std::string with_value = std::string(spelling) + "=v1";
      const auto attached = match_nvcc_option(with_value);
      if (option.takes_value()) {
        REQUIRE(attached);
        CHECK(attached->option == &option);
        CHECK(attached->value == std::optional<std::string_view>("v1"));
      } else {
        // A flag followed by '=' is not that flag (nvcc: "Unknown option").
        CHECK((!attached || attached->option != &option));
      }
    }
  }
}

TEST_CASE("spellings are unique and follow nvcc's dash rule")
{
  std::set<std::string_view> seen;
  for (const NvccOption& option : nvcc_options()) {
    for (std::string_view spelling : spellings_of(option)) {
      INFO("spelling " << spelling);
      CHECK(seen.insert(spelling).second);
    }
    if (!option.long_name.empty()) {
      CHECK(option.long_name.starts_with("--"));
    }
    if (!option.short_name.empty()) {
      CHECK(option.short_name.starts_with('-'));
      CHECK_FALSE(option.short_name.starts_with("--"));
    }
    CHECK((option.role != OptionRole::compile_mode || option.mode != ModeKind::none));
    CHECK((option.role != OptionRole::include_dir || option.include_kind != IncludeDirKind::none));
  }
}

TEST_CASE("joined values attach only to the short spellings nvcc joins")
{
  for (const NvccOption& option : nvcc_options()) {
    if (option.joined == JoinedValue::no) {
      continue;
    }
    REQUIRE_FALSE(option.short_name.empty());
    const std::string value = option.joined == JoinedValue::digits ? "4" : "VALUE";
    const std::string word = std::string(option.short_name) + value;
    INFO("word " << word);
    const auto match = match_nvcc_option(word);
    REQUIRE(match);
    CHECK(match->option == &option);
    CHECK(match->value == std::optional<std::string_view>(value));
  }
}

TEST_CASE("value forms: joined, '=', and the words nvcc 13.0 rejects")
{
  struct Case {
    std::string word;
    std::string_view expected_spelling;  // empty: not an nvcc option
    std::optional<std::string_view> expected_value;
  };
  const std::vector<Case> cases{
    {"-DFOO=1", "-D", "FOO=1"},
    {"-D=FOO", "-D", "FOO"},
    {"-I/usr/include", "-I", "/usr/include"},
    {"-I=inc", "-I", "inc"},
    {"-O3", "-O", "3"},
    {"-O=2", "-O", "2"},
    {"-t4", "-t", "4"},
    {"-t=0", "-t", "0"},
    {"-lcudart", "-l", "cudart"},
    {"-L/usr/lib", "-L", "/usr/lib"},
    {"-UNDEBUG", "-U", "NDEBUG"},
    {"-isystem=/sys", "-isystem", "/sys"},
    {"-Xcompiler=-fPIC", "-Xcompiler", "-fPIC"},
    {"--generate-code=arch=compute_80,code=sm_80", "--generate-code", "arch=compute_80,code=sm_80"},
    {"-Ofc=1", "-Ofc", "1"},
    {"-lineinfo", "-lineinfo", std::nullopt},
    {"-lib", "-lib", std::nullopt},
    {"-include", "-include", std::nullopt},
    {"-time", "-time", std::nullopt},
    {"-m64", "-m64", std::nullopt},
    // Rejected or unknown to nvcc 13.0: must not be taken for an nvcc option.
    {"-ofoo.o", "", std::nullopt},
    {"-xcu", "", std::nullopt},
    {"-MFdep.d", "", std::nullopt},
    {"-isystem/x", "", std::nullopt},
    {"-traditional", "", std::nullopt},
    {"--arch=sm_80", "", std::nullopt},
    {"-compile", "", std::nullopt},
    {"--c", "", std::nullopt},
    {"-c=1", "", std::nullopt},
    {"-fPIC", "", std::nullopt},
    {"-iquote", "", std::nullopt},
    {"-idirafter", "", std::nullopt},
    {"kernel.cu", "", std::nullopt},
  };
  for (const Case& c : cases) {
    INFO("word " << c.word);
    const auto match = match_nvcc_option(c.word);
    if (c.expected_spelling.empty()) {
      CHECK_FALSE(match);
      continue;
    }
    REQUIRE(match);
    CHECK(match->spelling == c.expected_spelling);
    CHECK(match->value == c.expected_value);
  }
}

TEST_CASE("roles of the options the launcher depends on")
{
  const std::vector<std::pair<std::string_view, OptionRole>> cases{
    {"-o", OptionRole::output},
    {"--output-file", OptionRole::output},
    {"-c", OptionRole::compile_mode},
    {"--compile", OptionRole::compile_mode},
    {"-dc", OptionRole::compile_mode},
    {"-ptx", OptionRole::compile_mode},
    {"-cubin", OptionRole::compile_mode},
    {"-fatbin", OptionRole::compile_mode},
    {"-optix-ir", OptionRole::compile_mode},
    {"-E", OptionRole::not_a_compile},
    {"-M", OptionRole::not_a_compile},
    {"-MM", OptionRole::not_a_compile},
    {"-link", OptionRole::not_a_compile},
    {"-lib", OptionRole::not_a_compile},
    {"-dlink", OptionRole::not_a_compile},
    {"-run", OptionRole::not_a_compile},
    {"--version", OptionRole::not_a_compile},
    {"-V", OptionRole::not_a_compile},
    {"-arch", OptionRole::gpu_architecture},
    {"--gpu-architecture", OptionRole::gpu_architecture},
    {"-code", OptionRole::gpu_code},
    {"-gencode", OptionRole::generate_code},
    {"-rdc", OptionRole::relocatable},
    {"-I", OptionRole::include_dir},
    {"--system-include", OptionRole::include_dir},
    {"-D", OptionRole::define_macro},
    {"--undefine-macro", OptionRole::undefine_macro},
    {"--pre-include", OptionRole::pre_include},
    {"-ccbin", OptionRole::host_compiler},
    {"--x", OptionRole::language},
    {"-Xcompiler", OptionRole::host_options},
    {"-Xcudafe", OptionRole::hash},
    {"-Xptxas", OptionRole::hash},
    {"-Xfatbin", OptionRole::hash},
    {"-Xnvlink", OptionRole::hash},
    {"-Xarchive", OptionRole::pass_only},
    {"-MD", OptionRole::depfile_system},
    {"--generate-dependencies-with-compile", OptionRole::depfile_system},
    {"-MMD", OptionRole::depfile_nonsystem},
    {"--dependency-output", OptionRole::depfile_path},
    {"--dependency-target-name", OptionRole::depfile_target},
    {"--generate-dependency-targets", OptionRole::depfile_phony},
    {"--options-file", OptionRole::options_file},
    {"-optf", OptionRole::options_file},
    {"--threads", OptionRole::pass_only},
    {"-diag-suppress", OptionRole::pass_only},
    {"-forward-unknown-to-host-compiler", OptionRole::hash},
    {"-forward-unknown-to-host-linker", OptionRole::pass_only},
    {"-allow-unsupported-compiler", OptionRole::pass_only},
    {"-save-temps", OptionRole::too_hard},
    {"--keep", OptionRole::too_hard},
    {"-time", OptionRole::too_hard},
    {"--fdevice-time-trace", OptionRole::too_hard},
    {"-dryrun", OptionRole::too_hard},
    {"-O", OptionRole::hash},
    {"-G", OptionRole::hash},
    {"-g", OptionRole::hash},
    {"-lineinfo", OptionRole::hash},
    {"--use_fast_math", OptionRole::hash},
    {"-std", OptionRole::hash},
    {"-maxrregcount", OptionRole::hash},
    {"--extended-lambda", OptionRole::hash},
    {"--expt-relaxed-constexpr", OptionRole::hash},
    {"-Werror", OptionRole::hash},
    {"--diag-error", OptionRole::hash},
  };
  for (const auto& [spelling, role] : cases) {
    INFO("spelling " << spelling << ", expected role " << describe(role));
    CHECK(option_named(spelling).role == role);
  }
}

TEST_CASE("comma lists and paths are marked as nvcc treats them")
{
  CHECK(option_named("-I").value == ValueKind::comma_list);
  CHECK(option_named("-I").value_is_path);
  CHECK(option_named("-D").value == ValueKind::comma_list);
  CHECK(option_named("-Xcompiler").value == ValueKind::comma_list);
  CHECK(option_named("--options-file").value == ValueKind::comma_list);
  CHECK(option_named("-o").value == ValueKind::single);
  CHECK(option_named("-o").value_is_path);
  CHECK(option_named("-MF").value_is_path);
  CHECK(option_named("-arch").value == ValueKind::single);  // nvcc 13.0 rejects -arch=a,b
  CHECK(option_named("-isystem").include_kind == IncludeDirKind::system);
  CHECK(option_named("--include-path").include_kind == IncludeDirKind::normal);
  CHECK(option_named("-dc").mode == ModeKind::device_c);
  CHECK(option_named("--device-w").mode == ModeKind::device_w);
  CHECK(option_named("--ltoir").mode == ModeKind::ltoir);
}

// One option as `nvcc --help` lists it: "--long <value>   (-short)".
struct HelpEntry {
  std::string long_name;
  std::string short_name;
  bool takes_value = false;
};

std::vector<HelpEntry> read_help(const std::string& text)
{
  static const std::regex line_re(
    R"(^(--[A-Za-z0-9_+-]+)(\s+\S.*?)?\s+\(?(-[A-Za-z0-9_+-]+)\)?\s*$)");
  std::vector<HelpEntry> entries;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, line_re)) {
      const std::string placeholder = m[2].str();
      const bool takes_value = placeholder.find_first_of("<{[,") != std::string::npos ||
                               placeholder.find("entry") != std::string::npos;
      entries.push_back(HelpEntry{m[1].str(), m[3].str(), takes_value});
    }
  }
  return entries;
}

TEST_CASE("the table covers every option of nvcc 13.0's --help with the same value-ness")
{
  const std::string help = read_file(NVFRESH_TEST_DATA_DIR "/nvcc_help/nvcc-13.0.txt");
  const std::vector<HelpEntry> entries = read_help(help);
  REQUIRE(entries.size() == 143);  // the file lists 143 options; fewer means the regex broke
  // --help prints no value placeholder for --dependency-output, yet -MF takes a file.
  const std::set<std::string> value_without_placeholder{"--dependency-output"};
  for (const HelpEntry& entry : entries) {
    INFO("help lists " << entry.long_name << " (" << entry.short_name << ")");
    const auto long_match = match_nvcc_option(entry.long_name);
    const auto short_match = match_nvcc_option(entry.short_name);
    REQUIRE(long_match);
    REQUIRE(short_match);
    CHECK(long_match->spelling == entry.long_name);
    CHECK(short_match->spelling == entry.short_name);
    CHECK(long_match->option == short_match->option);
    const bool expected_value =
      entry.takes_value || value_without_placeholder.contains(entry.long_name);
    CHECK(long_match->option->takes_value() == expected_value);
  }
}

}  // namespace
}  // namespace nvfresh

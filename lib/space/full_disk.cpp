// The free-space floor (NVFRESH_SPACE_FLOOR, config key space_floor):
//   floor  := "off" | limit ("," limit)*        warn when free space is below any limit
//   limit  := number unit | number "%"          "2GiB", "500MiB", "1.5TB", "2%"
//   unit   := "B" | "KiB" | "MiB" | "GiB" | "TiB" | "kB" | "MB" | "GB" | "TB"   (case as written)
// "off" (or "0") turns the warning off.
#include "space/full_disk.hpp"

#include "util/log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <string_view>

namespace nvfresh {

namespace {

struct RoleWords {
  SpaceRole role;
  const char* what;     // what the compile keeps there
  const char* setting;  // the setting that moves it elsewhere, "" for none
};

constexpr std::array<RoleWords, 4> k_role_words = {{
  {SpaceRole::temporary_files, "nvcc keeps its temporary files there (TMPDIR)", "TMPDIR"},
  {SpaceRole::output, "the object goes there", ""},
  {SpaceRole::depfile, "the depfile goes there", ""},
  {SpaceRole::records, "nvfresh keeps its records there", "NVFRESH_RECORD_DIR"},
}};

struct Unit {
  std::string_view name;
  std::uint64_t bytes;
};

constexpr std::array<Unit, 9> k_units = {{
  {"B", 1},
  {"KiB", 1ULL << 10},
  {"MiB", 1ULL << 20},
  {"GiB", 1ULL << 30},
  {"TiB", 1ULL << 40},
  {"kB", 1000ULL},
  {"MB", 1000ULL * 1000},
  {"GB", 1000ULL * 1000 * 1000},
  {"TB", 1000ULL * 1000 * 1000 * 1000},
}};

const RoleWords& words_for(SpaceRole role)
{
  for (const auto& words : k_role_words) {
    if (words.role == role) {
      return words;
    }
  }
  return k_role_words[0];
}

std::string shortage_phrase(const FileSystemSpace& space, Shortage shortage)
{
  const char* state = shortage == Shortage::full        ? "is full"
                      : shortage == Shortage::too_small ? "is too small for a compile"
                                                        : "is nearly full";
  std::string inodes = space.out_of_inodes() ? "no free inodes, " : "";
  return fmt::format("{} {} ({}{} free of {})", space.mount_point, state, inodes,
                     format_size(space.free_bytes), format_size(space.total_bytes));
}

// One file system's sentence: what is short, what the compile keeps there, what to do.
std::string file_system_sentence(const FileSystemSpace& space, const std::vector<SpaceRole>& roles)
{
  std::string what;
  std::string settings;
  for (SpaceRole role : roles) {
    const RoleWords& words = words_for(role);
    what += (what.empty() ? "" : ", and ") + std::string(words.what);
    if (*words.setting != '\0') {
      settings += (settings.empty() ? "" : " or ") + std::string(words.setting);
    }
  }
  Shortage shortage = shortage_for_compile(space);
  std::string advice =
    shortage == Shortage::too_small
      ? (settings.empty() ? "use a larger file system"
                          : "set " + settings + " to a larger file system")
      : (settings.empty() ? "free space there" : "free space or set " + settings);
  return fmt::format("{}: {}; {}", shortage_phrase(space, shortage), what, advice);
}

std::string temporary_dir(const Environment& env)
{
  std::string dir = env_value(env, "TMPDIR");
  return dir.empty() ? "/tmp" : dir;
}

std::optional<double> parse_decimal(std::string_view text)
{
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() || value < 0) {
    return std::nullopt;
  }
  return value;
}

// One limit into `floor`; false when it is not one.
bool parse_limit(std::string_view text, SpaceFloor& floor)
{
  if (!text.empty() && text.back() == '%') {
    auto percent = parse_decimal(text.substr(0, text.size() - 1));
    if (percent && *percent <= 100) {
      floor.percent = std::max(floor.percent, *percent);
    }
    return percent && *percent <= 100;
  }
  size_t digits = text.find_first_not_of("0123456789.");
  std::string_view unit =
    digits == std::string_view::npos ? std::string_view() : text.substr(digits);
  auto number = parse_decimal(text.substr(0, digits));
  for (const auto& candidate : k_units) {
    if (number && candidate.name == unit) {
      floor.bytes = std::max(
        floor.bytes, static_cast<std::uint64_t>(*number * static_cast<double>(candidate.bytes)));
      return true;
    }
  }
  return number && *number == 0 && unit.empty();  // "0": no limit
}

void print_warning(const std::string& message)
{
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: {}\n", message).c_str(), stderr);
  log::info("warning: {}", message);
}

}  // namespace

Shortage shortage_for_compile(const FileSystemSpace& space)
{
  if (!space.known) {
    return Shortage::none;
  }
  if (space.out_of_inodes() ||
      (space.free_bytes < k_nearly_nothing_bytes && space.used_percent() >= 90.0)) {
    return Shortage::full;
  }
  if (space.free_bytes >= k_compile_room_bytes) {
    return Shortage::none;
  }
  return space.used_bytes + space.free_bytes < k_compile_room_bytes ? Shortage::too_small
                                                                    : Shortage::nearly_full;
}

std::string describe_space_failure(
  const std::vector<std::pair<SpaceRole, FileSystemSpace>>& suspects)
{
  std::vector<std::pair<const FileSystemSpace*, std::vector<SpaceRole>>> short_ones;
  for (const auto& suspect : suspects) {
    const SpaceRole role = suspect.first;
    const FileSystemSpace& space = suspect.second;  // clang 14 cannot capture a structured binding
    if (shortage_for_compile(space) == Shortage::none) {
      continue;
    }
    auto same = std::find_if(short_ones.begin(), short_ones.end(), [&](const auto& entry) {
      return entry.first->device == space.device;
    });
    if (same == short_ones.end()) {
      short_ones.push_back({&space, {role}});
    } else if (std::find(same->second.begin(), same->second.end(), role) == same->second.end()) {
      same->second.push_back(role);
    }
  }
  std::string line;
  for (const auto& [space, roles] : short_ones) {
    line += (line.empty() ? "" : "; ") + file_system_sentence(*space, roles);
  }
  return line.empty() ? line : line + "; see nvfresh space";
}

void warn_if_failed_for_space(const FailedCompilePaths& paths)
{
  try {
    std::vector<std::pair<SpaceRole, FileSystemSpace>> suspects;
    suspects.emplace_back(SpaceRole::temporary_files,
                          file_system_space(temporary_dir(paths.compiler_env)));
    suspects.emplace_back(SpaceRole::output, file_system_space(paths.output));
    if (!paths.depfile.empty()) {
      suspects.emplace_back(SpaceRole::depfile, file_system_space(paths.depfile));
    }
    suspects.emplace_back(SpaceRole::records, file_system_space(paths.record_root));
    if (std::string line = describe_space_failure(suspects); !line.empty()) {
      print_warning(line);
    }
  } catch (const std::exception& error) {
    log::info("free space not examined: {}", error.what());
  }
}

std::optional<SpaceFloor> parse_space_floor(const std::string& text, std::string* error)
{
  SpaceFloor floor;
  floor.text = text;
  if (text == "off") {
    return floor;
  }
  std::string_view rest = text;
  while (true) {
    size_t comma = std::min(rest.find(','), rest.size());
    if (!parse_limit(rest.substr(0, comma), floor)) {
      *error =
        fmt::format("'{}' is not a size (2GiB, 500MiB) or a share (2%)", rest.substr(0, comma));
      return std::nullopt;
    }
    if (comma == rest.size()) {
      return floor;
    }
    rest.remove_prefix(comma + 1);
  }
}

std::string describe_below_floor(const FileSystemSpace& space, const SpaceFloor& floor)
{
  double free_percent = 100.0 - space.used_percent();
  bool below_bytes = floor.bytes != 0 && space.free_bytes < floor.bytes;
  bool below_share = floor.percent != 0 && free_percent < floor.percent;
  if (!space.known || (!below_bytes && !below_share)) {
    return {};
  }
  std::string limits;
  for (char c : floor.text) {
    limits += c == ',' ? std::string(" or ") : std::string(1, c);
  }
  return fmt::format(
    "{} is {}: {} free of {} ({:.1f}% used), below the free-space floor "
    "of {} (NVFRESH_SPACE_FLOOR); builds there may fail in ways that do not say so; "
    "see nvfresh space",
    space.mount_point, shortage_for_compile(space) == Shortage::full ? "full" : "nearly full",
    format_size(space.free_bytes), format_size(space.total_bytes), space.used_percent(), limits);
}

void warn_if_below_floor(const std::string& build_tree, const std::string& configured_floor)
{
  try {
    std::string text = configured_floor.empty() ? k_default_space_floor : configured_floor;
    std::string error;
    auto floor = parse_space_floor(text, &error);
    if (!floor) {
      print_warning(fmt::format("NVFRESH_SPACE_FLOOR: {}; free space is not checked", error));
      return;
    }
    if (std::string line = describe_below_floor(file_system_space(build_tree), *floor);
        !line.empty()) {
      print_warning(line);
    }
  } catch (const std::exception& error) {
    log::info("free-space floor not checked: {}", error.what());
  }
}

}  // namespace nvfresh

#include "config/config.hpp"

#include "util/file_io.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace nvfresh {

namespace {

struct Setting {
  const char* env_name;
  const char* file_key;
  std::string Config::*field;
};

const std::array<Setting, 26> k_string_settings = {{
  {"NVFRESH_RECORD_DIR", "record_dir", &Config::record_dir},
  {"NVFRESH_LOG_FILE", "log_file", &Config::log_file},
  {"NVFRESH_TRACE_LIB", "trace_lib", &Config::trace_lib},
  {"NVFRESH_CACHE", "cache", &Config::cache},
  {"NVFRESH_CACHE_DIR", "cache_dir", &Config::cache_dir},
  {"NVFRESH_CACHE_MAX_SIZE", "cache_max_size", &Config::cache_max_size},
  {"NVFRESH_CACHE_MIN_FREE", "cache_min_free", &Config::cache_min_free},
  {"NVFRESH_CACHE_VERIFY", "cache_verify", &Config::cache_verify},
  {"NVFRESH_CACHE_ACROSS_CHECKOUTS", "cache_across_checkouts", &Config::cache_across_checkouts},
  {"NVFRESH_CACHE_SHARED", "cache_shared", &Config::cache_shared},
  {"NVFRESH_STEP_CACHE", "step_cache", &Config::step_cache},
  {"NVFRESH_REMOTE", "remote", &Config::remote},
  {"NVFRESH_REMOTE_INSTANCE", "remote_instance", &Config::remote_instance},
  {"NVFRESH_REMOTE_READ_ONLY", "remote_read_only", &Config::remote_read_only},
  {"NVFRESH_REMOTE_EXEC", "remote_exec", &Config::remote_exec},
  {"NVFRESH_REMOTE_EXEC_PLATFORM", "remote_exec_platform", &Config::remote_exec_platform},
  {"NVFRESH_REMOTE_EXEC_TIMEOUT", "remote_exec_timeout", &Config::remote_exec_timeout},
  {"NVFRESH_REMOTE_TOKEN_FILE", "remote_token_file", &Config::remote_token_file},
  {"NVFRESH_REMOTE_TLS_CA", "remote_tls_ca", &Config::remote_tls_ca},
  {"NVFRESH_REMOTE_TLS_CLIENT_CERT", "remote_tls_client_cert", &Config::remote_tls_client_cert},
  {"NVFRESH_REMOTE_TLS_CLIENT_KEY", "remote_tls_client_key", &Config::remote_tls_client_key},
  {"NVFRESH_REMOTE_SIGNING_KEY", "remote_signing_key", &Config::remote_signing_key},
  {"NVFRESH_REMOTE_TRUSTED_KEYS", "remote_trusted_keys", &Config::remote_trusted_keys},
  {"NVFRESH_REMOTE_COMPILE_BUDGET", "remote_compile_budget", &Config::remote_compile_budget},
  {"NVFRESH_REMOTE_BUILD_BUDGET", "remote_build_budget", &Config::remote_build_budget},
  {"NVFRESH_SPACE_FLOOR", "space_floor", &Config::space_floor},
}};

std::string trim(const std::string& text)
{
  auto begin =
    std::find_if_not(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
  auto end =
    std::find_if_not(text.rbegin(), text.rend(), [](unsigned char c) { return std::isspace(c); });
  return begin < end.base() ? std::string(begin, end.base()) : std::string();
}

std::string lookup(const Environment& env, const std::string& name)
{
  auto entry = env.find(name);
  return entry != env.end() ? entry->second : std::string();
}

std::string config_file_path(const Environment& env)
{
  if (auto explicit_path = lookup(env, "NVFRESH_CONFIG"); !explicit_path.empty()) {
    return explicit_path;
  }
  if (auto xdg = lookup(env, "XDG_CONFIG_HOME"); !xdg.empty()) {
    return xdg + "/nvfresh/nvfresh.conf";
  }
  if (auto home = lookup(env, "HOME"); !home.empty()) {
    return home + "/.config/nvfresh/nvfresh.conf";
  }
  return {};
}

std::map<std::string, std::string> read_config_file(const std::string& path)
{
  std::map<std::string, std::string> values;
  auto content = path.empty() ? std::nullopt : try_read_file(path);
  if (!content) {
    return values;
  }
  size_t begin = 0;
  while (begin < content->size()) {
    size_t end = content->find('\n', begin);
    end = end == std::string::npos ? content->size() : end;
    std::string line = trim(content->substr(begin, end - begin));
    size_t equals = line.find('=');
    if (!line.empty() && line[0] != '#' && equals != std::string::npos) {
      values[trim(line.substr(0, equals))] = trim(line.substr(equals + 1));
    }
    begin = end + 1;
  }
  return values;
}

}  // namespace

bool is_true(const std::string& value)
{
  std::string lower;
  std::transform(value.begin(), value.end(), std::back_inserter(lower),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "1" || lower == "true" || lower == "yes" || lower == "on";
}

bool is_false(const std::string& value)
{
  std::string lower;
  std::transform(value.begin(), value.end(), std::back_inserter(lower),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "0" || lower == "false" || lower == "no" || lower == "off";
}

std::optional<std::uint64_t> parse_size(const std::string& text)
{
  constexpr std::string_view k_units = "KMGT";
  std::string number = trim(text);
  std::uint64_t scale = 1;
  if (!number.empty() && (number.back() == 'B' || number.back() == 'b')) {
    number.pop_back();
    if (!number.empty() && (number.back() == 'i' || number.back() == 'I')) {
      number.pop_back();
    }
  }
  if (!number.empty()) {
    const size_t unit =
      k_units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(number.back()))));
    if (unit != std::string_view::npos) {
      scale = 1ULL << (10 * (unit + 1));
      number.pop_back();
    }
  }
  char* end = nullptr;
  const double value = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || value < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(value * static_cast<double>(scale));
}

Config load_config(const Environment& env)
{
  Config config;
  std::string path = config_file_path(env);
  auto file_values = read_config_file(path);
  if (!file_values.empty()) {
    config.config_file = path;
  }
  for (const auto& setting : k_string_settings) {
    std::string value = lookup(env, setting.env_name);
    if (value.empty() && file_values.count(setting.file_key) != 0) {
      value = file_values[setting.file_key];
    }
    config.*setting.field = value;
  }
  std::string disable = lookup(env, "NVFRESH_DISABLE");
  if (disable.empty() && file_values.count("disable") != 0) {
    disable = file_values["disable"];
  }
  config.disabled = is_true(disable);
  // Not read from the config file, which is not meant to hold secrets: a token goes in a file of
  // its own (remote_token_file).
  config.remote_token = lookup(env, "NVFRESH_REMOTE_TOKEN");
  return config;
}

}  // namespace nvfresh

// Walks nvcc's argv with the table in nvcc_options.cpp. The flow:
//   1. NVCC_PREPEND_FLAGS + args + NVCC_APPEND_FLAGS (as nvcc merges them);
//   2. --options-file / -optf expanded in place (nested files too), each file recorded;
//   3. one pass over the words: each option is handled by its role, everything else is an input;
//   4. the collected pieces become a CompileRequest, or the first reason not to handle the compile.
#include "nvcc/command_line.hpp"

#include "nvcc/nvcc_options.hpp"
#include "util/file_io.hpp"
#include "util/words.hpp"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace nvfresh {

namespace {

constexpr int k_max_options_file_depth = 16;

// Thrown inside this file only; parse_command_line turns it into a ParseResult.
class Fallback : public std::runtime_error {
public:
  Fallback(Cause reason, const std::string& detail) : std::runtime_error(detail), m_reason(reason)
  {}
  Cause reason() const { return m_reason; }

private:
  Cause m_reason;
};

// ---------------------------------------------------------------------------------------------
// Comma lists.

// nvcc splits comma-list values on commas outside double quotes and brackets
// ("-DX=\"a,b\"" stays one define; "code=[sm_80,compute_80]" stays one gencode item).
std::vector<std::string> split_comma_list(std::string_view value)
{
  std::vector<std::string> items;
  std::string current;
  bool in_quotes = false;
  int bracket_depth = 0;
  for (char c : value) {
    if (c == '"') {
      in_quotes = !in_quotes;
    } else if (!in_quotes && c == '[') {
      ++bracket_depth;
    } else if (!in_quotes && c == ']' && bracket_depth > 0) {
      --bracket_depth;
    } else if (!in_quotes && bracket_depth == 0 && c == ',') {
      items.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(std::move(current));
  return items;
}

// ---------------------------------------------------------------------------------------------
// Step 1 and 2: the effective argument list.

std::vector<std::string> env_flags(const Environment& env, const std::string& name)
{
  const auto it = env.find(name);
  return it == env.end() ? std::vector<std::string>{} : split_nvcc_env_flags(it->second);
}

struct OptionWord {
  OptionMatch match;
  std::string value;      // empty for flags
  std::size_t words = 1;  // 1, or 2 when the value was the next word
};

// Reads the option at words[i] and its value. Throws when a value is missing.
std::optional<OptionWord> read_option(const std::vector<std::string>& words, std::size_t i)
{
  std::optional<OptionMatch> match = match_nvcc_option(words[i]);
  if (!match) {
    return std::nullopt;
  }
  OptionWord result{*match, {}, 1};
  if (!match->option->takes_value()) {
    return result;
  }
  if (match->value) {
    result.value = std::string(*match->value);
  } else if (i + 1 < words.size()) {
    result.value = words[i + 1];
    result.words = 2;
  } else {
    throw Fallback(Cause::bad_command_line,
                   fmt::format("option {} is missing its value", words[i]));
  }
  return result;
}

class OptionsFileExpander {
public:
  OptionsFileExpander(const std::string& working_dir, std::vector<std::string>& files_read)
    : m_working_dir(working_dir), m_files_read(files_read)
  {}

  std::vector<std::string> expand(const std::vector<std::string>& words, int depth)
  {
    check_depth(depth);
    std::vector<std::string> result;
    for (std::size_t i = 0; i < words.size();) {
      const std::optional<OptionWord> option = read_option(words, i);
      if (option && option->match.option->role == OptionRole::options_file) {
        for (const std::string& file : split_comma_list(option->value)) {
          append(result, expand(read_options_file(file), depth + 1));
        }
      } else {
        const std::size_t count = option ? option->words : 1;
        result.insert(result.end(), words.begin() + i, words.begin() + i + count);
      }
      i += option ? option->words : 1;
    }
    return result;
  }

private:
  static void append(std::vector<std::string>& to, std::vector<std::string> from)
  {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }

  static void check_depth(int depth)
  {
    if (depth > k_max_options_file_depth) {
      throw Fallback(Cause::bad_command_line,
                     fmt::format("options files nest deeper than {} levels (a file includes "
                                 "itself?)",
                                 k_max_options_file_depth));
    }
  }

  std::vector<std::string> read_options_file(const std::string& file)
  {
    const std::string path = absolute_path(file, m_working_dir);
    std::optional<std::string> body = try_read_file(path);
    if (!body) {
      throw Fallback(Cause::unreadable_options_file,
                     fmt::format("cannot read options file {} (looked for {})", file, path));
    }
    m_files_read.push_back(file);
    return split_nvcc_words(*body);
  }

  const std::string& m_working_dir;
  std::vector<std::string>& m_files_read;
};

// ---------------------------------------------------------------------------------------------
// Step 3: one pass over the words.

// gcc preprocessor options nvfresh reads inside -Xcompiler values.
enum class HostOptionKind { include_dir, define, undefine, pre_include };

struct HostOption {
  std::string_view spelling;
  HostOptionKind kind;
  IncludeKind include_kind = IncludeKind::normal;
};

constexpr std::array k_host_options{
  HostOption{"-I", HostOptionKind::include_dir, IncludeKind::normal},
  HostOption{"-isystem", HostOptionKind::include_dir, IncludeKind::system},
  HostOption{"-iquote", HostOptionKind::include_dir, IncludeKind::quote},
  HostOption{"-idirafter", HostOptionKind::include_dir, IncludeKind::after},
  HostOption{"-D", HostOptionKind::define},
  HostOption{"-U", HostOptionKind::undefine},
  HostOption{"-include", HostOptionKind::pre_include},
};

// Source extensions nvcc compiles, and the language each implies (without -x).
struct SourceExtension {
  std::string_view extension;
  std::string_view language;
};

constexpr std::array k_source_extensions{
  SourceExtension{".cu", "cu"},         SourceExtension{".c", "c"},
  SourceExtension{".cc", "c++"},        SourceExtension{".cpp", "c++"},
  SourceExtension{".cxx", "c++"},       SourceExtension{".i", "i"},
  SourceExtension{".ii", "ii"},         SourceExtension{".gpu", "gpu"},
  SourceExtension{".ptx", "ptx"},       SourceExtension{".cubin", "cubin"},
  SourceExtension{".fatbin", "fatbin"},
};

std::optional<std::string_view> language_of_extension(const std::string& path)
{
  const std::string extension = std::filesystem::path(path).extension().string();
  for (const SourceExtension& entry : k_source_extensions) {
    if (entry.extension == extension) {
      return entry.language;
    }
  }
  return std::nullopt;
}

struct Collected {
  std::optional<ModeKind> mode;
  std::optional<std::string> rdc;
  std::vector<std::string> arch_values;
  std::vector<std::string> code_values;
  std::vector<std::string> gencode_values;
  std::vector<std::string> inputs;
  std::vector<std::string> host_words;  // every -Xcompiler word, in order
  std::vector<IncludeDir> nvcc_include_dirs;
  std::vector<std::string> nvcc_defines;
  std::vector<std::string> depfile_targets;
  std::optional<std::string> language;
};

class ArgWalker {
public:
  ArgWalker(CompileRequest& request, Collected& collected)
    : m_request(request), m_collected(collected)
  {}

  void walk(const std::vector<std::string>& words)
  {
    for (std::size_t i = 0; i < words.size();) {
      const std::optional<OptionWord> option = read_option(words, i);
      if (option) {
        handle(*option->match.option, option->value);
        i += option->words;
      } else {
        handle_plain_word(words[i]);
        ++i;
      }
    }
  }

private:
  void handle_plain_word(const std::string& word)
  {
    const bool is_option = word.size() > 1 && word.starts_with('-');
    if (!is_option) {
      m_collected.inputs.push_back(word);
    }
    // Unknown options (nvcc forwards them with -forward-unknown-to-host-compiler, or fails) and the
    // source are part of the signature verbatim.
    m_request.signature_args.push_back(word);
  }

  void handle(const NvccOption& option, const std::string& value)
  {
    handle_role(option, value);
    if (in_signature(option.role)) {
      add_signature(option, value);
    }
  }

  void handle_role(const NvccOption& option, const std::string& value)
  {
    switch (option.role) {
    case OptionRole::not_a_compile:
      throw Fallback(
        Cause::not_a_compile,
        fmt::format("{} does not compile one source to one output", option.canonical_name()));
    case OptionRole::too_hard:
      throw Fallback(Cause::unsupported_option,
                     fmt::format("{} makes nvcc write or skip files nvfresh cannot account for",
                                 option.canonical_name()));
    case OptionRole::compile_mode: m_collected.mode = option.mode; break;
    case OptionRole::output: m_request.output = value; break;
    case OptionRole::gpu_architecture: m_collected.arch_values.push_back(value); break;
    case OptionRole::gpu_code: append_list(m_collected.code_values, value); break;
    case OptionRole::generate_code: m_collected.gencode_values.push_back(value); break;
    case OptionRole::relocatable: m_collected.rdc = value; break;
    case OptionRole::include_dir: add_include_dirs(option, value); break;
    case OptionRole::define_macro: add_defines("-D", value); break;
    case OptionRole::undefine_macro: add_defines("-U", value); break;
    case OptionRole::pre_include: append_list(m_request.forced_includes, value); break;
    case OptionRole::host_compiler: m_request.host_compiler = value; break;
    case OptionRole::language: m_collected.language = value; break;
    case OptionRole::host_options: add_host_words(value); break;
    default: handle_depfile_role(option.role, value); break;
    }
  }

  void handle_depfile_role(OptionRole role, const std::string& value)
  {
    DepfileRequest& depfile = m_request.depfile;
    switch (role) {
    case OptionRole::depfile_system: depfile.wanted = true; break;
    case OptionRole::depfile_nonsystem:
      depfile.wanted = true;
      depfile.system_headers = false;
      break;
    case OptionRole::depfile_path: depfile.path = value; break;
    case OptionRole::depfile_target: m_collected.depfile_targets.push_back(value); break;
    case OptionRole::depfile_phony: depfile.phony_targets = true; break;
    default: break;  // hash, pass_only, options_file (already expanded): nothing to collect
    }
  }

  static bool in_signature(OptionRole role)
  {
    switch (role) {
    case OptionRole::pass_only:
    case OptionRole::output:
    case OptionRole::depfile_system:
    case OptionRole::depfile_nonsystem:
    case OptionRole::depfile_path:
    case OptionRole::depfile_target:
    case OptionRole::depfile_phony:
    case OptionRole::options_file: return false;
    default: return true;
    }
  }

  void add_signature(const NvccOption& option, const std::string& value)
  {
    const std::string name(option.canonical_name());
    if (!option.takes_value()) {
      m_request.signature_args.push_back(name);
      return;
    }
    const std::vector<std::string> items = option.value == ValueKind::comma_list
                                             ? split_comma_list(value)
                                             : std::vector<std::string>{value};
    for (const std::string& item : items) {
      m_request.signature_args.push_back(fmt::format("{}={}", name, item));
    }
  }

  static void append_list(std::vector<std::string>& to, const std::string& value)
  {
    for (std::string& item : split_comma_list(value)) {
      to.push_back(std::move(item));
    }
  }

  void add_include_dirs(const NvccOption& option, const std::string& value)
  {
    const IncludeKind kind =
      option.include_kind == IncludeDirKind::system ? IncludeKind::system : IncludeKind::normal;
    for (std::string& dir : split_comma_list(value)) {
      m_collected.nvcc_include_dirs.push_back(IncludeDir{std::move(dir), kind});
    }
  }

  void add_defines(std::string_view prefix, const std::string& value)
  {
    for (const std::string& item : split_comma_list(value)) {
      m_collected.nvcc_defines.push_back(std::string(prefix) + item);
    }
  }

  void add_host_words(const std::string& value)
  {
    for (const std::string& item : split_comma_list(value)) {
      for (std::string& word : split_words(item, k_shell_quotes)) {
        m_collected.host_words.push_back(std::move(word));
      }
    }
  }

  CompileRequest& m_request;
  Collected& m_collected;
};

// ---------------------------------------------------------------------------------------------
// Step 4: from the collected pieces to the request.

// Preprocessor options inside -Xcompiler values: "-I dir", "-Idir", "-isystem dir", ...
class HostWordReader {
public:
  HostWordReader(const std::vector<std::string>& words, CompileRequest& request)
    : m_words(words), m_request(request)
  {}

  void read()
  {
    for (std::size_t i = 0; i < m_words.size(); ++i) {
      const auto [option, value, consumed_next] = match_at(i);
      if (option) {
        apply(*option, value);
        i += consumed_next ? 1 : 0;
      }
    }
  }

private:
  struct HostMatch {
    const HostOption* option = nullptr;
    std::string value;
    bool consumed_next = false;
  };

  HostMatch match_at(std::size_t i) const
  {
    const std::string& word = m_words[i];
    HostMatch best;
    for (const HostOption& option : k_host_options) {
      if (!word.starts_with(option.spelling)) {
        continue;
      }
      if (best.option && best.option->spelling.size() >= option.spelling.size()) {
        continue;
      }
      if (word.size() > option.spelling.size()) {
        best = HostMatch{&option, word.substr(option.spelling.size()), false};
      } else if (i + 1 < m_words.size()) {
        best = HostMatch{&option, m_words[i + 1], true};
      }
    }
    return best;
  }

  void apply(const HostOption& option, const std::string& value)
  {
    switch (option.kind) {
    case HostOptionKind::include_dir:
      m_request.include_dirs.push_back(IncludeDir{value, option.include_kind});
      break;
    case HostOptionKind::define: m_request.defines.push_back("-D" + value); break;
    case HostOptionKind::undefine: m_request.defines.push_back("-U" + value); break;
    case HostOptionKind::pre_include: m_request.forced_includes.push_back(value); break;
    }
  }

  const std::vector<std::string>& m_words;
  CompileRequest& m_request;
};

std::string virtual_of(const std::string& arch)
{
  for (std::string_view prefix : {"sm_", "lto_"}) {
    if (arch.starts_with(prefix)) {
      return "compute_" + arch.substr(prefix.size());
    }
  }
  return arch;
}

DevicePass pass_from_arch(const std::string& arch, const std::vector<std::string>& codes)
{
  if (arch == "native") {
    throw Fallback(Cause::unsupported_option,
                   "-arch=native compiles for the GPUs of this machine, which nvfresh does not "
                   "record");
  }
  if (arch.starts_with("all")) {
    return DevicePass{arch, codes};
  }
  if (!codes.empty()) {
    return DevicePass{virtual_of(arch), codes};
  }
  if (arch.starts_with("sm_")) {
    return DevicePass{virtual_of(arch), {arch, virtual_of(arch)}};
  }
  return DevicePass{virtual_of(arch), {arch}};
}

std::string strip_grouping(const std::string& value)
{
  const bool bracketed = value.size() >= 2 && value.front() == '[' && value.back() == ']';
  const bool quoted = value.size() >= 2 && value.front() == '"' && value.back() == '"';
  return bracketed || quoted ? value.substr(1, value.size() - 2) : value;
}

// "arch=compute_80,code=[sm_80,compute_80]" or arch=compute_80,code="sm_80,compute_80".
DevicePass parse_gencode(const std::string& spec)
{
  DevicePass pass;
  bool after_code = false;
  for (const std::string& item : split_comma_list(strip_grouping(spec))) {
    if (item.starts_with("arch=")) {
      pass.virtual_arch = item.substr(5);
    } else if (item.starts_with("code=")) {
      after_code = true;
      for (std::string& code : split_comma_list(strip_grouping(item.substr(5)))) {
        pass.real_archs.push_back(std::move(code));
      }
    } else if (after_code) {
      pass.real_archs.push_back(item);
    } else {
      throw Fallback(Cause::bad_command_line, fmt::format("cannot read -gencode value '{}'", spec));
    }
  }
  if (pass.virtual_arch.empty() || pass.real_archs.empty()) {
    throw Fallback(Cause::bad_command_line,
                   fmt::format("-gencode value '{}' lacks arch= or code=", spec));
  }
  return pass;
}

std::vector<DevicePass> device_passes(const Collected& collected, std::string_view default_arch)
{
  std::vector<DevicePass> passes;
  if (!collected.code_values.empty() && collected.arch_values.empty()) {
    throw Fallback(Cause::bad_command_line, "-code is given without -arch");
  }
  if (!collected.arch_values.empty()) {
    // The last -arch counts; a comma list (rejected by nvcc 13.0) gives one pass per item.
    for (const std::string& arch : split_comma_list(collected.arch_values.back())) {
      passes.push_back(pass_from_arch(arch, collected.code_values));
    }
  }
  for (const std::string& spec : collected.gencode_values) {
    passes.push_back(parse_gencode(spec));
  }
  if (passes.empty()) {
    passes.push_back(pass_from_arch(std::string(default_arch), {}));
  }
  return passes;
}

bool parse_rdc(const std::optional<std::string>& value)
{
  if (!value || *value == "false") {
    return false;
  }
  if (*value == "true") {
    return true;
  }
  throw Fallback(Cause::bad_command_line,
                 fmt::format("-rdc takes true or false, not '{}'", *value));
}

CompileMode compile_mode(const Collected& collected)
{
  if (!collected.mode) {
    throw Fallback(Cause::not_a_compile,
                   "no compile phase option (-c, -dc, -ptx, ...): nvcc would link");
  }
  const bool rdc = parse_rdc(collected.rdc);
  switch (*collected.mode) {
  case ModeKind::compile: return rdc ? CompileMode::relocatable : CompileMode::object;
  case ModeKind::device_c: return CompileMode::relocatable;
  case ModeKind::device_w: return CompileMode::object;
  case ModeKind::ptx: return CompileMode::ptx;
  case ModeKind::cubin: return CompileMode::cubin;
  case ModeKind::fatbin: return CompileMode::fatbin;
  case ModeKind::optix_ir: return CompileMode::optix_ir;
  case ModeKind::ltoir: return CompileMode::ltoir;
  case ModeKind::none: break;
  }
  throw Fallback(Cause::internal_error, "compile phase option without a mode");
}

void find_source(const Collected& collected, CompileRequest& request)
{
  if (collected.inputs.empty()) {
    throw Fallback(Cause::no_source, "no input file on the command line");
  }
  if (collected.inputs.size() > 1) {
    throw Fallback(Cause::several_sources,
                   fmt::format("{} input files: {} and {}", collected.inputs.size(),
                               collected.inputs[0], collected.inputs[1]));
  }
  request.source = collected.inputs.front();
  if (collected.language) {
    request.language = *collected.language;
    return;
  }
  const std::optional<std::string_view> language = language_of_extension(request.source);
  if (!language) {
    throw Fallback(Cause::no_source,
                   fmt::format("{} is not a source nvcc compiles (no -x and an unknown "
                               "extension)",
                               request.source));
  }
  request.language = std::string(*language);
}

std::string join_targets(const std::vector<std::string>& targets)
{
  std::string joined;
  for (const std::string& target : targets) {
    joined += (joined.empty() ? "" : " ") + target;
  }
  return joined;
}

void finish_request(Collected& collected, CompileRequest& request, std::string_view default_arch)
{
  request.mode = compile_mode(collected);
  find_source(collected, request);
  request.device_passes = device_passes(collected, default_arch);
  request.depfile.target = join_targets(collected.depfile_targets);
  HostWordReader(collected.host_words, request).read();
  request.include_dirs.insert(request.include_dirs.end(), collected.nvcc_include_dirs.begin(),
                              collected.nvcc_include_dirs.end());
  request.defines.insert(request.defines.begin(), collected.nvcc_defines.begin(),
                         collected.nvcc_defines.end());
}

CompileRequest build_request(const std::vector<std::string>& args, const Environment& env,
                             const std::string& working_dir, std::string_view default_arch)
{
  CompileRequest request;
  std::vector<std::string> merged = env_flags(env, "NVCC_PREPEND_FLAGS");
  merged.insert(merged.end(), args.begin(), args.end());
  for (std::string& word : env_flags(env, "NVCC_APPEND_FLAGS")) {
    merged.push_back(std::move(word));
  }
  request.effective_args =
    OptionsFileExpander(working_dir, request.options_files).expand(merged, 0);

  Collected collected;
  ArgWalker(request, collected).walk(request.effective_args);
  finish_request(collected, request, default_arch);
  return request;
}

}  // namespace

std::string_view default_gpu_architecture(int nvcc_major_version)
{
  return nvcc_major_version >= 13 ? "sm_75" : "sm_52";
}

ParseResult parse_command_line(const std::vector<std::string>& args, const Environment& env,
                               const std::string& working_dir, std::string_view default_arch)
{
  ParseResult result;
  try {
    result.request = build_request(args, env, working_dir, default_arch);
  } catch (const Fallback& fallback) {
    result.reason = fallback.reason();
    result.detail = fallback.what();
  }
  return result;
}

std::vector<std::string> split_nvcc_words(const std::string& text)
{
  return split_words(text, k_nvcc_options_file_quotes);
}

std::vector<std::string> split_nvcc_env_flags(const std::string& text)
{
  return split_words(text, k_nvcc_env_flags_quotes);
}

std::optional<std::vector<std::string>> expand_nvcc_options_files(
  const std::vector<std::string>& words, const std::string& working_dir)
{
  std::vector<std::string> files_read;
  try {
    return OptionsFileExpander(working_dir, files_read).expand(words, 0);
  } catch (const Fallback&) {
    return std::nullopt;
  }
}

}  // namespace nvfresh

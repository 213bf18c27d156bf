#include "cache/entry_verifier.hpp"

#include "digest/object_digest.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include <stdlib.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

struct OutputOption {
  std::string_view name;
  bool is_object;  // else the depfile
};

constexpr std::array<OutputOption, 4> k_output_options = {{
  {"-o", true},
  {"--output-file", true},
  {"-MF", false},
  {"--dependency-output", false},
}};

}  // namespace

std::string differing_components(const std::map<std::string, Digest>& a,
                                 const std::map<std::string, Digest>& b)
{
  std::set<std::string> names;
  for (const auto& [name, digest] : a) {
    if (auto other = b.find(name); other == b.end() || other->second != digest) {
      names.insert(name);
    }
  }
  for (const auto& [name, digest] : b) {
    if (a.count(name) == 0) {
      names.insert(name);
    }
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::map<std::string, Digest> held_components(const CacheEntry& entry)
{
  std::map<std::string, Digest> held;
  try {
    for (const auto& component : digest_bytes(entry.object, "the cached object").components) {
      held[component.key] = component.digest;
    }
  } catch (const std::exception&) {  // DigestError: no artifact
    held.clear();
  }
  return held;
}

std::string_view verification_name(Verification verification)
{
  switch (verification) {
  case Verification::same: return "same";
  case Verification::known_variant: return "known-variant";
  case Verification::differs: return "differs";
  case Verification::not_run: return "not-run";
  case Verification::failed: return "failed";
  case Verification::not_verified: return "not-verified";
  case Verification::damaged: return "damaged";
  }
  return "unknown";
}

std::vector<std::string> redirect_outputs(const std::vector<std::string>& command,
                                          const std::string& object, const std::string& depfile)
{
  std::vector<std::string> out;
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& arg = command[i];
    bool replaced = false;
    for (const auto& option : k_output_options) {
      const std::string& target = option.is_object ? object : depfile;
      if (arg == option.name && i + 1 < command.size()) {
        out.push_back(arg);
        out.push_back(target);
        ++i;
        replaced = true;
      } else if (arg.starts_with(std::string(option.name) + "=")) {
        out.push_back(std::string(option.name) + "=" + target);
        replaced = true;
      }
      if (replaced) {
        break;
      }
    }
    if (!replaced) {
      out.push_back(arg);
    }
  }
  return out;
}

EntryVerification verify_entry(const CacheEntry& entry, const std::string& scratch_root)
{
  EntryVerification result;
  if (entry.origin_command.empty()) {
    result.detail = "the entry keeps no command";
    return result;
  }
  if (!stat_file(entry.origin_cwd).is_directory) {
    result.detail = fmt::format("its working directory {} is gone", entry.origin_cwd);
    return result;
  }
  std::string scratch;
  try {
    std::error_code ignored;
    fs::create_directories(scratch_root, ignored);
    scratch = make_scratch_dir(scratch_root, "verify.");
    const std::string object = scratch + "/object.o";
    auto command = redirect_outputs(entry.origin_command, object, scratch + "/object.d");
    Environment env = entry.origin_env;
    env.insert_or_assign("NVFRESH_ACTIVE", std::string(1, '1'));  // never recorded by nvfresh
    ProcessResult run =
      run_redirected(command, env, scratch + "/stdout", scratch + "/stderr", entry.origin_cwd);
    if (!run.succeeded()) {
      result.verdict = Verification::failed;
      result.detail = fmt::format("nvcc exited with status {}: {}", run.exit_code,
                                  try_read_file(scratch + "/stderr", 4096).value_or(""));
    } else {
      for (const auto& component : digest_artifact(object).components) {
        result.compiled[component.key] = component.digest;
      }
      const std::map<std::string, Digest> held = held_components(entry);
      if (result.compiled == held) {
        result.verdict = Verification::same;
      } else if (std::find(entry.other_variants.begin(), entry.other_variants.end(),
                           result.compiled) != entry.other_variants.end()) {
        result.verdict = Verification::known_variant;
        result.detail = differing_components(held, result.compiled);
      } else {
        result.verdict = Verification::differs;
        result.detail = differing_components(held, result.compiled);
      }
    }
  } catch (const std::exception& error) {
    result.verdict = Verification::not_run;
    result.detail = error.what();
  }
  std::error_code ignored;
  if (!scratch.empty()) {
    fs::remove_all(scratch, ignored);
  }
  return result;
}

}  // namespace nvfresh

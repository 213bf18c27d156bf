#include "freshness/freshness.hpp"

#include "freshness/path_lookups.hpp"
#include "record/signature.hpp"

#include <fmt/format.h>

#include <set>

namespace nvfresh {

namespace {

std::string quoted_or_unset(const std::string* value)
{
  return value != nullptr ? fmt::format("'{}'", *value) : std::string("unset");
}

}  // namespace

std::string StaleReason::describe() const
{
  switch (kind) {
  case Cause::record_unreadable: return fmt::format("record unreadable ({})", after);
  case Cause::untrusted: return fmt::format("not trusted: {}", after);
  case Cause::object_missing: return fmt::format("object {} is missing", path);
  case Cause::object_modified:
    return fmt::format("object {} was modified after it was built: {} -> {}", path, before, after);
  case Cause::input_changed: return fmt::format("{} changed: {} -> {}", path, before, after);
  case Cause::input_missing: return fmt::format("{} was deleted", path);
  case Cause::input_unstable: return fmt::format("{} kept changing while it was read", path);
  case Cause::tool_changed: return fmt::format("tool {} changed: {} -> {}", path, before, after);
  case Cause::probe_found:
    return fmt::format("{} now exists (it was looked up and not found when the object was built)",
                       path);
  case Cause::env_changed: return fmt::format("{} changed: {} -> {}", path, before, after);
  case Cause::mtime_in_output:
    return fmt::format("{} was touched, and the compile's output depends on mtimes: {}", path,
                       before);
  case Cause::path_lookup_changed:
    return fmt::format("{} on PATH is now {} (was {})", path, after.empty() ? "not found" : after,
                       before.empty() ? "not found" : before);
  case Cause::inputs_unknown:
    return "its inputs are unknown: the compile was not traced (another cache answered, or the "
           "tracer could not run) and the build asked nvcc for no depfile, so nothing can prove it "
           "fresh; the next build compiles it again";
  case Cause::no_record:
    return fmt::format("{} has no record of it (not recorded after a failed write, or built "
                       "without nvfresh): the next build compiles it again",
                       path);
  case Cause::not_verified:
    return "not verified: the compile was not traced (another cache answered, or the tracer could "
           "not run), so nothing proves what the object was built from; the next build compiles "
           "it again";
  default: break;
  }
  return fmt::format("{} ({})", nvfresh::describe(kind), path);
}

FreshnessChecker::FreshnessChecker(FileHasher& hasher, const Environment& current_env)
  : m_hasher(hasher), m_compile_env(compile_environment(current_env))
{}

FreshnessVerdict FreshnessChecker::check(const Record& record)
{
  FreshnessVerdict verdict;
  if (!record.trusted) {
    verdict.reasons.push_back({Cause::untrusted, record.object, "", record.untrusted_reason});
  }
  if (!record.inputs_from_trace) {
    const Cause cause = record.depfile_path.empty() ? Cause::inputs_unknown : Cause::not_verified;
    verdict.reasons.push_back({cause, record.object, "", ""});
  }
  check_object(record, verdict);
  for (auto& change : changed_lookups(RecordedLookups::of(record), m_hasher,
                                      LookupCheck::every_change, &verdict.inputs_touched)) {
    verdict.reasons.push_back(std::move(change));
  }
  if (!record.mtime_dependent.empty()) {
    check_mtimes(record, verdict);
  }
  check_environment(record, verdict);
  check_path_lookups(record, verdict);
  return verdict;
}

void FreshnessChecker::check_object(const Record& record, FreshnessVerdict& verdict)
{
  std::optional<FileFingerprint> now;
  if (m_hasher.unchanged(record.output, &now)) {
    return;
  }
  if (!m_hasher.stat(record.output.path).exists) {
    verdict.reasons.push_back({Cause::object_missing, record.output.path, "", ""});
    return;
  }
  verdict.reasons.push_back({Cause::object_modified, record.output.path,
                             record.output.hash.short_hex(),
                             now ? now->hash.short_hex() : std::string("unreadable")});
}

// A compile whose output holds mtimes (__TIMESTAMP__) or was judged by them (#pragma GCC
// dependency): an input whose mtime is not the recorded one makes it stale, its content unchanged
// too. The stats are the ones changed_lookups made (memoized): no file is read.
void FreshnessChecker::check_mtimes(const Record& record, FreshnessVerdict& verdict)
{
  std::set<std::string> changed;  // inputs already given a reason: changed, deleted, ...
  for (const auto& reason : verdict.reasons) {
    changed.insert(reason.path);
  }
  for (const auto& input : record.inputs) {
    const FileStat now = m_hasher.stat(input.file.path);
    if (now.exists && now.mtime_ns != input.file.mtime_ns && !changed.contains(input.file.path)) {
      verdict.reasons.push_back(
        {Cause::mtime_in_output, input.file.path, record.mtime_dependent, ""});
    }
  }
}

void FreshnessChecker::check_environment(const Record& record, FreshnessVerdict& verdict)
{
  std::set<std::string> names;
  for (const auto& [name, value] : record.env) {
    names.insert(name);
  }
  for (const auto& [name, value] : m_compile_env) {
    names.insert(name);
  }
  names.erase(std::string(k_path_variable));  // judged by what it resolves: check_path_lookups
  for (const auto& name : names) {
    auto then = record.env.find(name);
    auto now = m_compile_env.find(name);
    const std::string* before = then != record.env.end() ? &then->second : nullptr;
    const std::string* after = now != m_compile_env.end() ? &now->second : nullptr;
    if ((before == nullptr) != (after == nullptr) || (before != nullptr && *before != *after)) {
      verdict.reasons.push_back(
        {Cause::env_changed, name, quoted_or_unset(before), quoted_or_unset(after)});
    }
  }
}

void FreshnessChecker::check_path_lookups(const Record& record, FreshnessVerdict& verdict)
{
  auto then = record.env.find(std::string(k_path_variable));
  auto now = m_compile_env.find(std::string(k_path_variable));
  const std::string before_path = then != record.env.end() ? then->second : std::string();
  const std::string current_path = now != m_compile_env.end() ? now->second : std::string();
  if (before_path == current_path) {
    return;
  }
  for (const auto& lookup : path_lookups_of(record)) {
    std::string resolved =
      resolve_in_path(lookup.name, current_path, record.working_dir, lookup.program);
    if (resolved != lookup.resolved) {
      verdict.reasons.push_back(
        {Cause::path_lookup_changed, lookup.name, lookup.resolved, resolved});
    }
  }
}

}  // namespace nvfresh

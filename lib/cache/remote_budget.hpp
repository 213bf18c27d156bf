// How much of a build's time a slow remote may take: a budget per compile and one per build.
//
// The compile's budget (NVFRESH_REMOTE_COMPILE_BUDGET, seconds, default 10) is time spent in
// remote lookups, not time since the compile started: a compile's lookups are made by several
// processes (the launcher's object lookup, then each cicc and ptxas step that nvcc runs), with
// local work between them (a cicc of a large TU can take a minute), and only the lookups are the
// remote's. So they add up in a ledger, a small file that the launcher names for its compile
// (NVFRESH_REMOTE_LEDGER in the environment nvcc and its steps inherit) and removes at its end:
// "<spent ns> <over>". Each lookup gets what is left of it as an absolute CLOCK_MONOTONIC deadline
// (the helper's budget_deadline_ns; every call's deadline is the sooner of its own and this) and
// adds the time it took. With nothing left, the remote is not asked (a miss) and the compile goes
// on locally; the first lookup to find it so marks the ledger "over", once per compile.
//
// The build's budget (NVFRESH_REMOTE_BUILD_BUDGET, seconds, default 30) sums only what over-budget
// compiles lost (their ledgers' spent time), per build (util/build_invocation.hpp's id), in a file
// of the record root: "<build id>\n<sum ns>\n". A healthy server adds nothing to it, however big
// the build. Once the sum reaches the budget, the remote is off for the rest of the build (the
// failure marker of cache/cache_storage.hpp is written, so it expires like a failure).
//
// Remote execution (NVFRESH_REMOTE_EXEC) is not a lookup: its steps run remotely with a timeout of
// their own (NVFRESH_REMOTE_EXEC_TIMEOUT) and are outside both budgets; so are uploads, which do
// not hold the compile (cache/background_upload.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nvfresh {

inline constexpr const char* k_remote_ledger_variable = "NVFRESH_REMOTE_LEDGER";
// Twice a call's deadline (5 s): a server that answers nothing fails its first call's deadline
// before the budget ends, a failure that turns the remote off for the build at once; the budget
// bounds a server that answers, slowly, call after call.
inline constexpr std::int64_t k_default_compile_budget_ns = 10'000'000'000;
inline constexpr std::int64_t k_default_build_budget_ns = 30'000'000'000;

// A budget setting in seconds ("5", "0.5", "120"); "" is `default_ns`. nullopt when it is not a
// number of seconds from 0 to a day.
std::optional<std::int64_t> parse_budget_ns(const std::string& text, std::int64_t default_ns);

// A compile's remote time so far.
struct LedgerState {
  std::int64_t spent_ns = 0;
  bool over = false;  // a lookup found the budget spent, or ran out of it
};

LedgerState parse_ledger(const std::string& text);
std::string format_ledger(const LedgerState& state);
// What is left of `budget_ns` after `state` (0 once over).
std::int64_t budget_left_ns(std::int64_t budget_ns, const LedgerState& state);
// `state` after a lookup that took `took_ns`: over when the lookup ran out of the budget (one that
// took the rest and got its answer is not: the next lookup finds nothing left, and is the one that
// goes over, counted and said).
LedgerState after_lookup(LedgerState state, std::int64_t took_ns, bool ran_out);

// The ledger file `file` (missing or unreadable: nothing spent).
LedgerState read_ledger(const std::string& file);
// Records a lookup in `file` under a lock (concurrent steps of one compile share it). Returns the
// state after it, and `newly_over` true for the one lookup that turned it over.
LedgerState record_lookup(const std::string& file, std::int64_t took_ns, bool ran_out,
                          bool* newly_over);

// The time over-budget compiles of one build lost, after one more lost `lost_ns`.
struct BuildSum {
  std::int64_t total_ns = 0;
  bool crossed = false;  // this addition took it from below the build budget to or past it
};

// The sum file's text after adding `lost_ns` for build `build_id` (another build's sum starts
// again from 0), and what it now says.
std::string add_to_build_sum(const std::string& text, const std::string& build_id,
                             std::int64_t lost_ns, std::int64_t budget_ns, BuildSum* sum);
// The same on the file `file`, under a lock.
BuildSum add_to_build_sum_file(const std::string& file, const std::string& build_id,
                               std::int64_t lost_ns, std::int64_t budget_ns);

// "5 s", "0.5 s", "4.12 s", "2 min" (3 digits at most)
std::string budget_text(std::int64_t ns);

}  // namespace nvfresh

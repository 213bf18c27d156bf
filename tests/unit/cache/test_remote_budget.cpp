#include "cache/remote_budget.hpp"

#include "../temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("remote budget: settings in seconds, empty is the default", "[cache]")
{
  CHECK(parse_budget_ns("", 7) == 7);
  CHECK(parse_budget_ns("5", 7) == 5'000'000'000);
  CHECK(parse_budget_ns("0.25", 7) == 250'000'000);
  CHECK(parse_budget_ns("0", 7) == 0);
  CHECK(parse_budget_ns("86400", 7) == 86400LL * 1'000'000'000);
  CHECK_FALSE(parse_budget_ns("86401", 7));
  CHECK_FALSE(parse_budget_ns("-1", 7));
  CHECK_FALSE(parse_budget_ns("5s", 7));
  CHECK_FALSE(parse_budget_ns("soon", 7));
  CHECK_FALSE(parse_budget_ns("nan", 7));
}

TEST_CASE("remote budget: a compile's ledger leaves what its lookups did not take", "[cache]")
{
  constexpr std::int64_t budget = 5'000'000'000;
  LedgerState state;
  CHECK(budget_left_ns(budget, state) == budget);
  state = after_lookup(state, 1'500'000'000, false);
  CHECK(budget_left_ns(budget, state) == 3'500'000'000);
  CHECK_FALSE(state.over);
  state = after_lookup(state, 3'000'000'000, false);
  CHECK(budget_left_ns(budget, state) == 500'000'000);
  // A lookup that ran out is over, whatever the clock said it took.
  LedgerState ran_out = after_lookup(state, 100'000'000, true);
  CHECK(ran_out.over);
  CHECK(budget_left_ns(budget, ran_out) == 0);
  // One that took the rest and got its answer leaves nothing: the next is the one over.
  CHECK_FALSE(after_lookup(state, 500'000'000, false).over);
  CHECK(budget_left_ns(budget, after_lookup(state, 900'000'000, false)) == 0);
  // A clock that went back adds nothing.
  CHECK(after_lookup(state, -5, false).spent_ns == state.spent_ns);
  // A zero budget leaves nothing.
  CHECK(budget_left_ns(0, LedgerState{}) == 0);
}

TEST_CASE("remote budget: the ledger's text round-trips, a damaged one is nothing spent", "[cache]")
{
  const LedgerState state{1234, true};
  const LedgerState back = parse_ledger(format_ledger(state));
  CHECK(back.spent_ns == 1234);
  CHECK(back.over);
  CHECK(parse_ledger("").spent_ns == 0);
  CHECK_FALSE(parse_ledger("garbage").over);
  CHECK(parse_ledger("-40 0\n").spent_ns == 0);
}

TEST_CASE("remote budget: lookups of one compile add up in its ledger file, over said once",
          "[cache]")
{
  test::TempDir dir;
  const std::string ledger = dir.path("records/remote-time/1-2");  // its dir made when missing
  constexpr std::int64_t budget = 2'000'000'000;
  CHECK(read_ledger(ledger).spent_ns == 0);
  bool newly_over = true;
  record_lookup(ledger, 1'200'000'000, false, &newly_over);
  CHECK_FALSE(newly_over);
  CHECK(read_ledger(ledger).spent_ns == 1'200'000'000);
  // Another process of the compile (a step) reads the same file.
  CHECK(budget_left_ns(budget, read_ledger(ledger)) == 800'000'000);
  record_lookup(ledger, 800'000'000, true, &newly_over);
  CHECK(newly_over);
  record_lookup(ledger, 0, true, &newly_over);
  CHECK_FALSE(newly_over);
  CHECK(read_ledger(ledger).over);
  CHECK(read_ledger(ledger).spent_ns == 2'000'000'000);
}

TEST_CASE("remote budget: a build sums what its over-budget compiles lost, crossing once",
          "[cache]")
{
  constexpr std::int64_t budget = 10;
  BuildSum sum;
  std::string text = add_to_build_sum("", "ninja 1 2", 4, budget, &sum);
  CHECK(sum.total_ns == 4);
  CHECK_FALSE(sum.crossed);
  text = add_to_build_sum(text, "ninja 1 2", 4, budget, &sum);
  CHECK(sum.total_ns == 8);
  CHECK_FALSE(sum.crossed);
  text = add_to_build_sum(text, "ninja 1 2", 4, budget, &sum);
  CHECK(sum.total_ns == 12);
  CHECK(sum.crossed);
  text = add_to_build_sum(text, "ninja 1 2", 4, budget, &sum);
  CHECK(sum.total_ns == 16);
  CHECK_FALSE(sum.crossed);  // said once
  // The next build starts from nothing.
  add_to_build_sum(text, "ninja 7 8", 4, budget, &sum);
  CHECK(sum.total_ns == 4);
  CHECK_FALSE(sum.crossed);
  // A zero budget is crossed by the first.
  add_to_build_sum("", "make 3 4", 1, 0, &sum);
  CHECK(sum.crossed);

  test::TempDir dir;
  const std::string file = dir.path("remote-over-budget");
  CHECK_FALSE(add_to_build_sum_file(file, "ninja 1 2", 6, budget).crossed);
  const BuildSum on_file = add_to_build_sum_file(file, "ninja 1 2", 6, budget);
  CHECK(on_file.total_ns == 12);
  CHECK(on_file.crossed);
}

TEST_CASE("remote budget: said in seconds or minutes", "[cache]")
{
  CHECK(budget_text(5'000'000'000) == "5 s");
  CHECK(budget_text(1'500'000'000) == "1.5 s");
  CHECK(budget_text(4'123'456'789) == "4.12 s");
  CHECK(budget_text(300'000'000'000) == "5 min");
}

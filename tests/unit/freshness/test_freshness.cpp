#include "freshness/freshness.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

struct Fixture {
  test::TempDir dir;
  Record record;
  Fixture()
  {
    FileHasher hasher;
    auto header = dir.write("inc/kernel_forward.h", "#define TILE 64\n");
    auto tool = dir.write("bin/cicc", "cicc v1");
    auto object = dir.write("a.o", "object bytes");
    record.object = object;
    record.trusted = true;
    record.inputs.push_back(
      {*hasher.fingerprint(header).fingerprint, InputRole::header, {"compute_80"}});
    record.inputs.push_back({*hasher.fingerprint(tool).fingerprint, InputRole::tool, {}});
    record.output = *hasher.fingerprint(object).fingerprint;
    record.probes = group_probes({dir.path("inc0/kernel_forward.h")});
    record.env = {{"NVCC_APPEND_FLAGS", "-DX=1"}};
  }
  FreshnessVerdict check(const Environment& env = {{"NVCC_APPEND_FLAGS", "-DX=1"}})
  {
    FileHasher hasher;
    return FreshnessChecker(hasher, env).check(record);
  }
};

}  // namespace

TEST_CASE("an untouched build is fresh", "[freshness]")
{
  Fixture f;
  REQUIRE(f.check().fresh());
}

TEST_CASE("every kind of change makes the object stale, with a reason", "[freshness]")
{
  Fixture f;
  Cause expected = Cause::input_changed;
  std::string mentions;

  SECTION("header content replaced, mtime kept")
  {
    auto old = stat_file(f.dir.path("inc/kernel_forward.h"));
    f.dir.write("inc/kernel_forward.h", "#define TILE 128\n");
    set_mtime_ns(f.dir.path("inc/kernel_forward.h"), old.mtime_ns);
    mentions = "kernel_forward.h changed";
  }
  SECTION("tool replaced in place")
  {
    f.dir.write("bin/cicc", "cicc v2");
    expected = Cause::tool_changed;
    mentions = "tool";
  }
  SECTION("header deleted")
  {
    std::filesystem::remove(f.dir.path("inc/kernel_forward.h"));
    expected = Cause::input_missing;
    mentions = "was deleted";
  }
  SECTION("a new header would shadow the old one")
  {
    f.dir.write("inc0/kernel_forward.h", "#define TILE 1\n");
    expected = Cause::probe_found;
    mentions = "now exists";
  }
  SECTION("object modified by someone else")
  {
    f.dir.write("a.o", "other bytes!");
    expected = Cause::object_modified;
    mentions = "was modified";
  }
  SECTION("object deleted")
  {
    std::filesystem::remove(f.dir.path("a.o"));
    expected = Cause::object_missing;
    mentions = "missing";
  }
  SECTION("untrusted after a race")
  {
    f.record.trusted = false;
    f.record.untrusted_reason = "kernel_forward.h changed while the object compiled";
    expected = Cause::untrusted;
    mentions = "while the object compiled";
  }
  SECTION("inputs neither traced nor listed by a depfile (a ccache hit without -MD)")
  {
    f.record.inputs_from_trace = false;
    expected = Cause::inputs_unknown;
    mentions = "its inputs are unknown";
  }
  SECTION("inputs from nvcc's depfile only: the compile was not traced")
  {
    f.record.inputs_from_trace = false;
    f.record.depfile_path = f.dir.path("a.o.d");
    expected = Cause::not_verified;
    mentions = "not verified";
  }
  FreshnessVerdict verdict = f.check();
  REQUIRE_FALSE(verdict.fresh());
  REQUIRE(verdict.reasons.front().kind == expected);
  INFO(verdict.reasons.front().describe());
  REQUIRE(verdict.reasons.front().describe().find(mentions) != std::string::npos);
}

TEST_CASE("environment flags are part of freshness", "[freshness]")
{
  Fixture f;
  auto changed = f.check({{"NVCC_APPEND_FLAGS", "-DX=2"}});
  REQUIRE(changed.reasons.size() == 1);
  REQUIRE(changed.reasons[0].describe() == "NVCC_APPEND_FLAGS changed: '-DX=1' -> '-DX=2'");
  auto unset = f.check({});
  REQUIRE(unset.reasons[0].after == "unset");
  auto added = f.check({{"NVCC_APPEND_FLAGS", "-DX=1"}, {"NVCC_PREPEND_FLAGS", "-G"}});
  REQUIRE(added.reasons[0].path == "NVCC_PREPEND_FLAGS");
  auto unrelated = f.check({{"NVCC_APPEND_FLAGS", "-DX=1"}, {"HOME", "/x"}});
  REQUIRE(unrelated.fresh());
}

TEST_CASE("a touched but unchanged input stays fresh", "[freshness]")
{
  Fixture f;
  auto path = f.dir.path("inc/kernel_forward.h");
  set_mtime_ns(path, stat_file(path).mtime_ns + 10'000'000'000);
  REQUIRE(f.check().fresh());
}

TEST_CASE("a touched input makes stale a compile whose output depends on mtimes", "[freshness]")
{
  Fixture f;
  f.record.mtime_dependent = f.dir.path("inc/kernel_forward.h") + " uses __TIMESTAMP__";
  REQUIRE(f.check().fresh());

  // Content unchanged, only the mtime moved (a touch): __TIMESTAMP__ would now expand otherwise.
  auto path = f.dir.path("inc/kernel_forward.h");
  set_mtime_ns(path, stat_file(path).mtime_ns + 10'000'000'000);
  FreshnessVerdict verdict = f.check();
  REQUIRE(verdict.reasons.size() == 1);
  const StaleReason& reason = verdict.reasons.front();
  CHECK(reason.kind == Cause::mtime_in_output);
  CHECK(reason.path == path);
  CHECK(reason.describe() == path + " was touched, and the compile's output depends on mtimes: " +
                               f.record.mtime_dependent);
  CHECK(cause_name(reason.kind) == "mtime_in_output");

  SECTION("a tool touched counts too: any input's mtime may be what the output holds")
  {
    set_mtime_ns(path, f.record.inputs[0].file.mtime_ns);
    auto tool = f.dir.path("bin/cicc");
    set_mtime_ns(tool, stat_file(tool).mtime_ns - 10'000'000'000);
    verdict = f.check();
    REQUIRE(verdict.reasons.size() == 1);
    CHECK(verdict.reasons.front().path == tool);
  }
  SECTION("an input whose content changed is named once, as changed")
  {
    f.dir.write("inc/kernel_forward.h", "#define TILE 128\n");
    verdict = f.check();
    REQUIRE(verdict.reasons.size() == 1);
    CHECK(verdict.reasons.front().kind == Cause::input_changed);
  }
  SECTION("without mtime_dependent the touch is no change")
  {
    f.record.mtime_dependent.clear();
    CHECK(f.check().fresh());
  }
}

TEST_CASE("inputs from nvcc's depfile alone never prove an object fresh", "[freshness]")
{
  // A depfile lists what one preprocessing saw; a cache that answered without nvcc running (a
  // ccache hit keyed on `nvcc -E`) gives a depfile of the current headers for an old object.
  Fixture f;
  f.record.inputs_from_trace = false;
  f.record.depfile_path = f.dir.path("a.o.d");
  FreshnessVerdict verdict = f.check();
  REQUIRE_FALSE(verdict.fresh());
  CHECK(verdict.reasons.front().kind == Cause::not_verified);
}

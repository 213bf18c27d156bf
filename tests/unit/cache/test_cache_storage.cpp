#include "cache/cache_storage.hpp"

#include "cache/background_upload.hpp"
#include "protocol/remote_protocol.hpp"

#include "util/build_invocation.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include "../temp_dir.hpp"
#include "fake_remote.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <filesystem>

using namespace nvfresh;

namespace {

const std::vector<std::string> k_arguments{"ptxas", "-arch=sm_90", "\x02TMP\x03.ptx"};

CacheSettings settings_in(const test::TempDir& dir, const std::string& name)
{
  CacheSettings settings;
  settings.dir = dir.path(name);
  settings.max_bytes = 1ULL << 30;
  return settings;
}

StepEntry step_entry(const Digest& key, const std::string& content)
{
  StepEntry entry;
  entry.key = key;
  entry.tool = "/usr/local/cuda/bin/ptxas";
  entry.pass = "sm_90";
  entry.outputs.push_back({"/tmp/\x02TMP\x03.cubin", content});
  return entry;
}

// A storage in `dir`/`name` whose remote is the fake of `remote`, its failure marker `marker`.
CacheStorage storage_with(const test::TempDir& dir, const std::string& name,
                          test::FakeRemote::State& remote, const std::string& marker = {})
{
  CacheStorage storage(settings_in(dir, name));
  storage.use_remote(std::make_unique<test::FakeRemote>(remote), marker);
  return storage;
}

// The remote holds `entry` under the step Action of `key` (salted with the step key version).
void remote_holds(test::FakeRemote::State& remote, const Digest& key, const StepEntry& entry)
{
  remote.steps[to_json(step_action(key, k_arguments, k_step_key_version)).dump()] =
    serialize_step_entry(entry);
}

bool always(const StepEntry&)
{
  return true;
}

// A remote each of whose lookups runs a compile over its budget, losing 2 s, under `build_budget_ns`.
test::FakeRemote::State over_budget_remote(std::int64_t build_budget_ns)
{
  test::FakeRemote::State remote;
  remote.settings.build_budget_ns = build_budget_ns;
  remote.over_budget_ns = 2'000'000'000;
  return remote;
}

// The build's failure marker in the records dir of `dir`.
std::string records_marker(const test::TempDir& dir)
{
  std::filesystem::create_directories(dir.path("records"));
  return dir.path("records/remote-failed");
}

}  // namespace

TEST_CASE("storage: a local hit never asks the remote", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  CacheStorage storage = storage_with(dir, "cache", remote);
  const Digest key = hash_bytes("a step");
  storage.local().write_step(key, step_entry(key, "local"));
  remote_holds(remote, key, step_entry(key, "remote"));

  const StepEntries found = storage.find_step(key, k_arguments, always);
  REQUIRE(found.local);
  CHECK(found.local_holds);
  CHECK(found.local->outputs[0].content == "local");
  CHECK_FALSE(found.remote);
  CHECK(remote.calls == 0);
}

TEST_CASE("storage: a local miss asks the remote and keeps what it returns", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  CacheStorage storage = storage_with(dir, "cache", remote);
  const Digest key = hash_bytes("a step");
  remote_holds(remote, key, step_entry(key, "remote"));

  SECTION("no local entry")
  {
    const StepEntries found = storage.find_step(key, k_arguments, always);
    CHECK_FALSE(found.local);
    REQUIRE(found.remote);
    CHECK(found.remote_holds);
    CHECK(found.remote->outputs[0].content == "remote");
    CHECK(remote.calls == 1);
    const auto kept = storage.local().read_step(key);
    REQUIRE(kept);
    CHECK(*kept == *found.remote);
    CHECK(storage.local().counters()[CacheCounter::remote_step_hits] == 1);
    // The next lookup is a local hit: the remote is not asked again.
    CHECK(storage.find_step(key, k_arguments, always).local_holds);
    CHECK(remote.calls == 1);
  }
  SECTION("a local entry whose inputs changed: the remote's is judged the same way")
  {
    storage.local().write_step(key, step_entry(key, "local"));
    const StepEntries found = storage.find_step(key, k_arguments, [](const StepEntry& entry) {
      return entry.outputs[0].content == "remote";
    });
    CHECK(found.local);
    CHECK_FALSE(found.local_holds);
    REQUIRE(found.remote);
    CHECK(found.remote_holds);
    CHECK(remote.calls == 1);
  }
  SECTION("the remote's entry names another key: a miss, counted, not kept")
  {
    const Digest other = hash_bytes("another step");
    remote_holds(remote, other, step_entry(key, "relinked"));
    CHECK_FALSE(storage.fetch_step(other, k_arguments));
    CHECK(storage.local().counters()[CacheCounter::remote_step_misses] == 1);
    CHECK_FALSE(storage.local().read_step(other));
  }
}

TEST_CASE("storage: a remote that fails is counted, marked, and not asked again in the build",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.failing = true;
  const std::string marker = dir.path("records/remote-failed");
  std::filesystem::create_directories(dir.path("records"));
  CacheStorage storage = storage_with(dir, "cache", remote, marker);
  const Digest key = hash_bytes("a step");
  CHECK(storage.remote_usable());

  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK(remote.calls == 1);
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 1);
  CHECK(stat_file(marker).is_regular);
  CHECK(already_this_build(marker));
  CHECK_FALSE(storage.remote_usable());

  // Neither this storage nor another of the same build (the next compile) asks it again.
  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  storage.store_step(key, k_arguments, step_entry(key, "run"));
  CacheStorage next = storage_with(dir, "cache", remote, marker);
  CHECK_FALSE(next.find_step(key, k_arguments, always).remote);
  CHECK(remote.calls == 1);
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 1);
  // The store stayed local.
  CHECK(storage.local().read_step(key));
}

TEST_CASE("storage: an untrusted result is a miss, counted and said once per build, and the "
          "remote stays in use",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.untrusted = "not signed";
  const std::string marker = dir.path("records/remote-failed");
  std::filesystem::create_directories(dir.path("records"));
  CacheStorage storage = storage_with(dir, "cache", remote, marker);
  const Digest key = hash_bytes("a step");

  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK(storage.local().counters()[CacheCounter::remote_untrusted] == 1);
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 0);
  CHECK_FALSE(stat_file(marker).exists);
  CHECK(already_this_build(dir.path("records/remote-untrusted")));
  CHECK(storage.remote_usable());
  // The next compile of the build asks again (a signed result would be served).
  CacheStorage next = storage_with(dir, "cache", remote, marker);
  CHECK_FALSE(next.fetch_step(key, k_arguments));
  CHECK(remote.calls == 2);
  CHECK(next.local().counters()[CacheCounter::remote_untrusted] == 2);
}

TEST_CASE("storage: a remote without a failure marker is asked again after a failure", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.failing = true;
  CacheStorage storage = storage_with(dir, "cache", remote);
  const Digest key = hash_bytes("a step");
  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK(remote.calls == 2);
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 2);
}

TEST_CASE("storage: a read-only remote is asked but never uploaded to", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.settings.read_only = true;
  CacheStorage storage = storage_with(dir, "cache", remote);
  const Digest key = hash_bytes("a step");

  storage.store_step(key, k_arguments, step_entry(key, "run"));
  CHECK(storage.local().read_step(key));
  CHECK(remote.uploads == 0);
  CHECK(remote.steps.empty());
  CHECK(remote.calls == 0);
  CHECK(storage.remote_usable());
  CHECK_FALSE(storage.remote_writable());
  CHECK_FALSE(storage.with_remote(key, true, [](RemoteBackend&) { FAIL("an upload ran"); }));

  const Digest other = hash_bytes("another step");
  remote_holds(remote, other, step_entry(other, "remote"));
  CHECK(storage.fetch_step(other, k_arguments));
  CHECK(remote.calls == 1);
}

TEST_CASE("storage: step entries go to the remote salted with the step key version", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  CacheStorage storage = storage_with(dir, "a", remote);
  const Digest key = hash_bytes("a step");
  const StepEntry entry = step_entry(key, "run");

  storage.store_step(key, k_arguments, entry);
  CHECK(remote.uploads == 1);
  REQUIRE(remote.steps.size() == 1);
  const auto action = nlohmann::json::parse(remote.steps.begin()->first);
  CHECK(action["salt"] == std::string(k_step_key_version) + "/step");
  CHECK(action == to_json(step_action(key, k_arguments, k_step_key_version)));
  CHECK(storage.local().counters()[CacheCounter::remote_step_uploads] == 1);

  // Another machine finds it under the same Action, and nothing under the object keys' salt.
  CacheStorage other = storage_with(dir, "b", remote);
  const auto fetched = other.fetch_step(key, k_arguments);
  REQUIRE(fetched);
  CHECK(*fetched == entry);
  CHECK(remote.steps.count(to_json(step_action(key, k_arguments, "nvfresh-cache-1")).dump()) == 0);
}

TEST_CASE("storage: a failure marker expires: the remote is asked again, a failure said again "
          "(issue 41)",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.failing = true;
  const std::string marker = dir.path("records/remote-failed");
  std::filesystem::create_directories(dir.path("records"));
  CacheStorage storage = storage_with(dir, "cache", remote, marker);
  const Digest key = hash_bytes("a step");
  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  REQUIRE(remote.calls == 1);
  CHECK_FALSE(storage.remote_usable());

  SECTION("within its life the remote stays off")
  {
    set_mtime_ns(marker, now_ns() - CacheStorage::k_failure_marker_life_ns + k_minute_ns);
    CHECK_FALSE(storage.remote_usable());
    CHECK_FALSE(storage.fetch_step(key, k_arguments));
    CHECK(remote.calls == 1);
  }
  SECTION("once it expired, the remote is asked; a server back up serves")
  {
    set_mtime_ns(marker, now_ns() - CacheStorage::k_failure_marker_life_ns - k_minute_ns);
    CHECK(storage.remote_usable());
    remote.failing = false;
    remote_holds(remote, key, step_entry(key, "remote"));
    CHECK(storage.fetch_step(key, k_arguments));
    CHECK(remote.calls == 2);
  }
  SECTION("once it expired, a failure again is counted and marked anew: off for another life")
  {
    const std::int64_t old = now_ns() - CacheStorage::k_failure_marker_life_ns - k_minute_ns;
    set_mtime_ns(marker, old);
    CHECK_FALSE(storage.fetch_step(key, k_arguments));
    CHECK(remote.calls == 2);
    CHECK(storage.local().counters()[CacheCounter::remote_errors] == 2);
    CHECK(stat_file(marker).mtime_ns > old);
    CHECK(already_this_build(marker));
    CHECK_FALSE(storage.remote_usable());
    CHECK_FALSE(storage.fetch_step(key, k_arguments));
    CHECK(remote.calls == 2);
  }
}

TEST_CASE("storage: a background upload's failure is marked for its build, its line left for the "
          "next compile",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  remote.failing = true;
  const std::string marker = dir.path("remote-failed");
  const Digest key = hash_bytes("step");
  {
    CacheStorage detached = storage_with(dir, "cache", remote, marker);
    detached.keep_failures_for(build_invocation_id());
    detached.store_step(key, k_arguments, step_entry(key, "cubin"));
  }
  CHECK(already_this_build(marker));
  const auto line = try_read_file(marker + ".line");
  REQUIRE(line);
  CHECK(line->find("the remote cache") != std::string::npos);
  CHECK(line->find("the fake remote is down") != std::string::npos);
  // The build's next compile finds the remote off, says the line (taken: said once) and asks
  // nothing.
  CacheStorage compile = storage_with(dir, "cache", remote, marker);
  const int calls = remote.calls;
  CHECK_FALSE(compile.fetch_step(key, k_arguments));
  CHECK(remote.calls == calls);
  CHECK_FALSE(stat_file(marker + ".line").exists);
}

TEST_CASE("storage: an upload job round-trips and names its build", "[cache]")
{
  const UploadJob job{hash_bytes("entry"), CacheCounter::remote_step_uploads, "/b/remote-failed",
                      "ninja 42 1234"};
  CHECK(parse_upload_job(serialize_upload_job(job)) == job);
  CHECK_FALSE(parse_upload_job("{}"));
  CHECK_FALSE(parse_upload_job("not json"));
  test::TempDir dir;
  const std::string jobs = dir.path("uploads");
  CHECK(pending_upload_jobs(jobs) == 0);
  const std::string one = new_upload_job_dir(jobs);
  new_upload_job_dir(jobs);
  CHECK(pending_upload_jobs(jobs) == 2);
  CHECK(one.rfind(jobs + "/job-", 0) == 0);
}

TEST_CASE("storage: a compile's batch keeps its uploads' jobs for the compile's end", "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  CacheStorage storage = storage_with(dir, "cache", remote, dir.path("remote-failed"));
  const std::string jobs = dir.path("cache/uploads");
  storage.upload_in_background(jobs);
  storage.upload_in_batch("compile-1");
  const Digest key = hash_bytes("a step");

  storage.store_step(key, k_arguments, step_entry(key, "run"));
  CHECK(remote.uploads == 1);  // prepared into its job dir, not sent
  CHECK(storage.local().counters()[CacheCounter::remote_step_uploads] == 0);
  const std::vector<std::string> batch = batched_upload_jobs(jobs, "compile-1");
  REQUIRE(batch.size() == 1);
  CHECK(batch[0].rfind(jobs + "/job-compile-1-", 0) == 0);
  const auto job = parse_upload_job(read_file(batch[0] + "/" + k_upload_job_file));
  REQUIRE(job);
  CHECK(job->key == key);
  CHECK(job->counter == CacheCounter::remote_step_uploads);
  CHECK(job->failure_marker == dir.path("remote-failed"));

  // Another compile's batch, a job without its job.json yet, and no batch are not this batch.
  new_upload_job_dir(jobs, "compile-2");
  write_upload_job(new_upload_job_dir(jobs, "compile-10"), *job);
  new_upload_job_dir(jobs, "compile-1");
  CHECK(batched_upload_jobs(jobs, "compile-1") == batch);
  CHECK(batched_upload_jobs(jobs, "").empty());
  CHECK(batched_upload_jobs(dir.path("none"), "compile-1").empty());
}

TEST_CASE("storage: a batch's put requests merge into one, in order, only for one remote",
          "[cache]")
{
  auto request = [](const std::string& name, const std::string& remote) {
    HelperRequest put;
    put.verb = HelperVerb::put;
    put.remote = remote;
    put.digest_cache = "/c/sha256-cache";
    ActionSpec action;
    action.salt = "nvfresh-step-2/step";
    action.arguments = {name};
    action.output_paths = {"nvfresh.step"};
    put.put = {{action, {{"nvfresh.step", "/j/" + name}}, "/j/empty", "/j/empty"}};
    return put;
  };
  const HelperRequest cicc = request("cicc", "grpc://cache:1");
  const HelperRequest ptxas = request("ptxas", "grpc://cache:1");
  const auto merged = merged_put_request({to_json(cicc).dump(), to_json(ptxas).dump()});
  REQUIRE(merged);
  const HelperRequest back = parse_helper_request(*merged);
  REQUIRE(back.put.size() == 2);
  CHECK(back.put[0] == cicc.put[0]);
  CHECK(back.put[1] == ptxas.put[0]);
  HelperRequest without_uploads = back;
  without_uploads.put = cicc.put;
  CHECK(without_uploads == cicc);  // the rest is the requests'

  CHECK_FALSE(
    merged_put_request({to_json(cicc).dump(), to_json(request("ptxas", "grpc://other:1")).dump()}));
  HelperRequest get = cicc;
  get.verb = HelperVerb::get;
  get.get = cicc.put[0].action;
  get.put.clear();
  get.out_dir = "/j/out";
  CHECK_FALSE(merged_put_request({to_json(get).dump(), to_json(get).dump()}));
  CHECK_FALSE(merged_put_request({to_json(cicc).dump(), "not json"}));
  CHECK_FALSE(merged_put_request({}));
}

TEST_CASE("storage: upload jobs abandoned for a day are removed, newer ones kept", "[cache]")
{
  test::TempDir dir;
  const std::string jobs = dir.path("uploads");
  const std::string old_job = new_upload_job_dir(jobs, "killed-compile");
  const std::string new_job = new_upload_job_dir(jobs, "running-compile");
  write_file_atomically(jobs + "/slot-0", "");
  std::filesystem::last_write_time(old_job, std::filesystem::file_time_type::clock::now() -
                                              std::chrono::hours(25));
  std::filesystem::last_write_time(jobs + "/slot-0", std::filesystem::file_time_type::clock::now() -
                                                       std::chrono::hours(25));

  remove_abandoned_upload_jobs(jobs, k_abandoned_upload_ns);
  CHECK_FALSE(stat_file(old_job).exists);
  CHECK(stat_file(new_job).exists);
  CHECK(stat_file(jobs + "/slot-0").exists);  // a sender's slot, not a job
}

TEST_CASE("storage: a full local disk while keeping what the remote sent is not the remote's "
          "failure (issue 41)",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote;
  const std::string marker = dir.path("remote-failed");
  CacheStorage storage = storage_with(dir, "cache", remote, marker);
  const Digest key = hash_bytes("entry");
  for (int i = 0; i < 2; ++i) {  // said once per build; each a miss
    CHECK_FALSE(storage.with_remote(key, false, [&](RemoteBackend&) {
      throw FileWriteError(dir.path("cache/some/entry"), ENOSPC);
    }));
  }
  CHECK_FALSE(storage.with_remote(key, false, [&](RemoteBackend&) {
    throw std::filesystem::filesystem_error("create_directories", dir.path("cache/shard"),
                                            std::make_error_code(std::errc::no_space_on_device));
  }));
  CHECK(storage.remote_usable());
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 0);
  CHECK_FALSE(already_this_build(marker));
  CHECK(already_this_build(dir.path("remote-disk-full-warned")));
  // Another write error is the remote's call failing, as before.
  CHECK_FALSE(storage.with_remote(key, false, [&](RemoteBackend&) {
    throw FileWriteError(dir.path("cache/some/entry"), EACCES);
  }));
  CHECK_FALSE(storage.remote_usable());
}

TEST_CASE("storage: a compile over its remote budget is a miss, counted once, the remote kept",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote = over_budget_remote(10'000'000'000);
  const std::string marker = records_marker(dir);
  CacheStorage storage = storage_with(dir, "cache", remote, marker);
  const Digest key = hash_bytes("a step");

  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK_FALSE(storage.fetch_step(key, k_arguments));
  CHECK(storage.local().counters()[CacheCounter::remote_over_budget] == 1);
  CHECK(storage.local().counters()[CacheCounter::remote_errors] == 0);
  // Not a failure: the next compile asks the remote again.
  CHECK_FALSE(already_this_build(marker));
  CacheStorage next = storage_with(dir, "cache", remote, marker);
  CHECK(next.remote_usable());
}

TEST_CASE("storage: compiles over budget that lose the build's budget turn the remote off for "
          "the build",
          "[cache]")
{
  test::TempDir dir;
  test::FakeRemote::State remote = over_budget_remote(5'000'000'000);
  const std::string marker = records_marker(dir);
  const Digest key = hash_bytes("a step");
  for (int compile = 0; compile < 2; ++compile) {  // 4 s lost: under the build's 5 s
    CacheStorage storage = storage_with(dir, "cache", remote, marker);
    CHECK(storage.remote_usable());
    CHECK_FALSE(storage.fetch_step(key, k_arguments));
  }
  CHECK_FALSE(already_this_build(marker));
  CacheStorage third = storage_with(dir, "cache", remote, marker);
  CHECK_FALSE(third.fetch_step(key, k_arguments));  // 6 s: over
  CHECK(already_this_build(marker));
  CHECK_FALSE(third.remote_usable());
  const int calls = remote.calls;
  CacheStorage fourth = storage_with(dir, "cache", remote, marker);
  CHECK_FALSE(fourth.fetch_step(key, k_arguments));
  CHECK(remote.calls == calls);
  CHECK(third.local().counters()[CacheCounter::remote_over_budget] == 3);
}

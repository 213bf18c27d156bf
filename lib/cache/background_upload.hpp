// Uploads that do not hold the compile (the job; upload_job_runner.hpp sends it): once the object
// is written and nvcc's status known, a store's upload (the result and manifest Actions, or a cicc
// or ptxas step) is written as a job into the cache dir's uploads/ and sent by a detached
// `nvfresh __upload <job dir>...`: a session of its own, stdin, stdout and stderr /dev/null (make
// and ninja wait for neither its output nor its group), which runs the nvfresh-remote helper on
// each job's request. A compile with a remote batches its jobs: its steps and its store write
// their jobs under the compile's batch name and start nothing, and when the compile ends one
// process sends them all through the compile's helper co-process (cache/remote_coprocess.hpp),
// whose lifeline it inherits, so a compile's uploads cost one process and no new connection. At
// most k_upload_slots senders of a cache dir send at once (a lock file each); the others wait for
// a slot. A job counts its upload in the cache's counters; its failure goes through the storage's
// failure policy (cache_storage.hpp) for the build that started it: counted, the failure marker
// written for that build (the batch's later jobs are then not sent), and its line left for the
// build's next compile to say (the job has no terminal). Uploads still waiting when the machine
// stops, or a batch whose compile was killed before it ended, are lost: their job dirs are removed
// by a later sender once a day old.
#pragma once

#include "cache/cache_store.hpp"
#include "util/environment.hpp"
#include "util/hasher.hpp"

#include <string>
#include <vector>

namespace nvfresh {

inline constexpr const char* k_upload_subcommand = "__upload";
inline constexpr int k_upload_slots = 4;
inline constexpr const char* k_upload_job_file = "job.json";  // in the job dir, beside the request

// What a job names beside its request: the entry it uploads (counted under `counter`,
// remote_uploads or remote_step_uploads), and the build whose failure marker it keeps.
struct UploadJob {
  Digest key;
  CacheCounter counter = CacheCounter::remote_uploads;
  std::string failure_marker;  // "" none
  std::string build_id;        // build_invocation_id() of the compile that stored it

  bool operator==(const UploadJob&) const = default;
};

std::string serialize_upload_job(const UploadJob& job);
// nullopt when the text is not a job's.
std::optional<UploadJob> parse_upload_job(const std::string& text);

// A new, empty job dir under `jobs_dir` (made when missing), of the batch `batch` ("" none).
// Throws when it cannot.
std::string new_upload_job_dir(const std::string& jobs_dir, const std::string& batch = {});

// Writes `job` into `job_dir` (whose request is written), leaving it for its batch's sender.
void write_upload_job(const std::string& job_dir, const UploadJob& job);

// Writes `job` into `job_dir` (whose request is written) and starts the detached process that
// sends it. Throws when it cannot be started (the job dir is then removed).
void start_upload_job(const std::string& job_dir, const UploadJob& job);

// The written jobs of the batch `batch` under `jobs_dir`, oldest name first.
std::vector<std::string> batched_upload_jobs(const std::string& jobs_dir, const std::string& batch);

// Starts the detached process that sends `job_dirs` (written jobs) one after another with the
// environment `env`, holding `lifeline` (a descriptor, -1 none) open as its descriptor 3 until it
// ends. Throws when it cannot be started (the job dirs are then removed).
void start_upload_jobs(const std::vector<std::string>& job_dirs, const Environment& env,
                       int lifeline);

// One put request for the requests of a batch's jobs (their texts), their uploads in order, or
// nullopt when they differ in anything but their uploads (another remote, other credentials) or
// one is no put request: then each is sent on its own.
std::optional<std::string> merged_put_request(const std::vector<std::string>& requests);

// Removes job dirs under `jobs_dir` untouched for `age_ns`: a batch whose compile was killed, a
// sender stopped with the machine.
void remove_abandoned_upload_jobs(const std::string& jobs_dir, std::int64_t age_ns);
inline constexpr std::int64_t k_abandoned_upload_ns = 24LL * 3600 * 1'000'000'000;

// One of the k_upload_slots lock files of a jobs dir, held while it lives: the first free one, or
// else the one this process's pid picks, waited for. One that cannot be opened is not held (the
// upload is sent all the same: the bound is lost, not the upload).
class UploadSlot {
public:
  explicit UploadSlot(const std::string& jobs_dir);
  ~UploadSlot();
  UploadSlot(const UploadSlot&) = delete;
  UploadSlot& operator=(const UploadSlot&) = delete;

private:
  void take(const std::string& jobs_dir, int slot, int how);

  int m_fd = -1;
};

// The jobs under `jobs_dir` not yet finished.
int pending_upload_jobs(const std::string& jobs_dir);

}  // namespace nvfresh

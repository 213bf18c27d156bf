#include "cache/upload_job_runner.hpp"

#include "cache/cache_storage.hpp"
#include "config/config.hpp"
#include "protocol/helper_socket.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <filesystem>

#include <fcntl.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

void remove_job(const std::string& job_dir)
{
  std::error_code ignored;
  fs::remove_all(job_dir, ignored);
}

struct ReadJob {
  std::string dir;
  UploadJob job;
};

// Sends the prepared request in `dir` for `jobs` through `storage` (whose remote it uses unless it
// failed in the jobs' build); counts each job once it is sent.
bool send_jobs(CacheStorage& storage, const std::string& dir, const std::vector<ReadJob>& jobs)
{
  const UploadJob& first = jobs.front().job;
  storage.set_failure_marker(first.failure_marker);
  storage.keep_failures_for(first.build_id);
  return storage.with_remote(first.key, true, [&](RemoteBackend& backend) {
    std::int64_t sent = backend.send_prepared(dir);
    for (const ReadJob& read : jobs) {
      storage.local().count(read.job.key,
                            {{read.job.counter, 1}, {CacheCounter::remote_bytes_up, sent}});
      log::info("remote: uploaded {} in the background ({} bytes sent)", read.job.key.short_hex(),
                sent);
      sent = 0;  // the bytes of one request, counted once
    }
  });
}

// The jobs' requests as one, written into the first job's dir, when they go to one remote for
// one build; else (or when it cannot be written) the first job's request is as it was.
bool merge_requests(const std::vector<ReadJob>& jobs)
{
  std::vector<std::string> requests;
  for (const ReadJob& read : jobs) {
    if (read.job.failure_marker != jobs.front().job.failure_marker ||
        read.job.build_id != jobs.front().job.build_id) {
      return false;
    }
    requests.push_back(try_read_file(read.dir + "/request.json", 1 << 24).value_or(""));
  }
  const auto merged = merged_put_request(requests);
  if (!merged) {
    return false;
  }
  try {
    write_file_atomically(jobs.front().dir + "/request.json", *merged);
    return true;
  } catch (const std::exception& error) {
    log::info("remote: the compile's uploads not merged, sent one by one: {}", error.what());
    return false;
  }
}

}  // namespace

int run_upload_job(const std::vector<std::string>& args, const Environment& env)
{
  // Descriptor 3, when there is one, is the lifeline of the compile's helper co-process: held
  // until this process ends, and not passed on to a helper this process runs itself.
  ::fcntl(3, F_SETFD, FD_CLOEXEC);
  if (args.empty()) {
    return 2;
  }
  const Config config = load_config(env);
  auto remote = remote_settings(config);
  if (!remote) {
    for (const std::string& job_dir : args) {
      remove_job(job_dir);
    }
    return 2;
  }
  remote->helper_socket = env_value(env, k_helper_socket_variable);
  CacheStorage storage(cache_settings(config, env));
  storage.use_remote(std::move(*remote), {});
  const std::string jobs_dir = fs::path(args.front()).parent_path().string();
  int status = 0;
  std::vector<ReadJob> jobs;
  for (const std::string& job_dir : args) {
    auto job =
      parse_upload_job(try_read_file(job_dir + "/" + k_upload_job_file, 1 << 16).value_or(""));
    if (job) {
      jobs.push_back({job_dir, std::move(*job)});
    } else {
      status = 2;
      remove_job(job_dir);
    }
  }
  if (!jobs.empty()) {
    const UploadSlot slot(jobs_dir);
    // A compile's uploads as one request (one call, one check of which blobs the server lacks),
    // else one after another: once one fails, the build's failure marker keeps the rest back.
    if (jobs.size() > 1 && merge_requests(jobs)) {
      if (!send_jobs(storage, jobs.front().dir, jobs)) {
        status = std::max(status, 1);
      }
    } else {
      for (const ReadJob& read : jobs) {
        if (!send_jobs(storage, read.dir, {read})) {
          status = std::max(status, 1);
        }
      }
    }
    for (const ReadJob& read : jobs) {
      remove_job(read.dir);
    }
  }
  remove_abandoned_upload_jobs(jobs_dir, k_abandoned_upload_ns);
  return status;
}

}  // namespace nvfresh

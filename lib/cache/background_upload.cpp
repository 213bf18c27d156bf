#include "cache/background_upload.hpp"

#include "protocol/remote_protocol.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_job_prefix = "job-";

// How the job dirs of `batch` start ("" none: every job's).
std::string job_prefix(const std::string& batch)
{
  return batch.empty() ? std::string(k_job_prefix) : fmt::format("{}{}-", k_job_prefix, batch);
}

// The entries of `jobs_dir` whose names start with `prefix` (none when it cannot be read).
std::vector<fs::path> job_dirs_named(const std::string& jobs_dir, std::string_view prefix)
{
  std::vector<fs::path> found;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(jobs_dir, error)) {
    if (item.path().filename().string().rfind(prefix, 0) == 0) {
      found.push_back(item.path());
    }
  }
  return found;
}

}  // namespace

std::string serialize_upload_job(const UploadJob& job)
{
  return nlohmann::json{
    {"key", job.key.to_hex()},
    {"kind", job.counter == CacheCounter::remote_step_uploads ? "step" : "entry"},
    {"failure_marker", job.failure_marker},
    {"build_id", job.build_id}}
    .dump();
}

std::optional<UploadJob> parse_upload_job(const std::string& text)
{
  try {
    const auto json = nlohmann::json::parse(text);
    UploadJob job;
    auto key = Digest::from_hex(json.at("key").get<std::string>());
    const auto kind = json.at("kind").get<std::string>();
    if (!key || (kind != "step" && kind != "entry")) {
      return std::nullopt;
    }
    job.key = *key;
    job.counter = kind == "step" ? CacheCounter::remote_step_uploads : CacheCounter::remote_uploads;
    job.failure_marker = json.at("failure_marker").get<std::string>();
    job.build_id = json.at("build_id").get<std::string>();
    return job;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

UploadSlot::UploadSlot(const std::string& jobs_dir)
{
  for (int slot = 0; slot < k_upload_slots && m_fd < 0; ++slot) {
    take(jobs_dir, slot, LOCK_EX | LOCK_NB);
  }
  if (m_fd < 0) {
    take(jobs_dir, static_cast<int>(::getpid() % k_upload_slots), LOCK_EX);
  }
}

UploadSlot::~UploadSlot()
{
  if (m_fd >= 0) {
    ::close(m_fd);  // the lock goes with it
  }
}

void UploadSlot::take(const std::string& jobs_dir, int slot, int how)
{
  const std::string file = fmt::format("{}/slot-{}", jobs_dir, slot);
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return;  // sent all the same: the bound is lost, not the upload
  }
  if (::flock(fd, how) == 0) {
    m_fd = fd;
  } else {
    ::close(fd);
  }
}

std::string new_upload_job_dir(const std::string& jobs_dir, const std::string& batch)
{
  fs::create_directories(jobs_dir);
  return make_scratch_dir(jobs_dir, job_prefix(batch));
}

void write_upload_job(const std::string& job_dir, const UploadJob& job)
{
  write_file_atomically(job_dir + "/" + k_upload_job_file, serialize_upload_job(job));
}

void start_upload_job(const std::string& job_dir, const UploadJob& job)
{
  try {
    write_upload_job(job_dir, job);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(job_dir, ignored);
    throw;
  }
  start_upload_jobs({job_dir}, current_environment(), -1);
}

std::vector<std::string> batched_upload_jobs(const std::string& jobs_dir, const std::string& batch)
{
  std::vector<std::string> jobs;
  if (batch.empty()) {
    return jobs;
  }
  for (const fs::path& job : job_dirs_named(jobs_dir, job_prefix(batch))) {
    std::error_code ignored;
    if (fs::is_regular_file(job / k_upload_job_file, ignored)) {
      jobs.push_back(job.string());
    }
  }
  std::sort(jobs.begin(), jobs.end());
  return jobs;
}

void start_upload_jobs(const std::vector<std::string>& job_dirs, const Environment& env,
                       int lifeline)
{
  try {
    const std::string self = this_executable();
    std::vector<std::string> argv{self, k_upload_subcommand};
    argv.insert(argv.end(), job_dirs.begin(), job_dirs.end());
    spawn_detached(self, argv, env, lifeline);
  } catch (...) {
    for (const std::string& job_dir : job_dirs) {
      std::error_code ignored;
      fs::remove_all(job_dir, ignored);
    }
    throw;
  }
}

std::optional<std::string> merged_put_request(const std::vector<std::string>& requests)
{
  if (requests.empty()) {
    return std::nullopt;
  }
  try {
    HelperRequest merged = parse_helper_request(requests.front());
    for (size_t i = 1; i < requests.size(); ++i) {
      HelperRequest next = parse_helper_request(requests[i]);
      std::vector<HelperUpload> uploads = std::move(next.put);
      next.put = merged.put;
      if (next != merged) {
        return std::nullopt;
      }
      merged.put.insert(merged.put.end(), std::make_move_iterator(uploads.begin()),
                        std::make_move_iterator(uploads.end()));
    }
    if (merged.verb != HelperVerb::put) {
      return std::nullopt;
    }
    return to_json(merged).dump();
  } catch (const ProtocolError&) {
    return std::nullopt;
  }
}

void remove_abandoned_upload_jobs(const std::string& jobs_dir, std::int64_t age_ns)
{
  const auto oldest = fs::file_time_type::clock::now() - std::chrono::nanoseconds(age_ns);
  for (const fs::path& job : job_dirs_named(jobs_dir, k_job_prefix)) {
    std::error_code ignored;
    if (fs::last_write_time(job, ignored) < oldest && !ignored) {
      fs::remove_all(job, ignored);
    }
  }
}

int pending_upload_jobs(const std::string& jobs_dir)
{
  return static_cast<int>(job_dirs_named(jobs_dir, k_job_prefix).size());
}

}  // namespace nvfresh

#include "cache/background_upload.hpp"

#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_job_prefix = "job-";

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

std::string new_upload_job_dir(const std::string& jobs_dir)
{
  fs::create_directories(jobs_dir);
  return make_scratch_dir(jobs_dir, k_job_prefix);
}

void start_upload_job(const std::string& job_dir, const UploadJob& job)
{
  try {
    write_file_atomically(job_dir + "/" + k_upload_job_file, serialize_upload_job(job));
    const std::string self = this_executable();
    spawn_detached(self, {self, k_upload_subcommand, job_dir}, current_environment());
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(job_dir, ignored);
    throw;
  }
}

int pending_upload_jobs(const std::string& jobs_dir)
{
  int pending = 0;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(jobs_dir, error)) {
    if (item.path().filename().string().rfind(k_job_prefix, 0) == 0) {
      ++pending;
    }
  }
  return pending;
}

}  // namespace nvfresh

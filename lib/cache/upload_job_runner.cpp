#include "cache/upload_job_runner.hpp"

#include "cache/cache_storage.hpp"
#include "config/config.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <filesystem>

namespace nvfresh {

namespace fs = std::filesystem;

int run_upload_job(const std::vector<std::string>& args, const Environment& env)
{
  if (args.size() != 1) {
    return 2;
  }
  const std::string& job_dir = args[0];
  auto job =
    parse_upload_job(try_read_file(job_dir + "/" + k_upload_job_file, 1 << 16).value_or(""));
  const Config config = load_config(env);
  auto remote = remote_settings(config);
  if (!job || !remote) {
    std::error_code ignored;
    fs::remove_all(job_dir, ignored);
    return 2;
  }
  CacheStorage storage(cache_settings(config, env));
  storage.use_remote(std::move(*remote), job->failure_marker);
  storage.keep_failures_for(job->build_id);
  int status = 1;
  {
    const UploadSlot slot(fs::path(job_dir).parent_path().string());
    storage.with_remote(job->key, true, [&](RemoteBackend& backend) {
      const std::int64_t sent = backend.send_prepared(job_dir);
      storage.local().count(job->key, {{job->counter, 1}, {CacheCounter::remote_bytes_up, sent}});
      log::info("remote: uploaded {} in the background ({} bytes sent)", job->key.short_hex(),
                sent);
      status = 0;
    });
  }
  std::error_code ignored;
  fs::remove_all(job_dir, ignored);
  return status;
}

}  // namespace nvfresh

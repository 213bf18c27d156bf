// `nvfresh __upload <job dir>...`: the detached process that sends background uploads
// (background_upload.hpp) through the cache storage (cache_storage.hpp) of its environment: a
// store's one job, or a compile's batch through that compile's helper co-process (its socket in
// NVFRESH_REMOTE_SOCKET, its lifeline held as descriptor 3).
#pragma once

#include "cache/background_upload.hpp"
#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// Waits for a slot, sends the jobs one after another (once one fails, the build's failure marker
// keeps the rest from being sent), counts each, removes their dirs, and then any job dir abandoned
// for a day. Its status: 0 all sent, 1 one not sent (the remote is off for that build, or failed),
// 2 a job that is none, or no remote set.
int run_upload_job(const std::vector<std::string>& args, const Environment& env);

}  // namespace nvfresh

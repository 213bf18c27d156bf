// `nvfresh __upload <job dir>`: the detached process that sends one background upload
// (background_upload.hpp) through the cache storage (cache_storage.hpp) of its environment.
#pragma once

#include "cache/background_upload.hpp"
#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// Waits for a slot, sends the job, counts it, removes the job dir. Its status: 0 sent, 1 not sent
// (the remote is off for that build, or failed), 2 no such job or no remote set.
int run_upload_job(const std::vector<std::string>& args, const Environment& env);

}  // namespace nvfresh

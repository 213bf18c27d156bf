// nvfresh's settings: NVFRESH_* environment variables, then an optional config file
// (NVFRESH_CONFIG, else $XDG_CONFIG_HOME/nvfresh/nvfresh.conf, else ~/.config/nvfresh/nvfresh.conf)
// with "key = value" lines and '#' comments. The environment wins. Defaults need no setting.
//
//   variable               key          meaning
//   NVFRESH_DISABLE        disable      1/true/yes: pure passthrough to the compiler
//   NVFRESH_RECORD_DIR     record_dir   where records go (default: <build tree>/.nvfresh)
//   NVFRESH_LOG_FILE       log_file     append a debug log here
//   NVFRESH_TRACE_LIB      trace_lib    the LD_PRELOAD tracer (default: found next to nvfresh)
//   NVFRESH_CACHE          cache        0/false/no/off: no object cache (default: on)
//   NVFRESH_CACHE_DIR      cache_dir    the object cache (default: $XDG_CACHE_HOME/nvfresh, else
//                                       ~/.cache/nvfresh)
//   NVFRESH_CACHE_MAX_SIZE cache_max_size  its cap, "20G", "500M", "1.5T" (default: 5% of its file
//                                       system, at most 20 GiB)
//   NVFRESH_CACHE_MIN_FREE cache_min_free  below this much free space nothing is stored (default 1G)
//   NVFRESH_CACHE_VERIFY   cache_verify the fraction of hits compiled anyway to verify them (0.01)
//   NVFRESH_CACHE_ACROSS_CHECKOUTS cache_across_checkouts  1/true/yes: serve an object that names
//                                       another checkout's paths (__FILE__, -lineinfo, -g), and say
//                                       so (default: compile it: it is not what this tree gives)
//   NVFRESH_CACHE_SHARED   cache_shared 1/true/yes: the cache dir is a team's (group-writable,
//                                       setgid, its members' files); else a cache dir that is not
//                                       the user's own, or that others may write, is not used
//   NVFRESH_STEP_CACHE     step_cache   0/false/no/off: no step cache (cicc and ptxas runs served
//                                       from the object cache's dir; default: on with the cache)
//   NVFRESH_REMOTE         remote       a remote cache that speaks REAPI v2: grpc://host:port, or
//                                       grpcs://host:port with TLS (default: none)
//   NVFRESH_REMOTE_INSTANCE remote_instance  its instance name (default "")
//   NVFRESH_REMOTE_READ_ONLY remote_read_only  1/true/yes: look up, never upload
//   NVFRESH_REMOTE_TOKEN_FILE remote_token_file  a file holding a bearer token, sent to the remote
//                                       as "authorization: Bearer <token>" on every call
//   NVFRESH_REMOTE_TOKEN   (none)       the token itself; environment only (the file wins)
//   NVFRESH_REMOTE_TLS_CA  remote_tls_ca  PEM roots to check a grpcs:// server with (default: the
//                                       system's)
//   NVFRESH_REMOTE_TLS_CLIENT_CERT remote_tls_client_cert  PEM client certificate (grpcs://)
//   NVFRESH_REMOTE_TLS_CLIENT_KEY  remote_tls_client_key   its PEM private key
//   NVFRESH_REMOTE_EXEC    remote_exec  a REAPI v2 Execution service (grpc:// or grpcs://) that runs
//                                       cicc and ptxas steps missed by the step cache (default:
//                                       none); the instance and credentials are the remote's above
//   NVFRESH_REMOTE_EXEC_PLATFORM remote_exec_platform  platform properties the workers must offer,
//                                       "name=value,name=value" (default: OSFamily=linux)
//   NVFRESH_REMOTE_EXEC_TIMEOUT remote_exec_timeout  seconds a step may take remotely before it
//                                       runs locally (default 300)
//   NVFRESH_REMOTE_SIGNING_KEY remote_signing_key  the writer's ed25519 private key (PEM file):
//                                       every upload is signed with it (CI's)
//   NVFRESH_REMOTE_TRUSTED_KEYS remote_trusted_keys  ed25519 public keys (PEM files, ':' between):
//                                       only results one of them signed are served (default: all)
//   NVFRESH_REMOTE_COMPILE_BUDGET remote_compile_budget  seconds one compile's remote lookups may
//                                       take in all before it goes on locally (default 10)
//   NVFRESH_REMOTE_BUILD_BUDGET remote_build_budget  seconds that compiles over their budget may
//                                       lose in one build before the remote is off for the rest of
//                                       it (default 30; cache/remote_budget.hpp)
//   NVFRESH_SPACE_FLOOR    space_floor  sync warns when the build tree's file system has less free
//                                       (default "2GiB,2%"; grammar in space/full_disk.cpp)
#pragma once

#include "util/process.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nvfresh {

struct Config {
  bool disabled = false;
  std::string record_dir;
  std::string log_file;
  std::string trace_lib;
  std::string cache;  // "" means on
  std::string cache_dir;
  std::string cache_max_size;
  std::string cache_min_free;
  std::string cache_verify;
  std::string cache_across_checkouts;
  std::string cache_shared;  // "" means not shared
  std::string step_cache;    // "" means on (when the cache is)
  std::string remote;        // "" means none
  std::string remote_instance;
  std::string remote_read_only;
  std::string remote_token_file;
  std::string remote_token;  // a secret: never printed, logged or written (cache/remote_cache.hpp)
  std::string remote_tls_ca;
  std::string remote_tls_client_cert;
  std::string remote_tls_client_key;
  std::string remote_exec;  // "" means none
  std::string remote_exec_platform;
  std::string remote_exec_timeout;
  std::string remote_signing_key;     // a file's path; the key never leaves it but for the helper
  std::string remote_trusted_keys;    // paths, ':'-separated
  std::string remote_compile_budget;  // seconds; "" means the default
  std::string remote_build_budget;    // seconds; "" means the default
  std::string space_floor;            // "" means the default
  std::string config_file;            // the file that was read, if any
};

Config load_config(const Environment& env);

bool is_true(const std::string& value);
bool is_false(const std::string& value);  // 0, false, no, off

// "20G", "500M", "64k", "1.5T", "123" (bytes); binary units; nullopt when it is none of these.
std::optional<std::uint64_t> parse_size(const std::string& text);

}  // namespace nvfresh

// The contract between the launcher and its remote cache helper (nvfresh-remote,
// launcher/nvfresh_remote.cpp), written once: both sides read and write these JSON documents only
// through this codec. It links no gRPC, so that the launcher can use it; the helper turns an
// ActionSpec into REAPI messages (reapi/action_builder.hpp).
//
//   nvfresh-remote get|put|execute <request.json>
//
//   request    := {"protocol_version": k_helper_protocol_version,
//                  "remote": "grpc://host:port" | "grpcs://host:port", "instance": name,
//                  "call_deadline_ms": n, "connect_deadline_ms": n, "digest_cache": file | "",
//                  "tls_ca": file | "", "tls_client_cert": file | "", "tls_client_key": file | "",
//                  "trusted_keys": [file ...], "budget_deadline_ns": n,
//                  ( "get": action, "out_dir": dir                                        (get)
//                  | "put": [ {"action": action, "outputs": {path: file},
//                              "stdout": file, "stderr": file} ... ]                      (put)
//                  | "execute": action, "out_dir": dir, "execute_deadline_ms": n,
//                    "toolkit": [absolute file ...], "toolkit_sums": path )}              (execute)
//   action     := {"salt": text, "arguments": [text ...], "environment": {name: value},
//                  "working_directory": path, "output_paths": [path ...],
//                  "input_files": {path: local file}, "input_blobs": {path: bytes},
//                  "platform": {name: value}, "do_not_cache": bool}   (the last two optional)
//   answer     := {"outputs": {path: file}, "stdout": file, "stderr": file, "bytes": n,
//                  "exit_code": n, "bytes_sent": n}
//                 (get: <out_dir>/result.json on a hit; put: stdout, "bytes" only; execute:
//                 <out_dir>/result.json, every member)
//
// execute: the helper adds to the input root, at "toolkit_sums", a sha256sum file of the
// "toolkit" files (their SHA-256 as this machine has them) and appends the same lines to the salt,
// uploads what the CAS lacks (the input files too) and runs the Action (Execution.Execute).
//
// The bearer token never travels in the request (a file that outlives the call): the helper gets it
// in its environment (cache/remote_credentials.hpp).
//
// The writer's signing key (reapi/result_signature.hpp) is not in the request either: the helper
// reads its file from NVFRESH_REMOTE_SIGNING_KEY in its environment. "trusted_keys" are public.
//
// "budget_deadline_ns" (get; 0 or absent: none) is the end of the compile's budget for the remote
// (cache/remote_budget.hpp), in CLOCK_MONOTONIC nanoseconds (one clock for every process of the
// machine): every call's deadline is the sooner of its own and this, and no call starts after it.
//
// Exit status: 0 a hit, uploaded or executed (whatever the action's own exit code), 1 a miss, 2 an
// error, 3 a request of another protocol version, 4 a result not signed by a trusted key (a miss
// the launcher counts and names; only with "trusted_keys"), 5 the compile's budget ran out before
// the answer (only with "budget_deadline_ns"); one line on stderr each time but for 0 and 1. The
// launcher takes 2 and 3 as a failure of the remote, never of the build; 5 as a slow remote.
//
// Version history (change the version with every change that an older peer would misread):
//   1: the first versioned request. A request without "protocol_version" is version 0 (an nvfresh
//      older than the helper) and is refused like any other version.
//   2: the execute verb, and an Action's "platform" and "do_not_cache"; "trusted_keys" and exit
//      status 4: a helper that ignored them would serve unsigned results.
//   3: "budget_deadline_ns" and exit status 5: a helper that ignored it would wait past the
//      compile's budget.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

inline constexpr int k_helper_protocol_version = 3;

// The largest output the helper fetches: more than nvfresh ever writes (the local cache keeps no
// object larger, cache/object_cache.cpp). A result naming a larger one is refused before anything
// of it is read.
inline constexpr std::int64_t k_max_output_bytes = std::int64_t{4} << 30;

inline constexpr int k_helper_hit = 0;
inline constexpr int k_helper_miss = 1;
inline constexpr int k_helper_error = 2;
inline constexpr int k_helper_wrong_version = 3;
inline constexpr int k_helper_untrusted = 4;
inline constexpr int k_helper_over_budget = 5;

// A document that breaks the contract: the message names the member ("request.put[1].stdout").
class ProtocolError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A request of another protocol version than this side's.
class ProtocolVersionError : public ProtocolError {
public:
  using ProtocolError::ProtocolError;
};

// One REAPI Action as nvfresh describes it (reapi/action_builder.hpp builds the messages).
struct ActionSpec {
  std::string salt;
  std::vector<std::string> arguments;
  std::map<std::string, std::string> environment;
  std::string working_directory;          // relative to the input root; "" for the root
  std::vector<std::string> output_paths;  // relative to the working directory
  // The input root: a relative path ("src/a.cu", "abs/usr/include/stdio.h") and the local file
  // whose content it has, or the bytes themselves.
  std::map<std::string, std::string> input_files;
  std::map<std::string, std::string> input_blobs;
  // The Platform's properties (what a worker must offer) and Action.do_not_cache; the cache's
  // Actions have neither.
  std::map<std::string, std::string> platform;
  bool do_not_cache = false;

  bool operator==(const ActionSpec&) const = default;
};

nlohmann::json to_json(const ActionSpec& spec);
// Throws ProtocolError naming the member that is missing or of the wrong type, under `where`.
ActionSpec action_spec_from_json(const nlohmann::json& json, std::string_view where = "action");

// One result to upload: the Action, its outputs (path in the Action -> local file) and console.
struct HelperUpload {
  ActionSpec action;
  std::map<std::string, std::string> outputs;
  std::string stdout_file;
  std::string stderr_file;

  bool operator==(const HelperUpload&) const = default;
};

enum class HelperVerb { get, put, execute };

std::string_view verb_name(HelperVerb verb);
// "get", "put" or "execute"; nullopt for anything else.
std::optional<HelperVerb> parse_verb(std::string_view name);

struct HelperRequest {
  int protocol_version = k_helper_protocol_version;
  std::string remote;
  std::string instance;
  int call_deadline_ms = 5000;
  int connect_deadline_ms = 1000;
  std::string digest_cache;  // the helper's SHA-256 cache of large inputs ("" none)
  // grpcs:// only: PEM files of the CA that signed the server's certificate and of this client's
  // certificate and key ("" none: the system's roots, no client certificate)
  std::string tls_ca;
  std::string tls_client_cert;
  std::string tls_client_key;
  // get: the public keys (PEM files) whose signature a result must carry; none: every result
  std::vector<std::string> trusted_keys;
  // get: when the compile's budget for the remote ends (CLOCK_MONOTONIC ns); 0: no budget
  std::int64_t budget_deadline_ns = 0;
  HelperVerb verb = HelperVerb::get;
  ActionSpec get;  // get: the Action to look up (execute: to run), and where its outputs go
  std::string out_dir;
  // execute: how long to wait for the result; the toolkit files whose SHA-256 the worker checks,
  // and where their sums file goes in the input root
  int execute_deadline_ms = 600000;
  std::vector<std::string> toolkit;
  std::string toolkit_sums;
  std::vector<HelperUpload> put;  // put: in order (a result before the manifest that names it)

  bool operator==(const HelperRequest&) const = default;
};

nlohmann::json to_json(const HelperRequest& request);
// Throws ProtocolVersionError when the request is of another version (checked first), else
// ProtocolError naming what is missing or wrong.
HelperRequest helper_request_from_json(const nlohmann::json& json);
// The same from the request file's text (a text that is no JSON is a ProtocolError).
HelperRequest parse_helper_request(std::string_view text);

// What the helper answers: get's result.json on a hit (every member), put's stdout ("bytes").
struct HelperAnswer {
  std::map<std::string, std::string> outputs;  // path in the Action -> local file
  std::string stdout_file;
  std::string stderr_file;
  std::int64_t bytes = 0;       // get, execute: fetched; put: sent
  int exit_code = 0;            // execute: the action's
  std::int64_t bytes_sent = 0;  // execute: uploaded before it ran

  bool operator==(const HelperAnswer&) const = default;
};

nlohmann::json to_json(const HelperAnswer& answer, HelperVerb verb);
// Throws ProtocolError naming what is missing or wrong.
HelperAnswer helper_answer_from_json(const nlohmann::json& json, HelperVerb verb);
HelperAnswer parse_helper_answer(std::string_view text, HelperVerb verb);

}  // namespace nvfresh

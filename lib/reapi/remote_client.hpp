// The gRPC client of one REAPI v2 server: Capabilities, ActionCache and CAS, ByteStream for blobs
// over the server's batch limit, and Execution (Execute, then WaitExecution while the operation is
// not done) for remote execution (NVFRESH_REMOTE_EXEC). Every call has a deadline, and a ByteStream
// read ends when no data came for that long, so a server that is down, slow or stalling costs at
// most that: the caller then compiles locally. A blob is never trusted for its claimed size: one
// over max_blob_bytes is refused before it is read, and a read that brings more is cut off.
#pragma once

#include "protocol/remote_protocol.hpp"
#include "reapi/blob_digest.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace grpc {
class ClientContext;
}

namespace nvfresh::reapi {

// A call that failed (not a miss): unreachable, deadline exceeded, refused, exhausted.
class RemoteError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string target;  // host:port
  bool tls = false;    // grpcs://
};

// "grpc://host:port" or "grpcs://host:port"; throws RemoteError on anything else.
Endpoint parse_endpoint(const std::string& url);

struct OutputFile {
  std::string path;
  BlobDigest digest;
};

struct ActionResultBlobs {
  int exit_code = 0;
  std::vector<OutputFile> outputs;
  BlobDigest stdout_digest;
  BlobDigest stderr_digest;
};

// What an Execute gave: the worker's result, and the blobs the server sent inline (stdout_raw,
// stderr_raw, an output file's contents) by their digest.
struct ExecutedAction {
  ActionResultBlobs result;
  std::map<BlobDigest, std::string> inline_blobs;
};

struct ClientOptions {
  std::string instance;
  // Every call's deadline; a ByteStream read instead gives up when no data came for this long
  // (its time grows with the bytes that arrive, never with the size the server claims).
  std::chrono::milliseconds call_deadline{5000};
  std::chrono::milliseconds connect_deadline{1000};
  std::string bearer_token;     // "" none; else "authorization: Bearer <token>" on every call
  std::string tls_root_certs;   // PEM (grpcs://); "" the system's roots
  std::string tls_client_cert;  // PEM (grpcs://); "" none
  std::string tls_client_key;   // PEM, the client certificate's key
  // A blob larger than this is refused before anything of it is read (k_max_output_bytes: more
  // than nvfresh ever writes).
  std::int64_t max_blob_bytes = k_max_output_bytes;
  // The end of the compile's budget for the remote (protocol/remote_protocol.hpp's
  // budget_deadline_ns): every call's deadline is the sooner of its own and this one, and a call
  // after it fails at once. The clock's epoch: no budget.
  std::chrono::steady_clock::time_point budget_end{};
};

// Whether `options` has a budget and it is spent.
bool budget_spent(const ClientOptions& options);

// Sends gRPC's own log lines (a failed TLS handshake's, over two lines) nowhere: a failure is said
// once, in nvfresh's words, with the last error gRPC logged (last_grpc_error). Call before any
// channel is made.
void quiet_grpc_log();
std::string last_grpc_error();

class RemoteClient {
public:
  RemoteClient(const Endpoint& endpoint, ClientOptions options);
  ~RemoteClient();
  RemoteClient(const RemoteClient&) = delete;
  RemoteClient& operator=(const RemoteClient&) = delete;

  // The server's batch limit (Capabilities' max_batch_total_size_bytes; 0: none said, then 4 MiB
  // less a margin is assumed, gRPC's default message size).
  std::int64_t max_batch_bytes();

  // The ActionCache's result for the action, or nullopt when it has none (NOT_FOUND).
  std::optional<ActionResultBlobs> get_action_result(const BlobDigest& action);
  void update_action_result(const BlobDigest& action, const ActionResultBlobs& result);

  // The blobs' bytes, by digest; nullopt when one of them is gone (NOT_FOUND). Throws RemoteError,
  // before reading any, when one is larger than max_blob_bytes.
  std::optional<std::map<BlobDigest, std::string>> read_blobs(
    const std::vector<BlobDigest>& digests);
  // Runs the action on the server's workers (its blobs uploaded before), never from a cache
  // (skip_cache_lookup), and waits for its operation to be done, at most `deadline`. Throws
  // RemoteError when the call fails, the deadline passes or the operation ends with an error.
  ExecutedAction execute(const BlobDigest& action, std::chrono::milliseconds deadline);
  // Uploads those the CAS does not have: small ones in batches, large ones through ByteStream.
  // Returns the bytes sent.
  std::int64_t write_blobs(const std::map<BlobDigest, std::string>& blobs);

private:
  std::optional<std::string> read_large(const BlobDigest& digest);       // ByteStream.Read
  void write_large(const BlobDigest& digest, const std::string& bytes);  // ByteStream.Write
  static void check_blobs(const std::vector<BlobDigest>& digests,
                          const std::map<BlobDigest, std::string>& blobs);
  std::vector<const std::pair<const BlobDigest, std::string>*> find_missing(
    const std::map<BlobDigest, std::string>& blobs);
  // The deadline and the credentials of one call: `deadline`, or less where the budget ends sooner.
  void prepare(grpc::ClientContext& context, std::chrono::milliseconds deadline) const;
  // `deadline`, or what is left of the budget when that is less. Throws RemoteError when none is.
  std::chrono::milliseconds within_budget(std::chrono::milliseconds deadline) const;
  // The credentials alone (the bearer token), for a call whose deadline is kept another way.
  void authorize(grpc::ClientContext& context) const;

  struct Stubs;
  std::unique_ptr<Stubs> m_stubs;
  ClientOptions m_options;
  std::int64_t m_max_batch = -1;
};

}  // namespace nvfresh::reapi

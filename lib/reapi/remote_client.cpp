#include "reapi/remote_client.hpp"

#include <build/bazel/remote/execution/v2/remote_execution.grpc.pb.h>
#include <fmt/format.h>
#include <google/bytestream/bytestream.grpc.pb.h>
#include <google/longrunning/operations.pb.h>
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

namespace nvfresh::reapi {

namespace v2 = build::bazel::remote::execution::v2;
namespace bs = google::bytestream;

namespace {

constexpr std::int64_t k_default_batch = (4 << 20) - (64 << 10);
constexpr std::int64_t k_message_overhead = 64 << 10;  // request framing next to the blobs
constexpr size_t k_chunk = 1 << 20;

v2::Digest to_proto(const BlobDigest& digest)
{
  v2::Digest out;
  out.set_hash(digest.hash);
  out.set_size_bytes(digest.size);
  return out;
}

BlobDigest from_proto(const v2::Digest& digest)
{
  return {digest.hash(), digest.size_bytes()};
}

std::string describe(const grpc::Status& status)
{
  const auto code = status.error_code();
  if (code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED) {
    return fmt::format("the server refused nvfresh's credentials: {} ({}); check "
                       "NVFRESH_REMOTE_TOKEN_FILE and NVFRESH_REMOTE_TLS_CLIENT_CERT",
                       status.error_message(),
                       code == grpc::StatusCode::UNAUTHENTICATED ? "UNAUTHENTICATED"
                                                                 : "PERMISSION_DENIED");
  }
  return fmt::format("{} ({})", status.error_message(), static_cast<int>(code));
}

// A write the server refuses (PERMISSION_DENIED, or UNIMPLEMENTED as BuildGrid's read-only action
// cache answers) is most often a reader's machine in a set-up where only CI writes.
std::string describe_write(const grpc::Status& status)
{
  const auto code = status.error_code();
  if (code != grpc::StatusCode::UNIMPLEMENTED && code != grpc::StatusCode::PERMISSION_DENIED) {
    return describe(status);
  }
  return fmt::format("the server does not let this machine write: {} ({}); on a machine that "
                     "only reads, set NVFRESH_REMOTE_READ_ONLY=1; on one that writes, check "
                     "NVFRESH_REMOTE_TOKEN_FILE and NVFRESH_REMOTE_TLS_CLIENT_CERT",
                     status.error_message(),
                     code == grpc::StatusCode::UNIMPLEMENTED ? "UNIMPLEMENTED"
                                                             : "PERMISSION_DENIED");
}

std::mutex g_log_mutex;
std::string g_last_error;

void keep_last_error(gpr_log_func_args* args)
{
  if (args->severity == GPR_LOG_SEVERITY_ERROR && args->message != nullptr) {
    const std::lock_guard<std::mutex> lock(g_log_mutex);
    g_last_error = args->message;
  }
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const Endpoint& endpoint,
                                                              const ClientOptions& options)
{
  if (!endpoint.tls) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = options.tls_root_certs;
  ssl.pem_cert_chain = options.tls_client_cert;
  ssl.pem_private_key = options.tls_client_key;
  return grpc::SslCredentials(ssl);
}

std::string connect_failure(const Endpoint& endpoint, const ClientOptions& options)
{
  const auto deadline = options.connect_deadline;
  std::string why = last_grpc_error();
  std::replace(why.begin(), why.end(), '\n', ' ');
  if (endpoint.tls && why.find("andshake") != std::string::npos) {
    return fmt::format("cannot connect to {}: the TLS handshake failed ({})", endpoint.target, why);
  }
  if (endpoint.tls && options.tls_client_cert.empty()) {  // the server closes without a word
    return fmt::format("cannot connect to {} within {} ms (over TLS: does it want a client "
                       "certificate? NVFRESH_REMOTE_TLS_CLIENT_CERT)",
                       endpoint.target, deadline.count());
  }
  return fmt::format("cannot connect to {} within {} ms", endpoint.target, deadline.count());
}

std::string uuid()
{
  std::random_device device;
  std::mt19937_64 engine{(static_cast<std::uint64_t>(device()) << 32) ^ device()};
  const std::uint64_t a = engine();
  const std::uint64_t b = engine();
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, (b >> 48) & 0xfff, b & 0xffffffffffffULL);
}

// Cancels a streaming call when no data came for `limit`: a server that stalls costs that long,
// one that sends keeps the call going, whatever size it claims.
class StallGuard {
public:
  StallGuard(grpc::ClientContext& context, std::chrono::milliseconds limit)
    : m_context(context), m_limit(limit), m_last(Clock::now()), m_thread([this] { watch(); })
  {}
  ~StallGuard()
  {
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
    }
    m_wake.notify_all();
    m_thread.join();
  }
  StallGuard(const StallGuard&) = delete;
  StallGuard& operator=(const StallGuard&) = delete;

  void progressed()
  {
    std::lock_guard lock(m_mutex);
    m_last = Clock::now();
  }
  bool stalled() const
  {
    std::lock_guard lock(m_mutex);
    return m_stalled;
  }

private:
  using Clock = std::chrono::steady_clock;

  void watch()
  {
    std::unique_lock lock(m_mutex);
    while (!m_done) {
      if (Clock::now() >= m_last + m_limit) {
        m_stalled = true;
        m_context.TryCancel();
        return;
      }
      m_wake.wait_until(lock, m_last + m_limit);
    }
  }

  grpc::ClientContext& m_context;
  const std::chrono::milliseconds m_limit;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  Clock::time_point m_last;
  bool m_done = false;
  bool m_stalled = false;
  std::thread m_thread;  // last: it starts once the rest is set
};

}  // namespace

struct RemoteClient::Stubs {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v2::Capabilities::Stub> capabilities;
  std::unique_ptr<v2::ActionCache::Stub> action_cache;
  std::unique_ptr<v2::ContentAddressableStorage::Stub> cas;
  std::unique_ptr<bs::ByteStream::Stub> bytestream;
  std::unique_ptr<v2::Execution::Stub> execution;
};

Endpoint parse_endpoint(const std::string& url)
{
  if (url.find('@') != std::string::npos) {  // not echoed: it may hold a password
    throw RemoteError("the remote's URL names a user or password, which nvfresh never sends");
  }
  for (const auto& [scheme, tls] : {std::pair{"grpc://", false}, std::pair{"grpcs://", true}}) {
    const std::string prefix = scheme;
    if (url.rfind(prefix, 0) == 0 && url.size() > prefix.size()) {
      std::string target = url.substr(prefix.size());
      while (!target.empty() && target.back() == '/') {
        target.pop_back();
      }
      if (target.find('/') == std::string::npos && !target.empty()) {
        return {target, tls};
      }
    }
  }
  throw RemoteError(
    fmt::format("NVFRESH_REMOTE='{}' is not grpc://host:port or grpcs://host:port", url));
}

RemoteClient::RemoteClient(const Endpoint& endpoint, ClientOptions options)
  : m_stubs(std::make_unique<Stubs>()), m_options(std::move(options))
{
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  m_stubs->channel =
    grpc::CreateCustomChannel(endpoint.target, channel_credentials(endpoint, m_options), arguments);
  if (!m_stubs->channel->WaitForConnected(std::chrono::system_clock::now() +
                                          within_budget(m_options.connect_deadline))) {
    throw RemoteError(connect_failure(endpoint, m_options));
  }
  m_stubs->capabilities = v2::Capabilities::NewStub(m_stubs->channel);
  m_stubs->action_cache = v2::ActionCache::NewStub(m_stubs->channel);
  m_stubs->cas = v2::ContentAddressableStorage::NewStub(m_stubs->channel);
  m_stubs->bytestream = bs::ByteStream::NewStub(m_stubs->channel);
  m_stubs->execution = v2::Execution::NewStub(m_stubs->channel);
}

RemoteClient::~RemoteClient() = default;

void quiet_grpc_log()
{
  gpr_set_log_function(keep_last_error);
}

std::string last_grpc_error()
{
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_last_error;
}

void RemoteClient::authorize(grpc::ClientContext& context) const
{
  if (!m_options.bearer_token.empty()) {
    context.AddMetadata("authorization", "Bearer " + m_options.bearer_token);
  }
}

bool budget_spent(const ClientOptions& options)
{
  return options.budget_end != std::chrono::steady_clock::time_point{} &&
         std::chrono::steady_clock::now() >= options.budget_end;
}

std::chrono::milliseconds RemoteClient::within_budget(std::chrono::milliseconds deadline) const
{
  if (m_options.budget_end == std::chrono::steady_clock::time_point{}) {
    return deadline;
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(m_options.budget_end -
                                                                 std::chrono::steady_clock::now());
  if (left.count() <= 0) {
    throw RemoteError("the compile's budget for the remote is spent");
  }
  return std::min(deadline, left);
}

void RemoteClient::prepare(grpc::ClientContext& context, std::chrono::milliseconds deadline) const
{
  context.set_deadline(std::chrono::system_clock::now() + within_budget(deadline));
  authorize(context);
}

std::int64_t RemoteClient::max_batch_bytes()
{
  if (m_max_batch >= 0) {
    return m_max_batch;
  }
  grpc::ClientContext context;
  prepare(context, m_options.call_deadline);
  v2::GetCapabilitiesRequest request;
  request.set_instance_name(m_options.instance);
  v2::ServerCapabilities capabilities;
  const grpc::Status status =
    m_stubs->capabilities->GetCapabilities(&context, request, &capabilities);
  if (!status.ok()) {
    throw RemoteError("GetCapabilities: " + describe(status));
  }
  const std::int64_t limit = capabilities.cache_capabilities().max_batch_total_size_bytes();
  m_max_batch = limit > 0 ? limit : k_default_batch;
  return m_max_batch;
}

std::optional<ActionResultBlobs> RemoteClient::get_action_result(const BlobDigest& action)
{
  grpc::ClientContext context;
  prepare(context, m_options.call_deadline);
  v2::GetActionResultRequest request;
  request.set_instance_name(m_options.instance);
  *request.mutable_action_digest() = to_proto(action);
  v2::ActionResult result;
  const grpc::Status status = m_stubs->action_cache->GetActionResult(&context, request, &result);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return std::nullopt;
  }
  if (!status.ok()) {
    throw RemoteError("GetActionResult: " + describe(status));
  }
  ActionResultBlobs blobs;
  blobs.exit_code = result.exit_code();
  for (const auto& file : result.output_files()) {
    blobs.outputs.push_back({file.path(), from_proto(file.digest())});
  }
  blobs.stdout_digest = from_proto(result.stdout_digest());
  blobs.stderr_digest = from_proto(result.stderr_digest());
  return blobs;
}

namespace {

// The worker's result in a done operation; throws RemoteError when it ended with an error.
ExecutedAction executed_result(const google::longrunning::Operation& operation)
{
  if (operation.has_error() && operation.error().code() != grpc::StatusCode::OK) {
    throw RemoteError(fmt::format("Execute: the operation failed: {} ({})",
                                  operation.error().message(), operation.error().code()));
  }
  v2::ExecuteResponse response;
  if (!operation.response().UnpackTo(&response)) {
    throw RemoteError("Execute: the done operation holds no ExecuteResponse");
  }
  if (response.status().code() != grpc::StatusCode::OK) {
    throw RemoteError(fmt::format("Execute: the server could not run the action: {} ({})",
                                  response.status().message(), response.status().code()));
  }
  if (!response.has_result()) {
    throw RemoteError("Execute: the response holds no result");
  }
  const v2::ActionResult& result = response.result();
  ExecutedAction executed;
  executed.result.exit_code = result.exit_code();
  auto inline_or = [&](const std::string& raw, const v2::Digest& digest) {
    if (digest.hash().empty() || (!raw.empty() && digest.size_bytes() == 0)) {
      BlobDigest own = digest_of(raw);
      executed.inline_blobs.emplace(own, raw);
      return own;
    }
    if (!raw.empty()) {
      executed.inline_blobs.emplace(from_proto(digest), raw);
    }
    return from_proto(digest);
  };
  for (const auto& file : result.output_files()) {
    executed.result.outputs.push_back({file.path(), inline_or(file.contents(), file.digest())});
  }
  executed.result.stdout_digest = inline_or(result.stdout_raw(), result.stdout_digest());
  executed.result.stderr_digest = inline_or(result.stderr_raw(), result.stderr_digest());
  return executed;
}

}  // namespace

ExecutedAction RemoteClient::execute(const BlobDigest& action, std::chrono::milliseconds deadline)
{
  const auto until = std::chrono::system_clock::now() + deadline;
  google::longrunning::Operation last;
  auto follow = [&](auto&& open) {
    grpc::ClientContext context;
    context.set_deadline(until);
    authorize(context);
    auto reader = open(context);
    google::longrunning::Operation operation;
    while (reader->Read(&operation)) {
      last = operation;
      if (operation.done()) {
        context.TryCancel();  // nothing more is wanted of this stream
        break;
      }
    }
    const grpc::Status status = reader->Finish();
    if (!last.done() && !status.ok()) {
      throw RemoteError(status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                          ? fmt::format("Execute: no result within {} ms", deadline.count())
                          : "Execute: " + describe(status));
    }
  };
  follow([&](grpc::ClientContext& context) {
    v2::ExecuteRequest request;
    request.set_instance_name(m_options.instance);
    request.set_skip_cache_lookup(true);
    *request.mutable_action_digest() = to_proto(action);
    return m_stubs->execution->Execute(&context, request);
  });
  // A stream may end before the operation is done (a server's own limit): wait on its name.
  for (int waits = 0; !last.done() && !last.name().empty() && waits < 100; ++waits) {
    // A copy, not a reference: follow() overwrites `last` while the request still names it.
    const std::string name = last.name();  // NOLINT(performance-unnecessary-copy-initialization)
    follow([&](grpc::ClientContext& context) {
      v2::WaitExecutionRequest request;
      request.set_name(name);
      return m_stubs->execution->WaitExecution(&context, request);
    });
  }
  if (!last.done()) {
    throw RemoteError("Execute: the stream ended before the operation was done");
  }
  return executed_result(last);
}

void RemoteClient::update_action_result(const BlobDigest& action, const ActionResultBlobs& blobs)
{
  grpc::ClientContext context;
  prepare(context, m_options.call_deadline);
  v2::UpdateActionResultRequest request;
  request.set_instance_name(m_options.instance);
  *request.mutable_action_digest() = to_proto(action);
  v2::ActionResult* result = request.mutable_action_result();
  result->set_exit_code(blobs.exit_code);
  for (const auto& output : blobs.outputs) {
    auto* file = result->add_output_files();
    file->set_path(output.path);
    *file->mutable_digest() = to_proto(output.digest);
  }
  *result->mutable_stdout_digest() = to_proto(blobs.stdout_digest);
  *result->mutable_stderr_digest() = to_proto(blobs.stderr_digest);
  result->mutable_execution_metadata()->set_worker("nvfresh (a local compile)");
  v2::ActionResult stored;
  const grpc::Status status = m_stubs->action_cache->UpdateActionResult(&context, request, &stored);
  if (!status.ok()) {
    throw RemoteError("UpdateActionResult: " + describe_write(status));
  }
}

std::optional<std::map<BlobDigest, std::string>> RemoteClient::read_blobs(
  const std::vector<BlobDigest>& digests)
{
  for (const auto& digest : digests) {  // before anything is read
    if (digest.size < 0 || digest.size > m_options.max_blob_bytes) {
      throw RemoteError(fmt::format(
        "the server names a blob of {} bytes, more than nvfresh ever writes ({} bytes): not read",
        digest.size, m_options.max_blob_bytes));
    }
  }
  std::map<BlobDigest, std::string> blobs;
  const std::int64_t limit = max_batch_bytes() - k_message_overhead;
  v2::BatchReadBlobsRequest batch;
  batch.set_instance_name(m_options.instance);
  std::int64_t batch_bytes = 0;
  auto flush = [&]() -> bool {
    if (batch.digests_size() == 0) {
      return true;
    }
    grpc::ClientContext context;
    prepare(context, m_options.call_deadline);
    v2::BatchReadBlobsResponse response;
    const grpc::Status status = m_stubs->cas->BatchReadBlobs(&context, batch, &response);
    if (!status.ok()) {
      throw RemoteError("BatchReadBlobs: " + describe(status));
    }
    for (const auto& read : response.responses()) {
      if (read.status().code() == grpc::StatusCode::NOT_FOUND) {
        return false;
      }
      if (read.status().code() != grpc::StatusCode::OK) {
        throw RemoteError(
          fmt::format("BatchReadBlobs: {} ({})", read.status().message(), read.status().code()));
      }
      blobs[from_proto(read.digest())] = read.data();
    }
    batch.clear_digests();
    batch_bytes = 0;
    return true;
  };
  for (const auto& digest : digests) {
    if (digest.size == 0 || blobs.count(digest) != 0) {
      blobs[digest];  // the empty blob always exists
      continue;
    }
    if (digest.size > limit) {
      auto data = read_large(digest);
      if (!data) {
        return std::nullopt;
      }
      blobs[digest] = std::move(*data);
      continue;
    }
    if (batch_bytes + digest.size > limit && !flush()) {
      return std::nullopt;
    }
    *batch.add_digests() = to_proto(digest);
    batch_bytes += digest.size;
  }
  if (!flush()) {
    return std::nullopt;
  }
  check_blobs(digests, blobs);
  return blobs;
}

std::int64_t RemoteClient::write_blobs(const std::map<BlobDigest, std::string>& blobs)
{
  const auto missing = find_missing(blobs);
  const std::int64_t limit = max_batch_bytes() - k_message_overhead;
  std::int64_t sent = 0;
  v2::BatchUpdateBlobsRequest batch;
  batch.set_instance_name(m_options.instance);
  std::int64_t batch_bytes = 0;
  auto flush = [&] {
    if (batch.requests_size() == 0) {
      return;
    }
    grpc::ClientContext context;
    prepare(context, m_options.call_deadline);
    v2::BatchUpdateBlobsResponse response;
    const grpc::Status status = m_stubs->cas->BatchUpdateBlobs(&context, batch, &response);
    if (!status.ok()) {
      throw RemoteError("BatchUpdateBlobs: " + describe_write(status));
    }
    for (const auto& written : response.responses()) {
      if (written.status().code() != grpc::StatusCode::OK) {
        throw RemoteError(fmt::format("BatchUpdateBlobs: {} ({})", written.status().message(),
                                      written.status().code()));
      }
    }
    batch.clear_requests();
    batch_bytes = 0;
  };
  for (const auto* blob : missing) {
    const auto& [digest, bytes] = *blob;
    sent += digest.size;
    if (digest.size > limit) {
      write_large(digest, bytes);
      continue;
    }
    if (batch_bytes + digest.size > limit) {
      flush();
    }
    auto* request = batch.add_requests();
    *request->mutable_digest() = to_proto(digest);
    request->set_data(bytes);
    batch_bytes += digest.size;
  }
  flush();
  return sent;
}

std::optional<std::string> RemoteClient::read_large(const BlobDigest& digest)
{
  grpc::ClientContext context;  // no deadline of its own: the guard's, per chunk, and the budget's
  authorize(context);
  if (m_options.budget_end != std::chrono::steady_clock::time_point{}) {
    context.set_deadline(std::chrono::system_clock::now() + within_budget(std::chrono::hours(24)));
  }
  bs::ReadRequest request;
  const std::string prefix = m_options.instance.empty() ? "" : m_options.instance + "/";
  request.set_resource_name(fmt::format("{}blobs/{}/{}", prefix, digest.hash, digest.size));
  std::string data;
  bool too_long = false;
  StallGuard guard(context, m_options.call_deadline);
  auto reader = m_stubs->bytestream->Read(&context, request);
  bs::ReadResponse chunk;
  while (!too_long && reader->Read(&chunk)) {
    guard.progressed();
    data += chunk.data();
    too_long = static_cast<std::int64_t>(data.size()) > digest.size;
  }
  if (too_long) {
    context.TryCancel();
  }
  const grpc::Status status = reader->Finish();
  if (too_long) {
    throw RemoteError(
      fmt::format("ByteStream.Read: the server sent more than the {} bytes of blob {}", digest.size,
                  digest.hash));
  }
  if (guard.stalled()) {
    throw RemoteError(
      fmt::format("ByteStream.Read: no data for {} ms", m_options.call_deadline.count()));
  }
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return std::nullopt;
  }
  if (!status.ok()) {
    throw RemoteError("ByteStream.Read: " + describe(status));
  }
  return data;
}

void RemoteClient::check_blobs(const std::vector<BlobDigest>& digests,
                               const std::map<BlobDigest, std::string>& blobs)
{
  for (const auto& digest : digests) {
    auto found = blobs.find(digest);
    if (found == blobs.end() || static_cast<std::int64_t>(found->second.size()) != digest.size ||
        digest_of(found->second) != digest) {
      throw RemoteError(fmt::format("the server sent other bytes for blob {}", digest.hash));
    }
  }
}

std::vector<const std::pair<const BlobDigest, std::string>*> RemoteClient::find_missing(
  const std::map<BlobDigest, std::string>& blobs)
{
  grpc::ClientContext context;
  prepare(context, m_options.call_deadline);
  v2::FindMissingBlobsRequest request;
  request.set_instance_name(m_options.instance);
  for (const auto& [digest, bytes] : blobs) {
    if (digest.size > 0) {
      *request.add_blob_digests() = to_proto(digest);
    }
  }
  v2::FindMissingBlobsResponse response;
  const grpc::Status status = m_stubs->cas->FindMissingBlobs(&context, request, &response);
  if (!status.ok()) {
    throw RemoteError("FindMissingBlobs: " + describe(status));
  }
  std::vector<const std::pair<const BlobDigest, std::string>*> missing;
  for (const auto& digest : response.missing_blob_digests()) {
    auto found = blobs.find(from_proto(digest));
    if (found != blobs.end()) {
      missing.push_back(&*found);
    }
  }
  return missing;
}

void RemoteClient::write_large(const BlobDigest& digest, const std::string& bytes)
{
  grpc::ClientContext context;
  prepare(context, m_options.call_deadline * (1 + digest.size / (8 << 20)));
  bs::WriteResponse response;
  auto writer = m_stubs->bytestream->Write(&context, &response);
  const std::string prefix = m_options.instance.empty() ? "" : m_options.instance + "/";
  const std::string resource =
    fmt::format("{}uploads/{}/blobs/{}/{}", prefix, uuid(), digest.hash, digest.size);
  size_t offset = 0;
  bool open = true;
  while (open && offset < bytes.size()) {
    bs::WriteRequest request;
    if (offset == 0) {
      request.set_resource_name(resource);
    }
    const size_t length = std::min(k_chunk, bytes.size() - offset);
    request.set_write_offset(static_cast<std::int64_t>(offset));
    request.set_data(bytes.substr(offset, length));
    offset += length;
    request.set_finish_write(offset == bytes.size());
    open = writer->Write(request);
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) {
    throw RemoteError("ByteStream.Write: " + describe_write(status));
  }
  if (response.committed_size() != digest.size) {
    throw RemoteError(fmt::format("ByteStream.Write: {} of {} bytes committed",
                                  response.committed_size(), digest.size));
  }
}

}  // namespace nvfresh::reapi

// RemoteClient's CAS traffic against a fake CAS served by gRPC inside the test process: which blobs
// it asks about, how it batches them under the server's limit, which it streams through
// ByteStream, and what it does with a server that has lost a blob or sends other bytes.
#include "reapi/remote_client.hpp"

#include <build/bazel/remote/execution/v2/remote_execution.grpc.pb.h>
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <google/bytestream/bytestream.grpc.pb.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace nvfresh::reapi;
namespace v2 = build::bazel::remote::execution::v2;
namespace bs = google::bytestream;

namespace {

constexpr std::int64_t k_server_batch = 256 << 10;                    // what Capabilities says
constexpr std::int64_t k_client_limit = k_server_batch - (64 << 10);  // less the client's margin

BlobDigest key(const v2::Digest& digest)
{
  return {digest.hash(), digest.size_bytes()};
}

// "blobs/<hash>/<size>" at the end of a ByteStream resource name.
BlobDigest blob_of_resource(const std::string& resource)
{
  const size_t blobs = resource.rfind("blobs/");
  const std::string tail = resource.substr(blobs + 6);
  const size_t slash = tail.find('/');
  return {tail.substr(0, slash), std::stoll(tail.substr(slash + 1))};
}

// What the fake saw, and what it holds. Guarded by `mutex`: gRPC serves calls on its own threads.
struct CasState {
  std::mutex mutex;
  std::map<BlobDigest, std::string> stored;
  std::vector<std::vector<BlobDigest>> find_missing_calls;
  std::vector<std::vector<BlobDigest>> update_batches;
  std::vector<std::int64_t> update_batch_bytes;
  std::vector<std::vector<BlobDigest>> read_batches;
  std::vector<std::string> stream_writes;  // resource names
  std::vector<std::string> stream_reads;   // resource names
  std::vector<std::int64_t> write_chunk_sizes;
  std::vector<std::string> instances;      // of every request that names one
  std::map<BlobDigest, std::string> lies;  // what BatchReadBlobs sends instead of the real bytes
};

class FakeCapabilities final : public v2::Capabilities::Service {
public:
  grpc::Status GetCapabilities(grpc::ServerContext*, const v2::GetCapabilitiesRequest*,
                               v2::ServerCapabilities* response) override
  {
    response->mutable_cache_capabilities()->set_max_batch_total_size_bytes(k_server_batch);
    return grpc::Status::OK;
  }
};

class FakeCas final : public v2::ContentAddressableStorage::Service {
public:
  explicit FakeCas(CasState& state) : m_state(state) {}

  grpc::Status FindMissingBlobs(grpc::ServerContext*, const v2::FindMissingBlobsRequest* request,
                                v2::FindMissingBlobsResponse* response) override
  {
    std::lock_guard lock(m_state.mutex);
    m_state.instances.push_back(request->instance_name());
    auto& asked = m_state.find_missing_calls.emplace_back();
    for (const auto& digest : request->blob_digests()) {
      asked.push_back(key(digest));
      if (m_state.stored.count(key(digest)) == 0) {
        *response->add_missing_blob_digests() = digest;
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status BatchUpdateBlobs(grpc::ServerContext*, const v2::BatchUpdateBlobsRequest* request,
                                v2::BatchUpdateBlobsResponse* response) override
  {
    std::lock_guard lock(m_state.mutex);
    m_state.instances.push_back(request->instance_name());
    auto& batch = m_state.update_batches.emplace_back();
    std::int64_t bytes = 0;
    for (const auto& blob : request->requests()) {
      batch.push_back(key(blob.digest()));
      bytes += static_cast<std::int64_t>(blob.data().size());
      auto* answer = response->add_responses();
      *answer->mutable_digest() = blob.digest();
      if (digest_of(blob.data()) != key(blob.digest())) {
        answer->mutable_status()->set_code(grpc::StatusCode::INVALID_ARGUMENT);
        answer->mutable_status()->set_message("digest does not match the data");
        continue;
      }
      m_state.stored[key(blob.digest())] = blob.data();
    }
    m_state.update_batch_bytes.push_back(bytes);
    return grpc::Status::OK;
  }

  grpc::Status BatchReadBlobs(grpc::ServerContext*, const v2::BatchReadBlobsRequest* request,
                              v2::BatchReadBlobsResponse* response) override
  {
    std::lock_guard lock(m_state.mutex);
    m_state.instances.push_back(request->instance_name());
    auto& batch = m_state.read_batches.emplace_back();
    for (const auto& digest : request->digests()) {
      batch.push_back(key(digest));
      auto* answer = response->add_responses();
      *answer->mutable_digest() = digest;
      auto found = m_state.stored.find(key(digest));
      if (found == m_state.stored.end()) {
        answer->mutable_status()->set_code(grpc::StatusCode::NOT_FOUND);
        continue;
      }
      auto lie = m_state.lies.find(key(digest));
      answer->set_data(lie != m_state.lies.end() ? lie->second : found->second);
    }
    return grpc::Status::OK;
  }

private:
  CasState& m_state;
};

class FakeByteStream final : public bs::ByteStream::Service {
public:
  explicit FakeByteStream(CasState& state) : m_state(state) {}

  grpc::Status Read(grpc::ServerContext*, const bs::ReadRequest* request,
                    grpc::ServerWriter<bs::ReadResponse>* writer) override
  {
    std::string data;
    {
      std::lock_guard lock(m_state.mutex);
      m_state.stream_reads.push_back(request->resource_name());
      auto found = m_state.stored.find(blob_of_resource(request->resource_name()));
      if (found == m_state.stored.end()) {
        return {grpc::StatusCode::NOT_FOUND, "no such blob"};
      }
      data = found->second;
    }
    for (size_t offset = 0; offset < data.size(); offset += 1 << 20) {
      bs::ReadResponse chunk;
      chunk.set_data(data.substr(offset, 1 << 20));
      writer->Write(chunk);
    }
    return grpc::Status::OK;
  }

  grpc::Status Write(grpc::ServerContext*, grpc::ServerReader<bs::WriteRequest>* reader,
                     bs::WriteResponse* response) override
  {
    std::string resource;
    std::string data;
    bool finished = false;
    std::vector<std::int64_t> chunks;
    bs::WriteRequest request;
    while (reader->Read(&request)) {
      if (resource.empty()) {
        resource = request.resource_name();
      }
      if (request.write_offset() != static_cast<std::int64_t>(data.size())) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "write_offset is not where the data ends"};
      }
      data += request.data();
      chunks.push_back(static_cast<std::int64_t>(request.data().size()));
      finished = request.finish_write();
    }
    std::lock_guard lock(m_state.mutex);
    m_state.stream_writes.push_back(resource);
    m_state.write_chunk_sizes.insert(m_state.write_chunk_sizes.end(), chunks.begin(), chunks.end());
    const BlobDigest digest = blob_of_resource(resource);
    if (!finished || digest_of(data) != digest) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "unfinished, or not the named blob"};
    }
    m_state.stored[digest] = data;
    response->set_committed_size(static_cast<std::int64_t>(data.size()));
    return grpc::Status::OK;
  }

private:
  CasState& m_state;
};

// The three services on a free port of 127.0.0.1, for one test.
class FakeCasServer {
public:
  FakeCasServer() : m_cas(state), m_bytestream(state)
  {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &m_port);
    builder.RegisterService(&m_capabilities);
    builder.RegisterService(&m_cas);
    builder.RegisterService(&m_bytestream);
    m_server = builder.BuildAndStart();
    REQUIRE(m_server != nullptr);
    REQUIRE(m_port > 0);
  }
  ~FakeCasServer() { m_server->Shutdown(); }

  std::unique_ptr<RemoteClient> client(const std::string& instance = "")
  {
    ClientOptions options;
    options.instance = instance;
    return std::make_unique<RemoteClient>(Endpoint{"127.0.0.1:" + std::to_string(m_port), false},
                                          options);
  }

  CasState state;

private:
  FakeCapabilities m_capabilities;
  FakeCas m_cas;
  FakeByteStream m_bytestream;
  int m_port = 0;
  std::unique_ptr<grpc::Server> m_server;
};

std::pair<const BlobDigest, std::string> blob(size_t size, char fill)
{
  std::string bytes(size, fill);
  return {digest_of(bytes), bytes};
}

std::int64_t total_size(const std::vector<BlobDigest>& digests)
{
  std::int64_t total = 0;
  for (const auto& digest : digests) {
    total += digest.size;
  }
  return total;
}

}  // namespace

TEST_CASE("write_blobs: only what the CAS lacks, in batches under its limit, large ones streamed",
          "[remote_client]")
{
  FakeCasServer server;
  const auto held = blob(1000, 'h');
  server.state.stored.insert(held);
  std::map<BlobDigest, std::string> blobs{held, blob(0, ' ')};
  for (char fill : {'a', 'b', 'c', 'd', 'e'}) {
    blobs.insert(blob(70 << 10, fill));  // five of 70 KiB: two fit a 192 KiB batch, not three
  }
  const auto large = blob((3 << 20) + 5, 'L');  // over the limit: ByteStream, in 1 MiB chunks
  blobs.insert(large);

  const std::int64_t sent = server.client()->write_blobs(blobs);

  CHECK(sent == 5 * (70 << 10) + large.first.size);
  // One question, about every blob but the empty one (which every CAS has).
  REQUIRE(server.state.find_missing_calls.size() == 1);
  CHECK(server.state.find_missing_calls[0].size() == blobs.size() - 1);
  // The held blob is never sent; each batch stays under the limit.
  CHECK(server.state.update_batches.size() == 3);
  for (size_t i = 0; i < server.state.update_batches.size(); ++i) {
    INFO("batch " << i);
    CHECK(server.state.update_batch_bytes[i] <= k_client_limit);
    CHECK(std::count(server.state.update_batches[i].begin(), server.state.update_batches[i].end(),
                     held.first) == 0);
    CHECK(std::count(server.state.update_batches[i].begin(), server.state.update_batches[i].end(),
                     large.first) == 0);
  }
  REQUIRE(server.state.stream_writes.size() == 1);
  CHECK_THAT(server.state.stream_writes[0],
             Catch::StartsWith("uploads/") &&
               Catch::EndsWith(fmt::format("/blobs/{}/{}", large.first.hash, large.first.size)));
  CHECK(server.state.write_chunk_sizes == std::vector<std::int64_t>{1 << 20, 1 << 20, 1 << 20, 5});
  for (const auto& [digest, bytes] : blobs) {
    if (digest.size > 0) {
      CHECK(server.state.stored.at(digest) == bytes);
    }
  }

  // Everything is there now: a second write asks once and sends nothing.
  CHECK(server.client()->write_blobs(blobs) == 0);
  CHECK(server.state.update_batches.size() == 3);
  CHECK(server.state.stream_writes.size() == 1);
}

TEST_CASE("read_blobs: small blobs batched under the limit, large ones streamed", "[remote_client]")
{
  FakeCasServer server;
  std::vector<BlobDigest> wanted;
  for (char fill : {'a', 'b', 'c', 'd', 'e'}) {
    wanted.push_back(server.state.stored.insert(blob(70 << 10, fill)).first->first);
  }
  const auto large = blob((2 << 20) + 1, 'L');
  server.state.stored.insert(large);
  wanted.push_back(large.first);
  wanted.push_back(digest_of(""));

  const auto read = server.client()->read_blobs(wanted);

  REQUIRE(read.has_value());
  CHECK(read->size() == wanted.size());
  for (const auto& digest : wanted) {
    CHECK(digest_of(read->at(digest)) == digest);
  }
  CHECK(server.state.read_batches.size() == 3);
  std::vector<BlobDigest> batched;
  for (const auto& batch : server.state.read_batches) {
    CHECK(total_size(batch) <= k_client_limit);
    batched.insert(batched.end(), batch.begin(), batch.end());
  }
  CHECK(batched == std::vector<BlobDigest>(wanted.begin(), wanted.begin() + 5));
  CHECK(server.state.stream_reads ==
        std::vector<std::string>{fmt::format("blobs/{}/{}", large.first.hash, large.first.size)});
}

TEST_CASE("read_blobs: a blob the CAS lost is a miss, other bytes are an error", "[remote_client]")
{
  FakeCasServer server;
  const auto kept = blob(100, 'k');
  server.state.stored.insert(kept);
  const BlobDigest lost = blob(100, 'x').first;
  const BlobDigest lost_large = blob(1 << 20, 'y').first;
  auto client = server.client();
  CHECK_FALSE(client->read_blobs({kept.first, lost}).has_value());
  CHECK_FALSE(client->read_blobs({lost_large}).has_value());

  server.state.lies[kept.first] = std::string(100, 'K');
  CHECK_THROWS_AS(client->read_blobs({kept.first}), RemoteError);
  CHECK_THROWS_WITH(client->read_blobs({kept.first}), Catch::Contains("other bytes"));
}

TEST_CASE("the instance name goes into every request and resource name", "[remote_client]")
{
  FakeCasServer server;
  const auto large = blob(1 << 20, 'L');
  const auto small = blob(10, 's');
  auto client = server.client("main/ci");
  client->write_blobs({large, small});
  CHECK(client->read_blobs({large.first, small.first}).has_value());
  CHECK(server.state.instances == std::vector<std::string>(3, "main/ci"));
  REQUIRE(server.state.stream_writes.size() == 1);
  CHECK_THAT(server.state.stream_writes[0], Catch::StartsWith("main/ci/uploads/"));
  CHECK(server.state.stream_reads == std::vector<std::string>{fmt::format(
                                       "main/ci/blobs/{}/{}", large.first.hash, large.first.size)});
}

TEST_CASE("a server that is not there costs the connect deadline, then an error", "[remote_client]")
{
  ClientOptions options;
  options.connect_deadline = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(RemoteClient(Endpoint{"127.0.0.1:1", false}, options),
                    Catch::Contains("cannot connect to 127.0.0.1:1 within 200 ms"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

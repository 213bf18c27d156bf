// nvfresh-remote: the remote cache's REAPI client, a helper the launcher runs only when a remote is
// set (NVFRESH_REMOTE), so that the launcher links no gRPC (ARCHITECTURE.md, "Remote cache").
//
//   nvfresh-remote get <request.json>   looks one Action up; on a hit, fetches its outputs
//   nvfresh-remote put <request.json>   uploads Actions with their results
//   nvfresh-remote execute <request.json>  runs one Action on the remote's workers
//                                          (NVFRESH_REMOTE_EXEC): uploads its inputs and the
//                                          toolkit's sums, waits for the result, fetches it
//   nvfresh-remote serve                   the same calls for one compile, over the socket the
//                                          launcher listens on (protocol/helper_socket.hpp)
//
// The request, the answer and the exit statuses are protocol/remote_protocol.hpp's (one codec for
// both sides): a request of another protocol version is refused with one line and status 3. Any
// error is said in one line on stderr (gRPC's own log is kept quiet). The bearer token, a secret,
// is never in the request (a file): it comes in the environment, as NVFRESH_REMOTE_TOKEN
// (cache/remote_credentials.hpp), and is sent on every call.
//
// Signatures (reapi/result_signature.hpp): with NVFRESH_REMOTE_SIGNING_KEY (a private key's PEM file,
// in the environment like the token) every uploaded result carries nvfresh.signature; with the
// request's "trusted_keys" a result that no trusted key signed is refused with status 4 and one
// line saying why. A key file that cannot be used is an error (status 2) that says what to do.
#include "protocol/helper_socket.hpp"
#include "protocol/remote_protocol.hpp"
#include "reapi/action_builder.hpp"
#include "reapi/remote_client.hpp"
#include "reapi/result_signature.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using namespace nvfresh::reapi;
using nvfresh::HelperAnswer;
using nvfresh::HelperRequest;
using nvfresh::HelperVerb;
using nvfresh::k_helper_error;
using nvfresh::k_helper_hit;
using nvfresh::k_helper_miss;
using nvfresh::k_helper_untrusted;
using nvfresh::k_helper_wrong_version;

std::string read_whole(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(fmt::format("cannot read {}", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_whole(const std::string& path, const std::string& bytes)
{
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) {
    throw std::runtime_error(fmt::format("cannot write {}", path));
  }
}

// The bytes of the PEM file `file`, "" when the request names none.
std::string pem_file(const std::string& file)
{
  return file.empty() ? std::string() : read_whole(file);
}

// The compile's budget end the request names, as the client keeps it (none: the epoch, no budget).
std::chrono::steady_clock::time_point budget_end(const HelperRequest& request)
{
  return request.budget_deadline_ns > 0 ? std::chrono::steady_clock::time_point(
                                            std::chrono::nanoseconds(request.budget_deadline_ns))
                                        : std::chrono::steady_clock::time_point{};
}

RemoteClient connect(const HelperRequest& request)
{
  ClientOptions options;
  options.instance = request.instance;
  options.call_deadline = std::chrono::milliseconds(request.call_deadline_ms);
  options.connect_deadline = std::chrono::milliseconds(request.connect_deadline_ms);
  options.budget_end = budget_end(request);
  const char* token = std::getenv("NVFRESH_REMOTE_TOKEN");
  options.bearer_token = token == nullptr ? "" : token;
  options.tls_root_certs = pem_file(request.tls_ca);
  options.tls_client_cert = pem_file(request.tls_client_cert);
  options.tls_client_key = pem_file(request.tls_client_key);
  return RemoteClient(parse_endpoint(request.remote), options);
}

std::optional<DigestCache> digest_cache(const HelperRequest& request)
{
  return request.digest_cache.empty()
           ? std::nullopt
           : std::optional<DigestCache>(std::in_place, request.digest_cache);
}

// The writer's signing key, when NVFRESH_REMOTE_SIGNING_KEY names one.
std::optional<Ed25519Key> signing_key()
{
  const char* file = std::getenv("NVFRESH_REMOTE_SIGNING_KEY");
  return file == nullptr || *file == '\0' ? std::nullopt
                                          : std::optional(Ed25519Key::private_from_file(file));
}

// Why `result` of `action` is not served to a reader trusting `trusted` ("" when it is); `blobs`
// holds the signature's bytes.
std::string untrusted_because(const BlobDigest& action, const ActionResultBlobs& result,
                              const std::map<BlobDigest, std::string>& blobs,
                              const std::vector<Ed25519Key>& trusted)
{
  for (const auto& output : result.outputs) {
    if (output.path == k_signature_output) {
      return signature_problem(blobs.at(output.digest), signed_message(action, result), trusted);
    }
  }
  return "not signed";
}

int get(const HelperRequest& request, std::ostream& err)
{
  const std::vector<Ed25519Key> trusted = trusted_keys_from_files(request.trusted_keys);
  auto digests = digest_cache(request);
  const BuiltAction action = build_action(request.get, digests ? &*digests : nullptr);
  if (digests) {
    digests->save();
  }
  const std::string& out_dir = request.out_dir;
  RemoteClient client = connect(request);
  auto result = client.get_action_result(action.action_digest);
  if (!result) {
    return k_helper_miss;
  }
  if (result->exit_code != 0) {
    return k_helper_miss;  // nvfresh never stores a failed compile; another client's is not served
  }
  std::vector<BlobDigest> wanted{result->stdout_digest, result->stderr_digest};
  for (const auto& output : result->outputs) {
    wanted.push_back(output.digest);
  }
  auto blobs = client.read_blobs(wanted);
  if (!blobs) {
    return k_helper_miss;
  }
  if (!trusted.empty()) {
    if (std::string why = untrusted_because(action.action_digest, *result, *blobs, trusted);
        !why.empty()) {
      err << "nvfresh-remote: " << why << '\n';
      return k_helper_untrusted;
    }
  }
  HelperAnswer answer;
  auto place = [&](const BlobDigest& digest, const std::string& name) {
    std::string file = out_dir + "/" + name;
    write_whole(file, blobs->at(digest));
    answer.bytes += digest.size;
    return file;
  };
  answer.stdout_file = place(result->stdout_digest, "stdout");
  answer.stderr_file = place(result->stderr_digest, "stderr");
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    answer.outputs[result->outputs[i].path] =
      place(result->outputs[i].digest, fmt::format("output-{}", i));
  }
  write_whole(out_dir + "/result.json", to_json(answer, HelperVerb::get).dump());
  return k_helper_hit;
}

int put(const HelperRequest& request, std::ostream& out)
{
  struct Upload {
    BuiltAction action;
    ActionResultBlobs result;
  };
  const std::optional<Ed25519Key> signer = signing_key();
  std::vector<Upload> uploads;
  std::map<BlobDigest, std::string> blobs;
  auto digests = digest_cache(request);
  for (const auto& item : request.put) {
    Upload upload{build_action(item.action, digests ? &*digests : nullptr), {}};
    blobs.insert(upload.action.blobs.begin(), upload.action.blobs.end());
    auto add_file = [&](const std::string& file) {
      std::string bytes = read_whole(file);
      BlobDigest digest = digest_of(bytes);
      blobs.emplace(digest, std::move(bytes));
      return digest;
    };
    for (const auto& [path, file] : item.outputs) {
      upload.result.outputs.push_back({path, add_file(file)});
    }
    upload.result.stdout_digest = add_file(item.stdout_file);
    upload.result.stderr_digest = add_file(item.stderr_file);
    if (signer) {
      std::string signature =
        signature_file(*signer, signed_message(upload.action.action_digest, upload.result));
      const BlobDigest digest = digest_of(signature);
      blobs.emplace(digest, std::move(signature));
      upload.result.outputs.push_back({std::string(k_signature_output), digest});
    }
    uploads.push_back(std::move(upload));
  }
  if (digests) {
    digests->save();
  }
  RemoteClient client = connect(request);
  const std::int64_t sent = client.write_blobs(blobs);
  for (const auto& upload : uploads) {  // in order: a result before the manifest that names it
    client.update_action_result(upload.action.action_digest, upload.result);
  }
  HelperAnswer answer;
  answer.bytes = sent;
  out << to_json(answer, HelperVerb::put).dump() << '\n';
  return k_helper_hit;
}

// The sha256sum lines of the toolkit files as this machine has them: what the worker checks its
// own against before it runs the tool.
std::string toolkit_sums(const std::vector<std::string>& files, DigestCache* digests)
{
  std::string sums;
  for (const auto& file : files) {
    const BlobDigest digest =
      digests != nullptr ? digests->digest_of_file(file) : digest_of_file(file);
    sums += fmt::format("{}  {}\n", digest.hash, file);
  }
  return sums;
}

int execute(const HelperRequest& request)
{
  auto digests = digest_cache(request);
  nvfresh::ActionSpec spec = request.get;
  const std::string sums = toolkit_sums(request.toolkit, digests ? &*digests : nullptr);
  spec.input_blobs[request.toolkit_sums] = sums;
  spec.salt += "\n" + sums;
  const BuiltAction action = build_action(spec, digests ? &*digests : nullptr);
  if (digests) {
    digests->save();
  }
  std::map<BlobDigest, std::string> blobs = action.blobs;
  for (const auto& [digest, file] : action.input_files) {
    blobs.emplace(digest, read_whole(file));
  }
  RemoteClient client = connect(request);
  HelperAnswer answer;
  answer.bytes_sent = client.write_blobs(blobs);
  const ExecutedAction executed =
    client.execute(action.action_digest, std::chrono::milliseconds(request.execute_deadline_ms));
  const ActionResultBlobs& result = executed.result;
  answer.exit_code = result.exit_code;
  std::vector<BlobDigest> wanted;
  auto want = [&](const BlobDigest& digest) {
    if (digest.size > 0 && !executed.inline_blobs.contains(digest)) {
      wanted.push_back(digest);
    }
  };
  want(result.stdout_digest);
  want(result.stderr_digest);
  for (const auto& output : result.outputs) {
    want(output.digest);
  }
  auto fetched = client.read_blobs(wanted);
  if (!fetched) {
    throw std::runtime_error("the executed action's outputs are gone from the server's CAS");
  }
  fetched->insert(executed.inline_blobs.begin(), executed.inline_blobs.end());
  auto place = [&](const BlobDigest& digest, const std::string& name) {
    std::string file = request.out_dir + "/" + name;
    auto found = fetched->find(digest);
    write_whole(file, found == fetched->end() ? std::string() : found->second);
    answer.bytes += digest.size;
    return file;
  };
  answer.stdout_file = place(result.stdout_digest, "stdout");
  answer.stderr_file = place(result.stderr_digest, "stderr");
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    answer.outputs[result.outputs[i].path] =
      place(result.outputs[i].digest, fmt::format("output-{}", i));
  }
  write_whole(request.out_dir + "/result.json", to_json(answer, HelperVerb::execute).dump());
  return k_helper_hit;
}

// The request of `verb_name`'s verb; throws ProtocolError (ProtocolVersionError first).
HelperRequest read_request(HelperVerb verb, const std::string& file)
{
  HelperRequest request = nvfresh::parse_helper_request(read_whole(file));
  if (request.verb != verb) {
    throw nvfresh::ProtocolError(fmt::format(
      "the request is for {}, not {}", nvfresh::verb_name(request.verb), nvfresh::verb_name(verb)));
  }
  return request;
}

// get, with the compile's budget: a call that failed once the budget was spent (its deadline cut
// short by it, or not started) is status 5, not an error of the remote.
int get_within_budget(const HelperRequest& request, std::ostream& err)
{
  if (request.budget_deadline_ns <= 0) {
    return get(request, err);
  }
  ClientOptions budget;
  budget.budget_end = budget_end(request);
  try {
    if (budget_spent(budget)) {
      throw RemoteError("the compile's budget for the remote is spent");
    }
    return get(request, err);
  } catch (const RemoteError& error) {
    // A call cut short by the budget may end a moment before it by this clock (gRPC's deadline is
    // on the system clock).
    budget.budget_end -= std::chrono::milliseconds(100);
    if (!budget_spent(budget)) {
      throw;
    }
    err << "nvfresh-remote: the compile's budget for the remote ran out: " << error.what() << '\n';
    return nvfresh::k_helper_over_budget;
  }
}

// One call: its exit status; its answer and its one line of error to `out` and `err`.
int run_call(HelperVerb verb, const std::string& request_file, std::ostream& out, std::ostream& err)
{
  try {
    const HelperRequest request = read_request(verb, request_file);
    switch (verb) {
    case HelperVerb::get:
      // A writer's unreadable signing key is said at the compile's first lookup, where its line
      // reaches the build's output; its uploads, sent after the compile, have no terminal.
      signing_key();
      return get_within_budget(request, err);
    case HelperVerb::put: return put(request, out);
    case HelperVerb::execute: return execute(request);
    }
    return k_helper_error;
  } catch (const nvfresh::ProtocolVersionError& error) {
    err << "nvfresh-remote: " << error.what() << '\n';
    return k_helper_wrong_version;
  } catch (const std::exception& error) {
    err << "nvfresh-remote: " << error.what() << '\n';
    return k_helper_error;
  }
}

// One connection of `serve`: a call from this user, run, its status answered.
void answer_call(int fd)
{
  if (nvfresh::peer_is_this_user(fd)) {
    if (auto line = nvfresh::read_socket_line(fd, 1 << 16, -1)) {
      int status = k_helper_error;
      try {
        const nvfresh::HelperCall call = nvfresh::parse_helper_call_line(*line);
        std::ofstream out(call.stdout_file, std::ios::binary | std::ios::trunc);
        std::ofstream err(call.stderr_file, std::ios::binary | std::ios::trunc);
        status = run_call(call.verb, call.request_file, out, err);
      } catch (const std::exception&) {  // a call that breaks the contract: status 2
      }
      nvfresh::write_socket(fd, fmt::format("{}\n", status));
    }
  }
  ::close(fd);
}

// `nvfresh-remote serve`: answers calls on descriptor 3 until stdin ends (each on a thread of its
// own: a compile's steps may ask at once); status 2 when descriptor 3 is no listening socket.
int serve()
{
  pollfd watched[2] = {{nvfresh::k_serve_listen_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
  for (;;) {
    if (::poll(watched, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return k_helper_error;
    }
    if (watched[1].revents != 0) {
      std::_Exit(0);  // the compile ended; a call still running was given up by its client
    }
    if ((watched[0].revents & (POLLNVAL | POLLERR)) != 0) {
      std::cerr << "nvfresh-remote: serve: descriptor 3 is not the launcher's listening socket\n";
      return k_helper_error;
    }
    if ((watched[0].revents & POLLIN) != 0) {
      const int fd = ::accept4(nvfresh::k_serve_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        std::thread(answer_call, fd).detach();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc == 2 && std::string_view(argv[1]) == "serve") {
    quiet_grpc_log();
    return serve();
  }
  const auto verb = argc == 3 ? nvfresh::parse_verb(argv[1]) : std::nullopt;
  if (!verb) {
    std::cerr << "usage: nvfresh-remote get|put|execute <request.json>, or nvfresh-remote serve "
                 "(run by nvfresh when NVFRESH_REMOTE or NVFRESH_REMOTE_EXEC is set)\n";
    return k_helper_error;
  }
  quiet_grpc_log();
  return run_call(*verb, argv[2], std::cout, std::cerr);
}

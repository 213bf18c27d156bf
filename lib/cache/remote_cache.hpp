// The object cache shared through a remote cache that speaks REAPI v2 (BuildGrid, Buildbarn,
// bazel-remote's gRPC port, ...), cache-only. The remote holds the local cache's two steps as two
// REAPI Actions, so that another machine takes the same steps and judges them by the same rules:
//   - the manifest Action: {Command: the compiler and the command signature's arguments (paths of
//     the trees as tree_roots.hpp's placeholders), its environment (PATH left out, as locally) and the
//     local manifest key, NVFRESH_MANIFEST_KEY; input root: the source; output "nvfresh.manifest";
//     salt "<key version>/manifest"}. Its result holds the manifest (cache/manifest.hpp): the input
//     sets seen before, from every machine that uploaded one;
//   - the result Action: {the same Command with NVFRESH_RESULT_KEY, the local result key (every
//     input's XXH3-128, the probes, the PATH lookups, the roots the object binds); input root:
//     every input, at src/…, build/… or abs/<absolute path>, by SHA-256; outputs: the object and
//     "nvfresh.entry" (the cache entry without the object and the console); stdout and stderr as
//     blobs; salt "<key version>/result"}.
// The input root and the Command are a real Action's: remote execution can reuse them.
//
// A lookup goes local first. On a local miss the remote manifest is fetched and merged into the
// local one; an input set of it that the disk matches (the same input_check as a skip) has its
// entry fetched and stored locally, and then served under every rule of a local entry (bound roots,
// NVFRESH_CACHE_ACROSS_CHECKOUTS, verify-on-hit). A store uploads the result Action and the
// manifest, unless read-only. The REAPI client is the nvfresh-remote helper beside the launcher
// (launcher/nvfresh_remote.cpp): the launcher links no gRPC. A failure (server down, slow,
// refusing) is an error counted, one log line per compile, one `nvfresh:` line per build, and the
// remote is not asked again in that build; never a failed build. With trusted keys
// (NVFRESH_REMOTE_TRUSTED_KEYS) a result that none of them signed (reapi/result_signature.hpp) is a
// miss, counted (remote_untrusted) and named once per build.
#pragma once

#include "cache/cache_entry.hpp"
#include "cache/compile_identity.hpp"
#include "cache/manifest.hpp"
#include "cache/remote_budget.hpp"
#include "cache/remote_credentials.hpp"
#include "cache/tree_roots.hpp"
#include "config/config.hpp"
#include "protocol/remote_protocol.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct RemoteSettings {
  std::string url;  // grpc://host:port, grpcs://host:port; never with a user or password
  std::string instance;
  bool read_only = false;
  std::string helper;        // nvfresh-remote
  std::string digest_cache;  // the helper's SHA-256 cache of large inputs ("" none)
  int call_deadline_ms = 5000;
  int connect_deadline_ms = 1000;
  RemoteCredentials credentials;  // cache/remote_credentials.hpp
  // Only results signed by one of these public keys (PEM files) are served; none: every result.
  std::vector<std::string> trusted_keys;
  // Why the remote must not be used (remote_credentials): its first call fails with it, said once
  // per build like any failure. "" when it may.
  std::string refusal;
  // Remote execution only (NVFRESH_REMOTE_EXEC): the platform properties the workers must offer
  // and how long an executed step may take.
  std::map<std::string, std::string> platform;
  int execute_deadline_ms = 300000;
  // The budgets for lookups (cache/remote_budget.hpp), and the compile's ledger ("" none: each
  // call has its own deadline only).
  std::int64_t compile_budget_ns = k_default_compile_budget_ns;
  std::int64_t build_budget_ns = k_default_build_budget_ns;
  std::string budget_ledger;
  // The compile's helper co-process (cache/remote_coprocess.hpp), its socket's name; "" or one that
  // does not answer: one helper process per call.
  std::string helper_socket;
};

// The remote of a configuration, or nullopt when none is set (NVFRESH_REMOTE).
std::optional<RemoteSettings> remote_settings(const Config& config);
// The remote executor of a configuration (NVFRESH_REMOTE_EXEC, with the remote's instance and
// credentials, NVFRESH_REMOTE_EXEC_PLATFORM and _TIMEOUT), or nullopt when none is set. A platform
// or timeout that does not parse is a refusal.
std::optional<RemoteSettings> remote_exec_settings(const Config& config);
// "name=value,name=value" as platform properties (OSFamily=linux when it names no OSFamily);
// nullopt when an item has no '=' or an empty name.
std::optional<std::map<std::string, std::string>> parse_platform(const std::string& text);

// The name an input has in a remote Action's input root, from its key path (tree_roots.hpp): under
// the source root "src/a/b.h", under the build root "build/gen.h", else "abs/usr/include/stdio.h"
// (normalized: no "." or ".." parts).
std::string input_root_name(const std::string& key_path);

// The Actions of the two steps (protocol/remote_protocol.hpp's ActionSpec, which the helper turns
// into REAPI messages: reapi/action_builder.hpp).
ActionSpec manifest_action(const Digest& manifest_key, const CompileIdentity& identity,
                           const PathMap& map, std::string_view key_version);
ActionSpec result_action(const Digest& manifest_key, const ManifestEntry& entry,
                         const CompileIdentity& identity, const std::string& object,
                         const PathMap& map, std::string_view key_version);

// The Action of one cicc or ptxas step (compile/step_run.hpp): {Command: the tool and its
// arguments, nvcc's temporary names normalized (step_key.hpp), and the local step key,
// NVFRESH_STEP_KEY (the tool's identity, its normalized arguments and input, every file it read);
// no input root (the key names the inputs; cache-only); output "nvfresh.step" (the step entry:
// its outputs, what it printed, the files it read); salt "<key version>/step"}.
ActionSpec step_action(const Digest& step_key, const std::vector<std::string>& arguments,
                       std::string_view key_version);

// What a fetched result has, before it is a local entry.
struct RemoteFetch {
  std::optional<std::string> bytes;  // nullopt: a miss
  std::int64_t bytes_down = 0;
};

// A remote call that failed (not a miss).
class RemoteFailure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A result that no trusted key signed (RemoteSettings::trusted_keys): a miss, counted and named;
// the message says why ("not signed", "signed by key 1a2b..., which is not trusted").
class RemoteUntrusted : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A lookup not made or cut short because the compile's budget for the remote is spent
// (cache/remote_budget.hpp): a miss; the compile goes on locally.
class RemoteOverBudget : public std::runtime_error {
public:
  RemoteOverBudget(const std::string& what, bool newly_over, std::int64_t spent_ns)
    : std::runtime_error(what), m_newly_over(newly_over), m_spent_ns(spent_ns)
  {}
  // Whether this lookup turned the compile over its budget (said and counted once per compile).
  bool newly_over() const { return m_newly_over; }
  // The compile's remote time so far.
  std::int64_t spent_ns() const { return m_spent_ns; }

private:
  bool m_newly_over;
  std::int64_t m_spent_ns;
};

// What the cache storage (cache/cache_storage.hpp) asks of a remote: the calls of the two object
// steps and of a cicc or ptxas step, each on the Action a builder above spells. RemoteCache (the
// nvfresh-remote helper) is the one a build uses; a unit test's fake stands in for it. A call that
// fails (not a miss) throws; the storage's failure policy takes it from there.
class RemoteBackend {
public:
  virtual ~RemoteBackend() = default;

  virtual const RemoteSettings& settings() const = 0;
  // Lookups from now on share the compile's ledger `file` (cache/remote_budget.hpp).
  virtual void set_budget_ledger(std::string file) = 0;
  // Calls from now on go to the compile's helper co-process on the socket `name` ("" none).
  virtual void set_helper_socket(std::string name) = 0;

  // The remote manifest, or nullopt (a miss, or a manifest that does not parse).
  virtual std::optional<Manifest> fetch_manifest(const ActionSpec& action,
                                                 std::int64_t& bytes_down) = 0;
  // The entry of a result Action, object and console filled in, or nullopt (a miss).
  virtual std::optional<CacheEntry> fetch_entry(const ActionSpec& action,
                                                const std::string& object_output,
                                                std::int64_t& bytes_down) = 0;
  // The step entry's text of a step Action, or nullopt (a miss).
  virtual std::optional<std::string> fetch_step(const ActionSpec& action,
                                                std::int64_t& bytes_down) = 0;
  // Uploads a step Action with its entry's text. Returns the bytes sent. With a `job_dir`, only
  // writes the upload there (returns 0): send_prepared sends it later, from another process
  // (cache/background_upload.hpp).
  virtual std::int64_t publish_step(const ActionSpec& action, const std::string& entry_text,
                                    const std::string& job_dir = {}) = 0;
  // Uploads the result Action with the entry, then the manifest Action with the manifest. Returns
  // the bytes sent. `job_dir`: as for publish_step.
  virtual std::int64_t publish(const ActionSpec& result, const std::string& object_output,
                               const CacheEntry& entry, const ActionSpec& manifest_action,
                               const Manifest& manifest, const std::string& job_dir = {}) = 0;
  // Sends the upload a publish wrote into `job_dir`. Returns the bytes sent.
  virtual std::int64_t send_prepared(const std::string& job_dir) = 0;
};

// The remote through the nvfresh-remote helper: the compile's co-process when it has one and it
// answers, else one process per call. Each call throws RemoteFailure when it fails.
class RemoteCache : public RemoteBackend {
public:
  explicit RemoteCache(RemoteSettings settings);

  const RemoteSettings& settings() const override { return m_settings; }
  void set_budget_ledger(std::string file) override { m_settings.budget_ledger = std::move(file); }
  void set_helper_socket(std::string name) override { m_settings.helper_socket = std::move(name); }

  std::optional<Manifest> fetch_manifest(const ActionSpec& action,
                                         std::int64_t& bytes_down) override;
  std::optional<CacheEntry> fetch_entry(const ActionSpec& action, const std::string& object_output,
                                        std::int64_t& bytes_down) override;
  std::optional<std::string> fetch_step(const ActionSpec& action,
                                        std::int64_t& bytes_down) override;
  std::int64_t publish_step(const ActionSpec& action, const std::string& entry_text,
                            const std::string& job_dir = {}) override;
  std::int64_t publish(const ActionSpec& result, const std::string& object_output,
                       const CacheEntry& entry, const ActionSpec& manifest_action,
                       const Manifest& manifest, const std::string& job_dir = {}) override;
  std::int64_t send_prepared(const std::string& job_dir) override;

  // Runs `action` on the executor's workers (settings' platform and deadline), with the sums of
  // the `toolkit` files at `toolkit_sums` in its input root; the answer's files are under `dir`.
  // Throws RemoteFailure when the helper or the call fails (not when the action exits non-zero).
  HelperAnswer execute(ActionSpec action, const std::vector<std::string>& toolkit,
                       const std::string& toolkit_sums, const std::string& dir);

private:
  // Runs the helper on `request` (written to `dir`); its exit status (k_helper_hit or
  // k_helper_miss), throws RemoteUntrusted on a result no trusted key signed, RemoteFailure on an
  // error, another protocol version or no answer. `limit_seconds` 0: the helper's usual limit.
  int run_helper(const HelperRequest& request, const std::string& dir, std::string* out,
                 double limit_seconds = 0);
  // run_helper on a get `request`, within what is left of the compile's budget (its ledger, when
  // the settings name one): throws RemoteOverBudget when none is left or the helper ran out of it.
  int run_within_budget(HelperRequest& request, const std::string& dir);
  // Throws RemoteFailure when the helper is missing or the remote refused (credentials).
  void check_helper() const;
  // The same on the request already written in `dir` (request.json).
  int run_prepared(HelperVerb verb, const std::string& dir, std::string* out,
                   double limit_seconds = 0);
  // A request of `verb` to this remote, its Actions still to be filled in.
  HelperRequest request_base(HelperVerb verb) const;
  // The helper's "put" of `uploads` (files under `dir`): the bytes it sent (0 when it did not
  // say). With `prepare_only`, the request is written into `dir` and not sent (returns 0).
  std::int64_t put(std::vector<HelperUpload> uploads, const std::string& dir, bool prepare_only);
  // The helper's "get" of `action` into `dir`: its answer (the outputs' files, the bytes fetched,
  // added to bytes_down), or nullopt when the remote has no such result.
  std::optional<HelperAnswer> get_result(const ActionSpec& action, const std::string& dir,
                                         std::int64_t& bytes_down);

  RemoteSettings m_settings;
};

// The entry as uploaded: without what only its writer uses, `nvfresh cache verify`'s way to compile
// it again (the writer's build tree, working dir, object path, command line and environment: HOME,
// PATH, TMPDIR, LANG). A reader checks an entry by its keys and verifies it with its own compile
// (NVFRESH_CACHE_VERIFY), never by running a command a writer chose; the keys, the depfile, the
// console, the digests and the roots the object names (`bound`) stay.
CacheEntry entry_for_readers(CacheEntry entry);

// The object's output path in the result Action: relative to the working directory.
std::string object_output_path(const CompileIdentity& identity, const std::string& object,
                               const PathMap& map);

}  // namespace nvfresh

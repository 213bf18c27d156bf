// A REAPI Action built from nvfresh's description of a compile (ActionSpec): the Command
// (arguments, environment sorted by name, output paths sorted, working directory), the input root
// as a Merkle tree of Directory messages in canonical form (entries sorted by name, each name
// once), and the Action that names both with the salt (nvfresh's key schema version), the platform
// properties (sorted by name, in the Command and the Action) and do_not_cache. The Action's
// digest is the key an ActionCache stores the result under; the same Action can go to
// Execution.Execute once a worker has the inputs (ARCHITECTURE.md, "Remote cache").
#pragma once

#include "protocol/remote_protocol.hpp"
#include "reapi/blob_digest.hpp"

#include <map>
#include <string>
#include <vector>

namespace nvfresh::reapi {

// The Action as the launcher describes it, read through the one codec both sides use
// (protocol/remote_protocol.hpp: action_spec_from_json, to_json).
using nvfresh::ActionSpec;

struct BuiltAction {
  BlobDigest action_digest;
  BlobDigest command_digest;
  BlobDigest input_root_digest;
  // Every blob of the Action the client uploads before it publishes a result: the Action, the
  // Command, the Directory messages and the input blobs (input files stay local: cache-only).
  std::map<BlobDigest, std::string> blobs;
  // The input files by digest (the local file), for an Action that is executed: its worker needs
  // them in the CAS too.
  std::map<BlobDigest, std::string> input_files;
};

// Throws std::runtime_error on a path that is absolute, empty, has "." or ".." components, or is
// both a file and a directory, and when an input file cannot be read.
// `digests`: where the input files' SHA-256 may come from (nullptr: each file is read).
BuiltAction build_action(const ActionSpec& spec, DigestCache* digests = nullptr);

}  // namespace nvfresh::reapi

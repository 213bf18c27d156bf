// A REAPI Action built from nvfresh's description of a compile (ActionSpec): the Command
// (arguments, environment sorted by name, output paths sorted, working directory), the input root
// as a Merkle tree of Directory messages in canonical form (entries sorted by name, each name
// once), and the Action that names both with the salt (nvfresh's key schema version). The Action's
// digest is the key an ActionCache stores the result under; the same Action can go to
// Execution.Execute once a worker has the inputs (ARCHITECTURE.md, "Remote cache").
#pragma once

#include "reapi/blob_digest.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace nvfresh::reapi {

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
};

// From the JSON the launcher writes (the member names above). Throws std::runtime_error naming
// what is wrong.
ActionSpec parse_action_spec(const nlohmann::json& json);
nlohmann::json action_spec_json(const ActionSpec& spec);

struct BuiltAction {
  BlobDigest action_digest;
  BlobDigest command_digest;
  BlobDigest input_root_digest;
  // Every blob of the Action the client uploads before it publishes a result: the Action, the
  // Command, the Directory messages and the input blobs (input files stay local: cache-only).
  std::map<BlobDigest, std::string> blobs;
};

// Throws std::runtime_error on a path that is absolute, empty, has "." or ".." components, or is
// both a file and a directory, and when an input file cannot be read.
// `digests`: where the input files' SHA-256 may come from (nullptr: each file is read).
BuiltAction build_action(const ActionSpec& spec, DigestCache* digests = nullptr);

}  // namespace nvfresh::reapi

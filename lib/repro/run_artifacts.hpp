// What one run of `nvfresh repro --artifact GLOB... -- <command>` produced, found and digested.
//
//   patterns  relative to the run's working directory. '*' and '?' match within one path segment,
//             [...] is a class (fnmatch), and a segment that is just '**' matches any number of
//             directories, none included. A leading '.' must be matched by a '.' of the pattern.
//             Absolute patterns and '..' are refused: they would reach outside the run, to files
//             every run shares.
//   samples   a run that leaves directories nvfresh-sample-<n>/ (n decimal) in its working directory
//             made several samples (the in-process helper, python/nvfresh/repro.py, writes them).
//             Each sample directory is then matched on its own, the patterns taken relative to it,
//             and each is one observation; files outside them are not looked at.
//   digests   a CUDA artifact (object, fatbin, cubin, PTX) by its normalized per-component digests,
//             anything else by its bytes. The run's own directory names (run-00003,
//             nvfresh-sample-00017), which a tool may write into what it produces, are rewritten to a
//             same-length placeholder first.
#pragma once

#include "digest/object_digest.hpp"
#include "repro/repro.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvfresh {

inline constexpr std::string_view k_sample_directory_prefix = "nvfresh-sample-";

// "" when `pattern` can be used, else why not.
std::string check_artifact_pattern(std::string_view pattern);

// Whether relative `path` ("out/k.ptx") matches `pattern` ("out/*.ptx", "**/*.cubin").
bool glob_match(std::string_view pattern, std::string_view path);

struct FoundArtifacts {
  std::vector<std::string> files;      // relative to the root, sorted, each once
  std::vector<std::string> unmatched;  // the patterns that matched no file
};

// The regular files under `root` (symbolic links to directories are not followed) that a pattern matches.
FoundArtifacts find_artifacts(const std::string& root, const std::vector<std::string>& patterns);

struct SampleDirectory {
  std::size_t index = 0;
  std::string path;
};

// The nvfresh-sample-<n> directories directly under `root`, by index.
std::vector<SampleDirectory> sample_directories(const std::string& root);

// "nvfresh-sample-00017": the name the helper gives sample 17.
std::string sample_directory_name(std::size_t index);

// Same-length rewrites applied to an artifact's bytes before digesting: (from, to).
using Rewrites = std::vector<std::pair<std::string, std::string>>;

struct ArtifactDigest {
  std::string path;                      // relative to the run's (or sample's) directory
  std::string source;                    // the file
  std::optional<ObjectDigests> digests;  // a CUDA artifact
  Digest content;                        // anything else: its bytes
};

// The largest artifact a run may make: it is read whole (a few hundred MiB is a real case, an ONNX
// Runtime CUDA provider library), and each of the -j runs at a time holds one.
inline constexpr std::uint64_t k_max_artifact_bytes = std::uint64_t{4} << 30;

// Throws std::runtime_error when the file cannot be read (saying why) or is larger than
// k_max_artifact_bytes (naming the limit).
ArtifactDigest digest_run_artifact(const std::string& root, const std::string& relative,
                                   const Rewrites& rewrites);

// What variants are grouped by: "<path>: <component key>" for a CUDA artifact's components,
// "<path>: bytes" for any other file, in path order.
ComponentDigestList artifact_component_list(const std::vector<ArtifactDigest>& artifacts);

// A diff of two text files (-/+ lines in @@ hunks with the files' line numbers), or one line saying
// that binary files differ. `max_lines`: 0 for all.
std::vector<std::string> file_diff(const std::string& a_path, const std::string& b_path,
                                   std::size_t max_lines);

}  // namespace nvfresh

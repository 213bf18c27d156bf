// `nvfresh cache verify`: compile a stored entry again, from the command, working directory and
// environment it was first compiled with, into a scratch directory, and compare the normalized
// per-component digests with those of the object the entry holds (and with the variants verifying
// compiles saw before). Never with the digests the entry claims (`components`): an entry written by
// someone else may claim one compile's digests and hold another's object.
#pragma once

#include "cache/cache_entry.hpp"
#include "util/hasher.hpp"

#include <map>
#include <string>
#include <vector>

namespace nvfresh {

enum class Verification {
  same,           // the compile gave the entry's digests
  known_variant,  // it gave digests a verifying compile saw before (non-deterministic codegen)
  differs,        // it gave digests the entry never had
  not_run,        // it could not be compiled again here (its tree is gone, a tool is missing)
  failed,         // nvcc failed
  not_verified,   // its inputs changed since it was stored: a compile now would not be its compile
  damaged,        // the entry is not what its key says (unreadable, or copied under another key)
};

std::string_view verification_name(Verification verification);

// The components whose digests differ between two digest sets ("sm_90 cubin, host code").
std::string differing_components(const std::map<std::string, Digest>& a,
                                 const std::map<std::string, Digest>& b);

// The normalized digests (digest/object_digest.hpp) of the object the entry holds, from its bytes;
// empty where they are no artifact nvfresh can digest.
std::map<std::string, Digest> held_components(const CacheEntry& entry);

struct EntryVerification {
  Verification verdict = Verification::not_run;
  std::string detail;                      // the differing components, or why not run
  std::map<std::string, Digest> compiled;  // the digests of the new compile
};

// The command with its outputs (-o, --output-file, -MF, --dependency-output) moved to `object` and
// `depfile`: the tree's own files are never written.
std::vector<std::string> redirect_outputs(const std::vector<std::string>& command,
                                          const std::string& object, const std::string& depfile);

// Compiles `entry` again in a fresh directory under scratch_root. Never throws.
EntryVerification verify_entry(const CacheEntry& entry, const std::string& scratch_root);

}  // namespace nvfresh

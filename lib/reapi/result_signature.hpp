// Who wrote a remote cache entry, and how a reader checks it: an ed25519 signature (OpenSSL's
// libcrypto) that the writer puts into the ActionResult it uploads, as one more output file,
// nvfresh.signature, so a reader gets it with the result (no extra call, any REAPI server). REAPI
// signs nothing itself (remote-apis#368 proposes signed ActionResults); this is nvfresh's own.
//
//   signed message := "nvfresh-signed-result 1\n"
//                     "action " digest "\n"
//                     "exit_code " n "\n"
//                     ( "output " json-string(path) " " digest "\n" )*   sorted; not the signature
//                     "stdout " digest "\n"
//                     "stderr " digest "\n"
//   digest         := hash "/" size                                       (REAPI's SHA-256)
//   signature file := "nvfresh-signature 1\n"
//                     "key " hex(SHA-256 of the raw 32-byte public key) "\n"
//                     "ed25519 " hex(64-byte signature of the signed message) "\n"
//
// The Action digest binds the result to the Action it was written for (a result copied onto
// another Action does not verify), the outputs' digests bind it to the bytes (an entry, object or
// manifest rewritten does not verify), and only the holder of the private key can make one.
#pragma once

#include "reapi/blob_digest.hpp"
#include "reapi/remote_client.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct evp_pkey_st;

namespace nvfresh::reapi {

inline constexpr std::string_view k_signature_output = "nvfresh.signature";

// A key file that cannot be used: the message says which file, why, and what to do (one line).
class KeyError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// An ed25519 key loaded from PEM: a writer's private key (signs) or a reader's trusted public key
// (verifies).
class Ed25519Key {
public:
  // `role` names the setting in messages (NVFRESH_REMOTE_SIGNING_KEY, ..._TRUSTED_KEYS). Throws
  // KeyError when `pem` is not such a key.
  static Ed25519Key private_from_pem(std::string_view pem, const std::string& source);
  static Ed25519Key public_from_pem(std::string_view pem, const std::string& source);
  static Ed25519Key private_from_file(const std::string& file);
  static Ed25519Key public_from_file(const std::string& file);

  // Hex SHA-256 of the raw public key: names the key in the signature file and in messages.
  const std::string& id() const { return m_id; }
  // The 64-byte signature of `message` (a private key only).
  std::string sign(std::string_view message) const;
  bool verify(std::string_view message, std::string_view signature) const;

private:
  Ed25519Key(std::shared_ptr<evp_pkey_st> key, bool is_private);

  std::shared_ptr<evp_pkey_st> m_key;
  bool m_private = false;
  std::string m_id;
};

// The trusted public keys of the files of NVFRESH_REMOTE_TRUSTED_KEYS. Throws KeyError.
std::vector<Ed25519Key> trusted_keys_from_files(const std::vector<std::string>& files);

// The bytes signed for `result` of the Action `action`: every output but k_signature_output.
std::string signed_message(const BlobDigest& action, const ActionResultBlobs& result);

// The signature file of `message` by `key`.
std::string signature_file(const Ed25519Key& key, std::string_view message);

// "" when `file` is a signature of `message` by one of `trusted`, else why not in a few words
// ("signed by key 1a2b3c4d5e6f7a8b, which is not trusted").
std::string signature_problem(std::string_view file, std::string_view message,
                              const std::vector<Ed25519Key>& trusted);

// The first 16 hex digits of a key id, as messages name it.
std::string short_key_id(std::string_view id);

}  // namespace nvfresh::reapi

// How nvfresh proves who it is to a remote cache (cache/remote_cache.hpp), and what it never lets
// out: a bearer token (NVFRESH_REMOTE_TOKEN_FILE, else NVFRESH_REMOTE_TOKEN), sent by the helper
// as "authorization: Bearer <token>" on every call, and TLS client certificates
// (NVFRESH_REMOTE_TLS_CLIENT_CERT and _KEY, NVFRESH_REMOTE_TLS_CA for the server's roots) for
// grpcs://. The token reaches the helper in its environment only: never in its request file,
// a log line, a record or a message. A URL carrying a user name or password (grpc://u:p@host) is
// refused, and printed without them.
#pragma once

#include "config/config.hpp"
#include "util/environment.hpp"

#include <string>

namespace nvfresh {

// The variable that hands the token to nvfresh-remote (the one a user may set: the helper reads
// nothing else).
inline constexpr const char* k_remote_token_variable = "NVFRESH_REMOTE_TOKEN";
// The variable that names the signing key's file to nvfresh-remote.
inline constexpr const char* k_remote_signing_key_variable = "NVFRESH_REMOTE_SIGNING_KEY";

struct RemoteCredentials {
  std::string token;  // "" none; a secret: goes only into the helper's environment
  std::string tls_ca;
  std::string tls_client_cert;
  std::string tls_client_key;
  // The writer's ed25519 private key (PEM file, NVFRESH_REMOTE_SIGNING_KEY): its path reaches the
  // helper in its environment only, which signs every upload with it (reapi/result_signature.hpp).
  std::string signing_key;
};

// `url` without its userinfo ("grpc://alice:pw@host:1" -> "grpc://host:1"); `had_userinfo` says
// whether there was some. A '@' anywhere before the path counts, with or without a scheme.
std::string url_without_userinfo(const std::string& url, bool* had_userinfo = nullptr);

// The credentials of `config`, read (the token file) and checked. `refusal` is set to one sentence
// (naming no secret) when the remote must not be used with them: a URL with userinfo, a token file
// that cannot be read or is empty, a token a gRPC header cannot carry, client certificates for a
// plaintext grpc:// remote, a certificate without its key.
RemoteCredentials remote_credentials(const Config& config, std::string* refusal);

// The helper's environment: `env` with the token and the signing key's file set (or removed, when
// there is none).
Environment helper_environment(Environment env, const RemoteCredentials& credentials);

}  // namespace nvfresh

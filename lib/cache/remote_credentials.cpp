#include "cache/remote_credentials.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nvfresh {

namespace {

constexpr std::uint64_t k_token_file_limit = 64 << 10;

std::string trimmed(std::string text)
{
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && blank(text.back())) {
    text.pop_back();
  }
  const auto first = std::find_if_not(text.begin(), text.end(), blank);
  return std::string(first, text.end());
}

// What an HTTP/2 header value may hold, less the space: a token is one word (RFC 6750's token68
// and every API key seen are a subset).
bool header_safe(const std::string& token)
{
  return std::all_of(token.begin(), token.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// The token and where it came from, or a refusal.
std::string read_token(const Config& config, std::string* token)
{
  if (config.remote_token_file.empty()) {
    *token = trimmed(config.remote_token);
    return {};
  }
  auto text = try_read_file(config.remote_token_file, k_token_file_limit);
  if (!text) {
    return fmt::format("cannot read the token file NVFRESH_REMOTE_TOKEN_FILE={} ({})",
                       config.remote_token_file, std::strerror(errno));
  }
  *token = trimmed(*text);
  if (token->empty()) {
    return fmt::format("the token file NVFRESH_REMOTE_TOKEN_FILE={} is empty",
                       config.remote_token_file);
  }
  return {};
}

std::string tls_refusal(const Config& config, const std::string& url)
{
  const bool any_tls = !config.remote_tls_ca.empty() || !config.remote_tls_client_cert.empty() ||
                       !config.remote_tls_client_key.empty();
  if (any_tls && url.rfind("grpcs://", 0) != 0) {
    return "NVFRESH_REMOTE_TLS_* is set but the remote is not grpcs:// (TLS): use "
           "grpcs://host:port";
  }
  if (config.remote_tls_client_cert.empty() != config.remote_tls_client_key.empty()) {
    return "a TLS client certificate needs both NVFRESH_REMOTE_TLS_CLIENT_CERT and "
           "NVFRESH_REMOTE_TLS_CLIENT_KEY";
  }
  return {};
}

}  // namespace

std::string url_without_userinfo(const std::string& url, bool* had_userinfo)
{
  const size_t scheme_end = url.find("://");
  const size_t authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t path = url.find('/', authority);
  const size_t at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
  const bool found = at != std::string::npos && at >= authority;
  if (had_userinfo != nullptr) {
    *had_userinfo = found;
  }
  return found ? url.substr(0, authority) + url.substr(at + 1) : url;
}

RemoteCredentials remote_credentials(const Config& config, std::string* refusal)
{
  RemoteCredentials credentials;
  bool had_userinfo = false;
  url_without_userinfo(config.remote, &had_userinfo);
  if (had_userinfo) {
    *refusal = "NVFRESH_REMOTE names a user or password, which nvfresh never sends: give the URL "
               "without them and put a token in a file named by NVFRESH_REMOTE_TOKEN_FILE";
    return credentials;
  }
  *refusal = read_token(config, &credentials.token);
  if (refusal->empty() && !header_safe(credentials.token)) {
    *refusal = "the remote's token holds a space or a character a gRPC header cannot carry";
  }
  if (refusal->empty()) {
    *refusal = tls_refusal(config, config.remote);
  }
  if (!refusal->empty()) {
    return {};
  }
  credentials.tls_ca = config.remote_tls_ca;
  credentials.tls_client_cert = config.remote_tls_client_cert;
  credentials.tls_client_key = config.remote_tls_client_key;
  credentials.signing_key = config.remote_signing_key;
  return credentials;
}

Environment helper_environment(Environment env, const RemoteCredentials& credentials)
{
  env.erase(k_remote_token_variable);
  if (!credentials.token.empty()) {
    env[k_remote_token_variable] = credentials.token;
  }
  env.erase(k_remote_signing_key_variable);
  if (!credentials.signing_key.empty()) {
    env[k_remote_signing_key_variable] = credentials.signing_key;
  }
  return env;
}

}  // namespace nvfresh

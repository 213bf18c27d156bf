#include "reapi/result_signature.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

namespace nvfresh::reapi {

namespace {

constexpr size_t k_public_key_bytes = 32;
constexpr size_t k_signature_bytes = 64;
constexpr size_t k_key_file_limit = 1 << 16;
constexpr std::string_view k_signing_setting = "NVFRESH_REMOTE_SIGNING_KEY";
constexpr std::string_view k_trusted_setting = "NVFRESH_REMOTE_TRUSTED_KEYS";
constexpr std::string_view k_signature_header = "nvfresh-signature 1\n";

std::string to_hex(std::string_view bytes)
{
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    hex += fmt::format("{:02x}", byte);
  }
  return hex;
}

// The bytes of lowercase hex `hex`; nullopt when it is not that.
std::optional<std::string> from_hex(std::string_view hex)
{
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    bytes += static_cast<char>(high * 16 + low);
  }
  return bytes;
}

std::string digest_text(const BlobDigest& digest)
{
  return fmt::format("{}/{}", digest.hash, digest.size);
}

std::string read_key_file(const std::string& file, std::string_view setting)
{
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf()) || text.str().size() > k_key_file_limit) {
    throw KeyError(fmt::format("cannot read the key file {} ({}): name a readable PEM file there",
                               file, setting));
  }
  return text.str();
}

// The key of PEM `pem` read by `read` (PEM_read_bio_PrivateKey or _PUBKEY); null when none.
template <typename Read>
std::shared_ptr<evp_pkey_st> read_pem(std::string_view pem, Read read)
{
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
    BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  EVP_PKEY* key = bio ? read(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key != nullptr && EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    key = nullptr;
  }
  return key == nullptr ? nullptr : std::shared_ptr<evp_pkey_st>(key, &EVP_PKEY_free);
}

// The value of the line "<name> <value>\n" at `at` in `text`, advancing `at`; nullopt when the
// line there is not one.
std::optional<std::string_view> field(std::string_view text, size_t& at, std::string_view name)
{
  const size_t end = text.find('\n', at);
  if (end == std::string_view::npos || text.compare(at, name.size(), name) != 0 ||
      text.size() <= at + name.size() || text[at + name.size()] != ' ') {
    return std::nullopt;
  }
  const std::string_view value = text.substr(at + name.size() + 1, end - at - name.size() - 1);
  at = end + 1;
  return value;
}

}  // namespace

Ed25519Key::Ed25519Key(std::shared_ptr<evp_pkey_st> key, bool is_private)
  : m_key(std::move(key)), m_private(is_private)
{
  unsigned char raw[k_public_key_bytes];
  size_t size = sizeof raw;
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int hash_size = 0;
  if (EVP_PKEY_get_raw_public_key(m_key.get(), raw, &size) != 1 ||
      EVP_Digest(raw, size, hash, &hash_size, EVP_sha256(), nullptr) != 1) {
    throw KeyError("libcrypto cannot read an ed25519 key's public half");
  }
  m_id = to_hex({reinterpret_cast<const char*>(hash), hash_size});
}

Ed25519Key Ed25519Key::private_from_pem(std::string_view pem, const std::string& source)
{
  auto key = read_pem(pem, &PEM_read_bio_PrivateKey);
  if (!key) {
    throw KeyError(fmt::format(
      "the signing key {} ({}) is not an ed25519 private key in PEM: make one with `openssl "
      "genpkey -algorithm ed25519 -out ci-signing.pem`",
      source, k_signing_setting));
  }
  return Ed25519Key(std::move(key), true);
}

Ed25519Key Ed25519Key::public_from_pem(std::string_view pem, const std::string& source)
{
  auto key = read_pem(pem, &PEM_read_bio_PUBKEY);
  if (!key) {
    throw KeyError(fmt::format(
      "the trusted key {} ({}) is not an ed25519 public key in PEM: make it from the writer's "
      "private key with `openssl pkey -in ci-signing.pem -pubout -out ci-signing.pub`",
      source, k_trusted_setting));
  }
  return Ed25519Key(std::move(key), false);
}

Ed25519Key Ed25519Key::private_from_file(const std::string& file)
{
  return private_from_pem(read_key_file(file, k_signing_setting), file);
}

Ed25519Key Ed25519Key::public_from_file(const std::string& file)
{
  return public_from_pem(read_key_file(file, k_trusted_setting), file);
}

std::string Ed25519Key::sign(std::string_view message) const
{
  if (!m_private) {
    throw KeyError("a public key cannot sign");
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  std::string signature(k_signature_bytes, '\0');
  size_t size = signature.size();
  if (!context || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, m_key.get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      size != k_signature_bytes) {
    throw KeyError("libcrypto could not sign with the ed25519 key");
  }
  return signature;
}

bool Ed25519Key::verify(std::string_view message, std::string_view signature) const
{
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  return context && signature.size() == k_signature_bytes &&
         EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, m_key.get()) == 1 &&
         EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

std::vector<Ed25519Key> trusted_keys_from_files(const std::vector<std::string>& files)
{
  std::vector<Ed25519Key> keys;
  keys.reserve(files.size());
  for (const auto& file : files) {
    keys.push_back(Ed25519Key::public_from_file(file));
  }
  return keys;
}

std::string signed_message(const BlobDigest& action, const ActionResultBlobs& result)
{
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& output : result.outputs) {
    if (output.path != k_signature_output) {
      outputs.emplace_back(nlohmann::json(output.path).dump(), digest_text(output.digest));
    }
  }
  std::sort(outputs.begin(), outputs.end());
  std::string message = fmt::format("nvfresh-signed-result 1\naction {}\nexit_code {}\n",
                                    digest_text(action), result.exit_code);
  for (const auto& [path, digest] : outputs) {
    message += fmt::format("output {} {}\n", path, digest);
  }
  message += fmt::format("stdout {}\nstderr {}\n", digest_text(result.stdout_digest),
                         digest_text(result.stderr_digest));
  return message;
}

std::string signature_file(const Ed25519Key& key, std::string_view message)
{
  return fmt::format("{}key {}\ned25519 {}\n", k_signature_header, key.id(),
                     to_hex(key.sign(message)));
}

std::string signature_problem(std::string_view file, std::string_view message,
                              const std::vector<Ed25519Key>& trusted)
{
  size_t at = k_signature_header.size();
  std::optional<std::string_view> id;
  std::optional<std::string_view> hex;
  if (file.substr(0, at) != k_signature_header || !(id = field(file, at, "key")) ||
      !(hex = field(file, at, "ed25519")) || at != file.size()) {
    return "its signature file does not parse";
  }
  const auto key = std::find_if(trusted.begin(), trusted.end(),
                                [&](const Ed25519Key& k) { return k.id() == *id; });
  if (key == trusted.end()) {
    return fmt::format("signed by key {}, which is not trusted", short_key_id(*id));
  }
  const auto signature = from_hex(*hex);
  if (!signature || !key->verify(message, *signature)) {
    return fmt::format("its signature by key {} does not match it (changed after signing, or "
                       "moved to another Action)",
                       short_key_id(*id));
  }
  return "";
}

std::string short_key_id(std::string_view id)
{
  return std::string(id.substr(0, 16));
}

}  // namespace nvfresh::reapi

#include "reapi/blob_digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <stdexcept>
#include <unistd.h>

namespace nvfresh::reapi {

namespace {

class Sha256 {
public:
  Sha256() : m_context(EVP_MD_CTX_new(), &EVP_MD_CTX_free)
  {
    if (!m_context || EVP_DigestInit_ex(m_context.get(), EVP_sha256(), nullptr) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
    }
  }
  void update(const void* data, size_t size)
  {
    if (EVP_DigestUpdate(m_context.get(), data, size) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not digest");
    }
  }
  std::string hex()
  {
    std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(m_context.get(), hash.data(), &length) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not finish a digest");
    }
    std::string text;
    text.reserve(static_cast<size_t>(length) * 2);
    for (unsigned int i = 0; i < length; ++i) {
      text += fmt::format("{:02x}", hash[i]);
    }
    return text;
  }

private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> m_context;
};

}  // namespace

BlobDigest digest_of(std::string_view bytes)
{
  Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return {sha.hex(), static_cast<std::int64_t>(bytes.size())};
}

BlobDigest digest_of_file(const std::string& path)
{
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  Sha256 sha;
  std::int64_t size = 0;
  std::array<char, 1 << 16> buffer{};
  while (true) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(error)));
    }
    if (got == 0) {
      break;
    }
    sha.update(buffer.data(), static_cast<size_t>(got));
    size += got;
  }
  ::close(fd);
  return {sha.hex(), size};
}

}  // namespace nvfresh::reapi

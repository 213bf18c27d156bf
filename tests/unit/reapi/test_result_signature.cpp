#include "reapi/result_signature.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

using namespace nvfresh;
using namespace nvfresh::reapi;

namespace {

struct KeyPair {
  std::string private_pem;
  std::string public_pem;
};

// A fresh key pair of `type` (EVP_PKEY_ED25519 unless a test wants another), as PEM texts: what
// `openssl genpkey` and `openssl pkey -pubout` write.
KeyPair fresh_pair(int type = EVP_PKEY_ED25519)
{
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> context(
    EVP_PKEY_CTX_new_id(type, nullptr), &EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  REQUIRE(EVP_PKEY_keygen_init(context.get()) == 1);
  if (type == EVP_PKEY_RSA) {
    REQUIRE(EVP_PKEY_CTX_set_rsa_keygen_bits(context.get(), 1024) == 1);
  }
  REQUIRE(EVP_PKEY_keygen(context.get(), &raw) == 1);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, &EVP_PKEY_free);
  auto pem = [&](auto write) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    REQUIRE(write(bio.get()) == 1);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(size));
  };
  return {pem([&](BIO* bio) {
            return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
          }),
          pem([&](BIO* bio) { return PEM_write_bio_PUBKEY(bio, key.get()); })};
}

BlobDigest digest(char fill, std::int64_t size)
{
  return {std::string(64, fill), size};
}

ActionResultBlobs a_result()
{
  ActionResultBlobs result;
  result.outputs = {{"k.cu.o", digest('a', 5000)}, {"nvfresh.entry", digest('b', 700)}};
  result.stdout_digest = digest('c', 0);
  result.stderr_digest = digest('d', 12);
  return result;
}

}  // namespace

TEST_CASE("a signed result verifies with the writer's public key", "[reapi][signature]")
{
  const KeyPair pair = fresh_pair();
  const auto writer = Ed25519Key::private_from_pem(pair.private_pem, "ci.pem");
  const auto reader = Ed25519Key::public_from_pem(pair.public_pem, "ci.pub");
  CHECK(writer.id() == reader.id());
  CHECK(writer.id().size() == 64);
  const std::string message = signed_message(digest('e', 140), a_result());
  const std::string file = signature_file(writer, message);
  CHECK(signature_problem(file, message, {reader}).empty());
  // Another trusted key beside it changes nothing.
  const auto other = Ed25519Key::public_from_pem(fresh_pair().public_pem, "other.pub");
  CHECK(signature_problem(file, message, {other, reader}).empty());
}

TEST_CASE("any byte of the signed message changed is refused", "[reapi][signature]")
{
  const KeyPair pair = fresh_pair();
  const auto writer = Ed25519Key::private_from_pem(pair.private_pem, "ci.pem");
  const std::vector trusted{Ed25519Key::public_from_pem(pair.public_pem, "ci.pub")};
  const std::string message = signed_message(digest('e', 140), a_result());
  const std::string file = signature_file(writer, message);
  for (size_t i = 0; i < message.size(); ++i) {
    std::string changed = message;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    INFO("byte " << i);
    CHECK_THAT(signature_problem(file, changed, trusted),
               Catch::Contains("does not match it (changed after signing"));
  }
}

TEST_CASE("any byte of the signature file changed is refused", "[reapi][signature]")
{
  const KeyPair pair = fresh_pair();
  const auto writer = Ed25519Key::private_from_pem(pair.private_pem, "ci.pem");
  const std::vector trusted{Ed25519Key::public_from_pem(pair.public_pem, "ci.pub")};
  const std::string message = signed_message(digest('e', 140), a_result());
  const std::string file = signature_file(writer, message);
  for (size_t i = 0; i < file.size(); ++i) {
    std::string changed = file;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    INFO("byte " << i);
    CHECK_FALSE(signature_problem(changed, message, trusted).empty());
  }
  CHECK_FALSE(signature_problem(file.substr(0, file.size() - 1), message, trusted).empty());
  CHECK_FALSE(signature_problem(file + "x", message, trusted).empty());
  CHECK(signature_problem("", message, trusted) == "its signature file does not parse");
}

TEST_CASE("a signature by a key that is not trusted is refused", "[reapi][signature]")
{
  const KeyPair ci = fresh_pair();
  const KeyPair colleague = fresh_pair();
  const auto forger = Ed25519Key::private_from_pem(colleague.private_pem, "m.pem");
  const auto trusted = Ed25519Key::public_from_pem(ci.public_pem, "ci.pub");
  const std::string message = signed_message(digest('e', 140), a_result());
  CHECK(signature_problem(signature_file(forger, message), message, {trusted}) ==
        "signed by key " + forger.id().substr(0, 16) + ", which is not trusted");
  CHECK_FALSE(signature_problem(signature_file(forger, message), message, {}).empty());

  // The colleague's signature under the id of CI's key: the key is found, the signature fails.
  std::string claimed = signature_file(forger, message);
  claimed.replace(claimed.find(forger.id()), forger.id().size(), trusted.id());
  CHECK_THAT(signature_problem(claimed, message, {trusted}), Catch::Contains("does not match"));
}

TEST_CASE("the signed message binds the Action and every output", "[reapi][signature]")
{
  const ActionResultBlobs result = a_result();
  const std::string message = signed_message(digest('e', 140), result);
  CHECK(message == "nvfresh-signed-result 1\n"
                   "action " +
                     std::string(64, 'e') +
                     "/140\n"
                     "exit_code 0\n"
                     "output \"k.cu.o\" " +
                     std::string(64, 'a') +
                     "/5000\n"
                     "output \"nvfresh.entry\" " +
                     std::string(64, 'b') +
                     "/700\n"
                     "stdout " +
                     std::string(64, 'c') +
                     "/0\n"
                     "stderr " +
                     std::string(64, 'd') + "/12\n");
  // Another Action: a result copied onto it does not verify.
  CHECK(signed_message(digest('f', 140), result) != message);

  // The signature output itself is not signed, and the outputs' order does not matter.
  ActionResultBlobs signed_result = result;
  signed_result.outputs.insert(signed_result.outputs.begin(),
                               {std::string(k_signature_output), digest('9', 250)});
  std::swap(signed_result.outputs[1], signed_result.outputs[2]);
  CHECK(signed_message(digest('e', 140), signed_result) == message);

  // A path cannot forge a line of its own.
  ActionResultBlobs tricky = result;
  tricky.outputs = {
    {"k.cu.o " + std::string(64, 'a') + "/5000\noutput \"nvfresh.entry\"", digest('b', 700)}};
  CHECK(signed_message(digest('e', 140), tricky) != message);
  CHECK(signed_message(digest('e', 140), tricky).find("\\noutput") != std::string::npos);
}

TEST_CASE("a key file that is not an ed25519 key says what to do", "[reapi][signature]")
{
  const KeyPair pair = fresh_pair();
  CHECK_THROWS_WITH(Ed25519Key::private_from_pem(pair.public_pem, "ci.pub"),
                    Catch::Contains("ci.pub (NVFRESH_REMOTE_SIGNING_KEY) is not an ed25519 "
                                    "private key") &&
                      Catch::Contains("openssl genpkey -algorithm ed25519"));
  CHECK_THROWS_WITH(Ed25519Key::public_from_pem(pair.private_pem, "ci.pem"),
                    Catch::Contains("ci.pem (NVFRESH_REMOTE_TRUSTED_KEYS) is not an ed25519 "
                                    "public key") &&
                      Catch::Contains("openssl pkey -in ci-signing.pem -pubout"));
  CHECK_THROWS_AS(Ed25519Key::public_from_pem("-----BEGIN PUBLIC KEY-----\nnot base64\n", "x"),
                  KeyError);
  const KeyPair rsa = fresh_pair(EVP_PKEY_RSA);
  CHECK_THROWS_AS(Ed25519Key::private_from_pem(rsa.private_pem, "rsa.pem"), KeyError);
  CHECK_THROWS_AS(Ed25519Key::public_from_pem(rsa.public_pem, "rsa.pub"), KeyError);

  test::TempDir dir;
  CHECK_THROWS_WITH(trusted_keys_from_files({dir.path("missing.pub")}),
                    Catch::Contains("cannot read the key file " + dir.path("missing.pub")));
  CHECK_THROWS_AS(Ed25519Key::public_from_pem(pair.public_pem, "ci.pub").sign("x"), KeyError);
}

TEST_CASE("trusted keys load from files", "[reapi][signature]")
{
  test::TempDir dir;
  const KeyPair one = fresh_pair();
  const KeyPair two = fresh_pair();
  const auto keys = trusted_keys_from_files(
    {dir.write("one.pub", one.public_pem), dir.write("two.pub", two.public_pem)});
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].id() == Ed25519Key::private_from_pem(one.private_pem, "one").id());
  CHECK(keys[1].id() == Ed25519Key::private_from_pem(two.private_pem, "two").id());
  CHECK(keys[0].id() != keys[1].id());
}

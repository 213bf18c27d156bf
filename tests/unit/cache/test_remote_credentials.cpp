#include "cache/remote_cache.hpp"
#include "cache/remote_credentials.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

Config remote_config(const std::string& url)
{
  Config config;
  config.remote = url;
  return config;
}

}  // namespace

TEST_CASE("a URL's user and password are cut out", "[remote]")
{
  bool had = false;
  CHECK(url_without_userinfo("grpc://alice:s3cr3t@cache:1", &had) == "grpc://cache:1");
  CHECK(had);
  CHECK(url_without_userinfo("grpcs://token@cache:1/", &had) == "grpcs://cache:1/");
  CHECK(had);
  CHECK(url_without_userinfo("alice:p@ss@cache:1", &had) == "cache:1");
  CHECK(had);
  CHECK(url_without_userinfo("grpc://cache:1", &had) == "grpc://cache:1");
  CHECK_FALSE(had);
  CHECK(url_without_userinfo("grpc://cache:1/a@b", &had) == "grpc://cache:1/a@b");
  CHECK_FALSE(had);
}

TEST_CASE("a URL with a password is refused, and the settings never hold it", "[remote]")
{
  auto settings = remote_settings(remote_config("grpc://alice:s3cr3t@cache:1"));
  REQUIRE(settings);
  CHECK(settings->url == "grpc://cache:1");
  CHECK(settings->refusal.find("NVFRESH_REMOTE_TOKEN_FILE") != std::string::npos);
  CHECK(settings->refusal.find("s3cr3t") == std::string::npos);
  CHECK(settings->credentials.token.empty());
}

TEST_CASE("the token comes from its file, else the environment", "[remote]")
{
  test::TempDir dir;
  Config config = remote_config("grpc://cache:1");
  config.remote_token = "from-env";
  std::string refusal;
  CHECK(remote_credentials(config, &refusal).token == "from-env");
  CHECK(refusal.empty());

  config.remote_token_file = dir.write("token", "  from-file\n");
  CHECK(remote_credentials(config, &refusal).token == "from-file");
  CHECK(refusal.empty());

  config.remote_token_file = dir.write("empty", "\n");
  CHECK(remote_credentials(config, &refusal).token.empty());
  CHECK(refusal.find("is empty") != std::string::npos);

  config.remote_token_file = dir.path("missing");
  remote_credentials(config, &refusal);
  CHECK(refusal.find("cannot read the token file") != std::string::npos);

  config.remote_token_file = dir.write("two-words", "two words\n");
  CHECK(remote_credentials(config, &refusal).token.empty());
  CHECK(refusal.find("two") == std::string::npos);  // the token is never said
  CHECK(refusal.find("cannot carry") != std::string::npos);
}

TEST_CASE("client certificates need TLS and both halves", "[remote]")
{
  Config config = remote_config("grpc://cache:1");
  config.remote_tls_client_cert = "/c.pem";
  config.remote_tls_client_key = "/k.pem";
  std::string refusal;
  remote_credentials(config, &refusal);
  CHECK(refusal.find("grpcs://") != std::string::npos);

  config.remote = "grpcs://cache:1";
  const auto credentials = remote_credentials(config, &refusal);
  CHECK(refusal.empty());
  CHECK((credentials.tls_client_cert == "/c.pem" && credentials.tls_client_key == "/k.pem"));

  config.remote_tls_client_key.clear();
  remote_credentials(config, &refusal);
  CHECK(refusal.find("NVFRESH_REMOTE_TLS_CLIENT_KEY") != std::string::npos);
}

TEST_CASE("the token reaches the helper in its environment only", "[remote]")
{
  RemoteCredentials credentials;
  credentials.token = "t0ken";
  Environment env = helper_environment({{"PATH", "/bin"}}, credentials);
  CHECK(env.at(k_remote_token_variable) == "t0ken");
  credentials.token.clear();
  env = helper_environment({{k_remote_token_variable, "stale"}}, credentials);
  CHECK(env.count(k_remote_token_variable) == 0);
}

TEST_CASE("the signing key's file reaches the helper in its environment, from the config",
          "[remote]")
{
  Config config;
  config.remote = "grpc://cache:1";
  config.remote_signing_key = "/keys/ci-signing.pem";
  std::string refusal;
  const auto credentials = remote_credentials(config, &refusal);
  CHECK(refusal.empty());
  Environment env = helper_environment({{"PATH", "/bin"}}, credentials);
  CHECK(env.at(k_remote_signing_key_variable) == "/keys/ci-signing.pem");
  // A variable the build's environment carries is replaced by the configured one, or removed.
  env =
    helper_environment({{k_remote_signing_key_variable, "/elsewhere.pem"}}, RemoteCredentials{});
  CHECK(env.count(k_remote_signing_key_variable) == 0);
}

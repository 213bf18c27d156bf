#include "reapi/action_builder.hpp"

#include <build/bazel/remote/execution/v2/remote_execution.pb.h>
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace nvfresh::reapi {

namespace v2 = build::bazel::remote::execution::v2;

namespace {

std::vector<std::string> path_components(const std::string& path)
{
  if (path.empty() || path.front() == '/') {
    throw std::runtime_error(fmt::format("input path '{}' is not relative", path));
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") {
      throw std::runtime_error(fmt::format("input path '{}' has an empty, '.' or '..' part", path));
    }
    parts.push_back(std::move(part));
    start = slash + 1;
  }
  return parts;
}

struct TreeNode {
  std::map<std::string, BlobDigest> files;  // std::map: sorted by name, as canonical form asks
  std::map<std::string, std::unique_ptr<TreeNode>> directories;
};

void insert(TreeNode& root, const std::string& path, const BlobDigest& digest)
{
  const auto parts = path_components(path);
  TreeNode* node = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (node->files.count(parts[i]) != 0) {
      throw std::runtime_error(fmt::format("input path '{}' goes through a file", path));
    }
    auto& child = node->directories[parts[i]];
    if (!child) {
      child = std::make_unique<TreeNode>();
    }
    node = child.get();
  }
  if (node->directories.count(parts.back()) != 0) {
    throw std::runtime_error(fmt::format("input path '{}' is also a directory", path));
  }
  node->files[parts.back()] = digest;
}

void set_digest(v2::Digest* out, const BlobDigest& digest)
{
  out->set_hash(digest.hash);
  out->set_size_bytes(digest.size);
}

BlobDigest add_blob(BuiltAction& built, std::string bytes)
{
  BlobDigest digest = digest_of(bytes);
  built.blobs.emplace(digest, std::move(bytes));
  return digest;
}

BlobDigest add_directory(BuiltAction& built, const TreeNode& node)
{
  v2::Directory directory;
  for (const auto& [name, digest] : node.files) {
    auto* file = directory.add_files();
    file->set_name(name);
    set_digest(file->mutable_digest(), digest);
  }
  for (const auto& [name, child] : node.directories) {
    auto* entry = directory.add_directories();
    entry->set_name(name);
    set_digest(entry->mutable_digest(), add_directory(built, *child));
  }
  std::string bytes;
  directory.SerializeToString(&bytes);
  return add_blob(built, std::move(bytes));
}

}  // namespace

BuiltAction build_action(const ActionSpec& spec, DigestCache* digests)
{
  if (spec.arguments.empty()) {
    throw std::runtime_error("an action needs at least one argument");
  }
  BuiltAction built;
  TreeNode root;
  for (const auto& [path, file] : spec.input_files) {
    const BlobDigest digest =
      digests != nullptr ? digests->digest_of_file(file) : digest_of_file(file);
    insert(root, path, digest);
    built.input_files.emplace(digest, file);
  }
  for (const auto& [path, bytes] : spec.input_blobs) {
    insert(root, path, add_blob(built, bytes));
  }
  built.input_root_digest = add_directory(built, root);

  v2::Command command;
  for (const auto& argument : spec.arguments) {
    command.add_arguments(argument);
  }
  for (const auto& [name, value] : spec.environment) {  // sorted by name
    auto* variable = command.add_environment_variables();
    variable->set_name(name);
    variable->set_value(value);
  }
  std::vector<std::string> outputs = spec.output_paths;
  std::sort(outputs.begin(), outputs.end());
  outputs.erase(std::unique(outputs.begin(), outputs.end()), outputs.end());
  for (const auto& output : outputs) {
    command.add_output_paths(output);
  }
  command.set_working_directory(spec.working_directory);
  v2::Platform platform;
  for (const auto& [name, value] : spec.platform) {  // sorted by name
    auto* property = platform.add_properties();
    property->set_name(name);
    property->set_value(value);
  }
  if (!spec.platform.empty()) {
    *command.mutable_platform() = platform;
  }
  std::string command_bytes;
  command.SerializeToString(&command_bytes);
  built.command_digest = add_blob(built, std::move(command_bytes));

  v2::Action action;
  set_digest(action.mutable_command_digest(), built.command_digest);
  set_digest(action.mutable_input_root_digest(), built.input_root_digest);
  action.set_salt(spec.salt);
  action.set_do_not_cache(spec.do_not_cache);
  if (!spec.platform.empty()) {
    *action.mutable_platform() = platform;
  }
  std::string action_bytes;
  action.SerializeToString(&action_bytes);
  built.action_digest = add_blob(built, std::move(action_bytes));
  return built;
}

}  // namespace nvfresh::reapi

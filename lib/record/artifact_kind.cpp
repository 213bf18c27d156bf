#include "record/artifact_kind.hpp"

namespace nvfresh {

namespace {

struct KindName {
  ArtifactKind kind;
  std::string_view name;
};

constexpr KindName k_kind_names[] = {
  {ArtifactKind::executable, "executable"},
  {ArtifactKind::shared_library, "shared_library"},
  {ArtifactKind::module_library, "module_library"},
  {ArtifactKind::static_library, "static_library"},
  {ArtifactKind::unknown, "unknown"},
  {ArtifactKind::object, "object"},
};

}  // namespace

std::string_view artifact_kind_name(ArtifactKind kind)
{
  for (const auto& entry : k_kind_names) {
    if (entry.kind == kind) {
      return entry.name;
    }
  }
  return "unknown";
}

ArtifactKind artifact_kind_from_name(std::string_view name)
{
  for (const auto& entry : k_kind_names) {
    if (entry.name == name) {
      return entry.kind;
    }
  }
  return ArtifactKind::unknown;
}

}  // namespace nvfresh

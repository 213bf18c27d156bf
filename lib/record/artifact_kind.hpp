// What a link step writes: the kind of a linked artifact, as link records store it and the build
// graph reads it from the generator's rules.
#pragma once

#include <optional>
#include <string_view>

namespace nvfresh {

enum class ArtifactKind {
  executable,
  shared_library,
  module_library,
  static_library,
  unknown,
  object,  // a relocatable object a link step writes: nvcc -dlink's cmake_device_link.o, ld -r
};

std::string_view artifact_kind_name(ArtifactKind kind);       // "shared_library", ...
ArtifactKind artifact_kind_from_name(std::string_view name);  // unknown for any other text

}  // namespace nvfresh

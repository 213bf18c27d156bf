#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace nvfresh {

std::string temp_parent_dir()
{
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string make_scratch_dir(const std::string& parent, std::string_view prefix)
{
  std::string pattern = fmt::format("{}/{}XXXXXX", parent, prefix);
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(fmt::format("cannot make a scratch directory {}", pattern));
  }
  return pattern;
}

ScratchDir::ScratchDir(std::string_view prefix, const std::string& parent)
  : m_path(make_scratch_dir(parent, prefix))
{}

ScratchDir::~ScratchDir()
{
  std::error_code ignored;
  std::filesystem::remove_all(m_path, ignored);
}

}  // namespace nvfresh

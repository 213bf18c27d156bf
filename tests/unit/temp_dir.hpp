// A temporary directory for one test, removed afterwards.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <stdlib.h>

namespace nvfresh::test {

class TempDir {
public:
  TempDir()
  {
    std::string pattern = (std::filesystem::temp_directory_path() / "nvfresh-unit.XXXXXX").string();
    m_path = ::mkdtemp(pattern.data());
  }
  ~TempDir()
  {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& relative = {}) const
  {
    return relative.empty() ? m_path : m_path + "/" + relative;
  }
  std::string write(const std::string& relative, const std::string& content) const
  {
    std::string full = path(relative);
    std::filesystem::create_directories(std::filesystem::path(full).parent_path());
    std::ofstream(full, std::ios::binary) << content;
    return full;
  }

private:
  std::string m_path;
};

}  // namespace nvfresh::test

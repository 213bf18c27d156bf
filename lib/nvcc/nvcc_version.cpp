#include "nvcc/nvcc_version.hpp"

namespace nvfresh {

std::string release_line(const std::string& text)
{
  const size_t at = text.find("release");
  if (at == std::string::npos) {
    return {};
  }
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const size_t end = std::min(text.find('\n', at), text.size());
  return text.substr(begin, end - begin);
}

std::string query_nvcc_version(const std::string& nvcc, const Environment& env)
{
  auto text = capture_output({nvcc, "--version"}, env);
  return text ? release_line(*text) : std::string();
}

}  // namespace nvfresh

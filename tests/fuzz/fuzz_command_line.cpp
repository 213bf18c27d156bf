// libFuzzer target for lib/nvcc/command_line.cpp: nvcc's argv, NVCC_PREPEND_FLAGS,
// NVCC_APPEND_FLAGS and the body of an options file, all as the build hands them to nvfresh.
// Input layout: up to four parts separated by the byte 0x01,
//   argv words (separated by NUL) 0x01 NVCC_PREPEND_FLAGS 0x01 NVCC_APPEND_FLAGS 0x01 opts.rsp body
// The body is written to opts.rsp in a scratch working directory, so "--options-file opts.rsp" (or
// "-optf opts.rsp", also inside the file itself) reads it. Properties: parse_command_line never
// crashes or throws and always ends (a hang is a bug too); a request it returns has at least one device
// pass; split_nvcc_words and split_nvcc_env_flags never crash.
// Seeds: tests/fuzz/corpus/command_line (the CMake-generated lines of tests/unit/data/cmake_lines).
#include "fuzz_support.hpp"
#include "nvcc/command_line.hpp"

#include <string>
#include <vector>

namespace {

std::vector<std::string> argv_words(std::string_view part)
{
  std::vector<std::string> words;
  if (part.empty()) {
    return words;
  }
  for (std::string_view word : nvfresh::fuzz::split_parts(part, '\0')) {
    words.emplace_back(word);
  }
  return words;
}

void check_request(const nvfresh::ParseResult& result)
{
  if (!result.request) {
    if (result.reason == nvfresh::Cause::none) {
      nvfresh::fuzz::fail("no request means a named fallback reason");
    }
    return;
  }
  if (result.request->device_passes.empty()) {
    nvfresh::fuzz::fail("a request has at least one device pass");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text = nvfresh::fuzz::as_text(data, size);
  const std::vector<std::string_view> parts = nvfresh::fuzz::split_parts(text, '\x01');
  const auto part = [&](std::size_t i) {
    return i < parts.size() ? std::string(parts[i]) : std::string();
  };

  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  dir.write("opts.rsp", part(3));
  nvfresh::Environment env;
  if (parts.size() > 1) {
    env["NVCC_PREPEND_FLAGS"] = part(1);
  }
  if (parts.size() > 2) {
    env["NVCC_APPEND_FLAGS"] = part(2);
  }
  check_request(nvfresh::parse_command_line(argv_words(parts[0]), env, dir.path()));

  (void)nvfresh::split_nvcc_words(std::string(text));
  (void)nvfresh::split_nvcc_env_flags(std::string(text));
  return 0;
}

// libFuzzer target for lib/config/config.cpp: the optional config file ("key = value" lines, '#'
// comments), which load_config reads on every compile. The input is the file (NVFRESH_CONFIG points
// at it). Properties: load_config never crashes or throws; the values it takes from the file
// carry no surrounding white space; the environment still wins over the file.
// Seeds: tests/fuzz/corpus/config.
#include "config/config.hpp"
#include "fuzz_support.hpp"

#include <cctype>
#include <string>

namespace {

bool trimmed(const std::string& value)
{
  return value.empty() || (std::isspace(static_cast<unsigned char>(value.front())) == 0 &&
                           std::isspace(static_cast<unsigned char>(value.back())) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  const std::string file = dir.write("nvfresh.conf", nvfresh::fuzz::as_text(data, size));

  const nvfresh::Config config = nvfresh::load_config({{"NVFRESH_CONFIG", file}});
  if (!trimmed(config.record_dir) || !trimmed(config.log_file) || !trimmed(config.trace_lib)) {
    nvfresh::fuzz::fail("values from the config file are trimmed");
  }
  const nvfresh::Config from_env = nvfresh::load_config(
    {{"NVFRESH_CONFIG", file}, {"NVFRESH_RECORD_DIR", "/env/records"}, {"NVFRESH_DISABLE", "0"}});
  if (from_env.record_dir != "/env/records" || from_env.disabled) {
    nvfresh::fuzz::fail("the environment wins over the config file");
  }
  return 0;
}

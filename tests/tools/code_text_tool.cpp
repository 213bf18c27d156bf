// Test-only command line front end to lib/cache/code_text, used by
// tests/integration/test_code_text_real.py.
//
//   code_text_tool <out dir> <file>...
//
// For the n-th file (from 0), writes its code text to <out dir>/<n> and prints "<n> judged", or
// prints "<n> unjudged" where code_text gives none. Exit status 2 on bad usage or a file that
// cannot be read or written.
#include "cache/code_text.hpp"
#include "util/file_io.hpp"

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv)
{
  if (argc < 2) {
    std::fputs("usage: code_text_tool <out dir> <file>...\n", stderr);
    return 2;
  }
  try {
    const std::string out_dir = argv[1];
    for (int i = 2; i < argc; ++i) {
      const int n = i - 2;
      const auto text = nvfresh::try_read_file(argv[i]);
      if (!text) {
        std::fprintf(stderr, "code_text_tool: cannot read %s\n", argv[i]);
        return 2;
      }
      const auto code = nvfresh::code_text(*text);
      if (code) {
        nvfresh::write_file_atomically(out_dir + "/" + std::to_string(n), *code);
      }
      std::printf("%d %s\n", n, code ? "judged" : "unjudged");
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "code_text_tool: %s\n", error.what());
    return 2;
  }
  return 0;
}

// Where nvfresh's own preload libraries (the tracer, the heap-noise library) are installed: next to
// the nvfresh binary, as the build tree and `cmake --install` lay them out.
#pragma once

#include <string>
#include <string_view>

namespace nvfresh {

// The path of `file_name` ("libnvfresh_trace.so") in <bin>/../lib/nvfresh, <bin>/../lib or <bin>,
// where <bin> holds the running nvfresh; empty when it is in none of them.
std::string locate_installed_library(std::string_view file_name);

}  // namespace nvfresh

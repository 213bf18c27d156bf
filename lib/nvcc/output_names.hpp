// What nvcc names its output when the command line gives no -o: the source's stem with the
// suffix of the compile mode, in the working directory ("k.cu" -c -> "k.o", -ptx -> "k.ptx").
#pragma once

#include "nvcc/command_line.hpp"

#include <string>
#include <string_view>

namespace nvfresh {

std::string_view output_suffix(CompileMode mode);  // ".o", ".ptx", ".cubin", ".fatbin", ...
std::string default_output(const CompileRequest& request);  // relative to the working directory

}  // namespace nvfresh

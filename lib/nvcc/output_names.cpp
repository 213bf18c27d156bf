#include "nvcc/output_names.hpp"

#include "util/name_table.hpp"

#include <filesystem>

namespace nvfresh {

namespace {

struct ModeSuffix {
  CompileMode mode;
  std::string_view suffix;
};

// As nvcc 13.0 names them (checked without -o, one mode at a time).
constexpr ModeSuffix k_mode_suffixes[] = {
  {CompileMode::object, ".o"},      {CompileMode::relocatable, ".o"},
  {CompileMode::ptx, ".ptx"},       {CompileMode::cubin, ".cubin"},
  {CompileMode::fatbin, ".fatbin"}, {CompileMode::optix_ir, ".optixir"},
  {CompileMode::ltoir, ".ltoir"},
};

}  // namespace

std::string_view output_suffix(CompileMode mode)
{
  const ModeSuffix* row = find_row(k_mode_suffixes, &ModeSuffix::mode, mode);
  return row != nullptr ? row->suffix : std::string_view(".o");
}

std::string default_output(const CompileRequest& request)
{
  return std::filesystem::path(request.source).stem().string() +
         std::string(output_suffix(request.mode));
}

}  // namespace nvfresh

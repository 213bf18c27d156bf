#include "util/json.hpp"

#include <fmt/format.h>

namespace nvfresh {

std::string dump_json(const nlohmann::json& value)
{
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(const nlohmann::json& value)
{
  fmt::print("{}\n", dump_json(value));
}

}  // namespace nvfresh

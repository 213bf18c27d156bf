// JSON output that never aborts: nlohmann::json throws on a byte that is not UTF-8 (a Latin-1 file
// name, a corrupt record, a kernel name in a damaged object); such a byte is written as U+FFFD.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace nvfresh {

std::string dump_json(const nlohmann::json& value);  // indented by 2, invalid UTF-8 replaced
void print_json(const nlohmann::json& value);        // dump_json and a newline, to stdout

}  // namespace nvfresh

// Test tool for tests/integration/test_faults.py: rewrites one field of a record and saves it as
// nvfresh would, with a valid checksum and head: a hostile or forged record, to show that nothing
// named in a record is run, and nothing outside the build tree written, because of it.
// Usage: record_edit_tool <record-file> (compiler|object|source) <value>
#include "record/record_root.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

int main(int argc, char** argv)
{
  if (argc != 4) {
    fmt::print(stderr, "usage: record_edit_tool <record-file> (compiler|object|source) <value>\n");
    return 2;
  }
  auto loaded = nvfresh::load_record(argv[1]);
  if (!loaded.record) {
    fmt::print(stderr, "record_edit_tool: {}: {}\n", argv[1], loaded.error);
    return 1;
  }
  const std::map<std::string, std::string nvfresh::Record::*> fields = {
    {"compiler", &nvfresh::Record::compiler},
    {"object", &nvfresh::Record::object},
    {"source", &nvfresh::Record::source},
  };
  auto field = fields.find(argv[2]);
  if (field == fields.end()) {
    fmt::print(stderr, "record_edit_tool: no field {}\n", argv[2]);
    return 2;
  }
  loaded.record.value().*(field->second) = argv[3];
  if (field->first == "object") {
    loaded.record->output.path = argv[3];
  }
  nvfresh::save_record(argv[1], *loaded.record);
  return 0;
}

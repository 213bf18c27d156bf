#include "record/link_record.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("link records round-trip and reject tampering", "[link_record]")
{
  LinkRecord record;
  record.artifact = "/b/libprov.so";
  record.kind = ArtifactKind::shared_library;
  record.working_dir = "/b";
  record.start_ns = 1;
  record.end_ns = 2;
  record.output = {"/b/libprov.so", hash_bytes("so"), 2, 3, 4, 5};
  record.reads.push_back({"/b/a.o", hash_bytes("a"), 6, 7, 8, 9});
  std::string text = serialize_link_record(record);
  auto parsed = parse_link_record(text);
  REQUIRE(parsed);
  CHECK(*parsed == record);
  CHECK(parsed->read_of("/b/a.o") != nullptr);
  std::string tampered = text;
  tampered[tampered.find("a.o")] = 'x';
  std::string error;
  CHECK_FALSE(parse_link_record(tampered, &error));
  CHECK(error == "checksum mismatch");
  CHECK_FALSE(parse_link_record("nvfresh-link\t2\n"));
}

TEST_CASE("link records are stored per artifact", "[link_record]")
{
  test::TempDir dir;
  LinkRecord record;
  record.artifact = "/b/t";
  save_link_record(dir.path(), record);
  REQUIRE(load_link_record(dir.path(), "/b/t"));
  CHECK_FALSE(load_link_record(dir.path(), "/b/u"));
  CHECK(load_all_link_records(dir.path()).size() == 1);
}

#include "record_store.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

TEST_CASE("the record root is found from the build tree", "[record_store]")
{
  test::TempDir dir;
  dir.write("build/CMakeCache.txt", "");
  std::filesystem::create_directories(dir.path("build/sub/dir"));
  REQUIRE(find_record_root("", dir.path("build/sub/dir")) == dir.path("build/.nvfresh"));
  REQUIRE(find_record_root("", dir.path("build")) == dir.path("build/.nvfresh"));
  REQUIRE(find_record_root("/records", dir.path("build")) == "/records");
  REQUIRE(find_record_root("rel", dir.path("build")) == dir.path("build/rel"));
  REQUIRE(record_root_of_build_dir("", dir.path("build")) == dir.path("build/.nvfresh"));
}

TEST_CASE("record files are keyed by the canonical object path", "[record_store]")
{
  test::TempDir dir;
  std::filesystem::create_directories(dir.path("real/obj"));
  std::filesystem::create_directory_symlink(dir.path("real"), dir.path("link"));
  std::string via_link = canonical_object_path("obj/a.o", dir.path("link"));
  std::string via_real = canonical_object_path("obj/a.o", dir.path("real"));
  REQUIRE(via_link == via_real);
  std::string file = record_file_for("/state", via_real);
  REQUIRE(file.rfind("/state/records/a.o-", 0) == 0);
  REQUIRE(file.size() > std::string("/state/records/a.o-.rec").size());
  REQUIRE(record_file_for("/state", "/x/a.o") != record_file_for("/state", "/y/a.o"));
}

TEST_CASE("records are saved, listed, loaded and removed", "[record_store]")
{
  test::TempDir dir;
  Record record;
  record.object = "/build/a.o";
  std::string file = record_file_for(dir.path(".nvfresh"), record.object);
  save_record(file, record);
  REQUIRE(list_record_files(dir.path(".nvfresh")) == std::vector<std::string>{file});
  auto loaded = load_record(file);
  REQUIRE(loaded.record);
  REQUIRE(loaded.record->object == "/build/a.o");
  remove_record(file);
  REQUIRE(load_record(file).error == "missing");
  REQUIRE(list_record_files(dir.path("nowhere")).empty());
}

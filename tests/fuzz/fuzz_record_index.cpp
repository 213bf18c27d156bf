// libFuzzer target for the record index of lib/freshness/record_index_file.cpp: the one file a warm
// check or sync reads instead of a tree's records. The input is the index's body (after its magic);
// the target appends the checksum the reader verifies, so that the fuzzer reaches the parser instead
// of stopping at the checksum. Properties: reading never crashes or throws; every id an entry holds
// names a path, stamp or directory of the index; an index that reads back, written again with every
// entry kept, reads back with the same entries.
// Seeds: tests/fuzz/corpus/record_index: bodies written from the grammar (record_index_file.cpp): one and
// two records with inputs, a stamped and an unresolved probe directory, an absent probe, under /ci/job.
#include "freshness/record_index.hpp"
#include "fuzz_support.hpp"
#include "util/hasher.hpp"

#include <string>

namespace {

constexpr std::string_view k_magic = "nvfresh-record-index\n";
constexpr std::string_view k_build_dir = "/ci/job/build";

void check_ids(const nvfresh::RecordIndex& index, const nvfresh::IndexedRecord& entry)
{
  const auto valid = [&](std::uint32_t id) { return id < index.path_count(); };
  if (!valid(entry.file) || !valid(entry.object) || !valid(entry.source)) {
    nvfresh::fuzz::fail("an entry's paths are paths of the index");
  }
  for (std::uint32_t id : entry.inputs) {
    if (id >= index.stamp_count() || !valid(index.stamp(id).path)) {
      nvfresh::fuzz::fail("an entry's input stamps are stamps of the index");
    }
  }
  for (std::uint32_t id : entry.directories) {
    if (id >= index.directory_count() || !valid(index.directory(id).path)) {
      nvfresh::fuzz::fail("an entry's directories are directories of the index");
    }
  }
  for (std::uint32_t id : entry.absent) {
    if (!valid(id)) {
      nvfresh::fuzz::fail("an entry's absent probes are paths of the index");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  std::string bytes(k_magic);
  bytes.append(nvfresh::fuzz::as_text(data, size));
  const nvfresh::Digest checksum = nvfresh::hash_bytes(bytes);
  bytes.append(reinterpret_cast<const char*>(checksum.bytes.data()), checksum.bytes.size());
  const std::string file = dir.write("records.index", bytes);

  nvfresh::RecordIndex index = nvfresh::RecordIndex::read(file, std::string(k_build_dir));
  for (const auto& entry : index.records()) {
    check_ids(index, entry);
  }
  if (index.size() == 0) {
    return 0;
  }
  for (const auto& entry : index.records()) {
    index.keep(entry);
  }
  const std::string rewritten = dir.path() + "/records.index.again";
  index.write(rewritten, std::string(k_build_dir));
  const nvfresh::RecordIndex again =
    nvfresh::RecordIndex::read(rewritten, std::string(k_build_dir));
  if (again.size() != index.size()) {
    nvfresh::fuzz::fail("an index written with every entry kept reads back whole");
  }
  for (size_t i = 0; i < index.size(); ++i) {
    const auto& a = index.records()[i];
    const auto& b = again.records()[i];
    if (index.path(a.file) != again.path(b.file) || index.path(a.object) != again.path(b.object) ||
        a.inputs.size() != b.inputs.size() || a.directories.size() != b.directories.size() ||
        a.absent.size() != b.absent.size() || a.output_hash != b.output_hash) {
      nvfresh::fuzz::fail("an index written with every entry kept reads back the same entries");
    }
  }
  return 0;
}

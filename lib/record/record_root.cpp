#include "record/record_root.hpp"

#include "record/record_container.hpp"
#include "record/record_image.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <fmt/format.h>

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_tree_markers[] = {"CMakeCache.txt", "build.ninja", ".nvfresh"};

// A big record's text is written as up to this many zstd frames, which a skip decompresses on as
// many threads (one frame of a CUTLASS TU's record: 1.8 M instructions, 0.6 ms on the GPU
// machine, before the parse could start).
constexpr std::size_t k_record_frames = 4;

bool is_build_tree_top(const fs::path& dir)
{
  return std::any_of(std::begin(k_tree_markers), std::end(k_tree_markers),
                     [&](const char* name) { return stat_file((dir / name).string()).exists; });
}

// Why a record file that try_read_file refused cannot be read ("missing" when there is none).
std::string why_unreadable(const std::string& file, int error)
{
  const FileStat link = lstat_file(file);
  const FileStat target = stat_file(file);
  if (!link.exists) {
    return "missing";
  }
  if (!target.exists) {
    return "a symbolic link to nothing";
  }
  if (!target.is_regular) {
    return "not a regular file";
  }
  return fmt::format("cannot be read: {}", std::strerror(error));
}

}  // namespace

std::optional<std::string> find_build_tree(const std::string& dir)
{
  for (fs::path at = dir; !at.empty(); at = at.parent_path()) {
    if (is_build_tree_top(at)) {
      return at.string();
    }
    if (at == at.root_path()) {
      break;
    }
  }
  return std::nullopt;
}

std::optional<std::string> existing_record_root(const std::string& configured_dir,
                                                const std::string& working_dir)
{
  if (!configured_dir.empty()) {
    return absolute_path(configured_dir, working_dir);
  }
  if (auto tree = find_build_tree(working_dir)) {
    return (fs::path(*tree) / ".nvfresh").string();
  }
  return std::nullopt;
}

std::string find_record_root(const std::string& configured_dir, const std::string& working_dir)
{
  return existing_record_root(configured_dir, working_dir)
    .value_or((fs::path(working_dir) / ".nvfresh").string());
}

std::string records_dir(const std::string& record_root)
{
  return record_root + "/records";
}

std::string links_dir(const std::string& record_root)
{
  return record_root + "/links";
}

std::string hash_cache_file(const std::string& record_root)
{
  return record_root + "/hash-cache";
}

std::string record_root_of_build_dir(const std::string& configured_dir,
                                     const std::string& build_dir)
{
  std::string cwd = current_directory();
  if (!configured_dir.empty()) {
    return absolute_path(configured_dir, cwd);
  }
  return absolute_path(build_dir, cwd) + "/.nvfresh";
}

std::string canonical_object_path(const std::string& object, const std::string& working_dir)
{
  fs::path absolute = absolute_path(object, working_dir);
  std::error_code error;
  fs::path dir = fs::weakly_canonical(absolute.parent_path(), error);
  if (error) {
    return absolute.string();
  }
  return (dir / absolute.filename()).string();
}

std::string record_file_for(const std::string& record_root, const std::string& canonical_object)
{
  std::string name = fs::path(canonical_object).filename().string();
  std::string key = hash_bytes(canonical_object).to_hex().substr(0, 16);
  return records_dir(record_root) + "/" + name + "-" + key + ".rec";
}

namespace {

// The record from the image its file holds (record_image.hpp), with the note applied: false when
// the file has no usable image (its text is then read).
bool load_record_image(LoadedRecord& loaded, std::string& bytes, bool keep_stored,
                       size_t parse_threads)
{
  const auto image_bytes = record_container_image(bytes);
  if (!image_bytes) {
    return false;
  }
  std::optional<RecordImage> image = parse_record_image(*image_bytes, parse_threads);
  if (!image) {
    return false;
  }
  loaded.record = std::move(image->record);
  if (auto note = record_container_note(bytes)) {
    if (auto parsed = parse_record_note(*note)) {
      apply_record_note(*loaded.record, image->text_checksum, *parsed);
    }
  }
  if (keep_stored) {
    loaded.text_checksum = std::move(image->text_checksum);
    loaded.stored = std::move(bytes);
  }
  return true;
}

}  // namespace

LoadedRecord load_record(const std::string& record_file, bool keep_stored, size_t parse_threads)
{
  LoadedRecord loaded;
  loaded.file = record_file;
  std::optional<std::string> text;
  std::optional<std::string> note;
  try {
    auto bytes =
      try_read_file(record_file, k_default_read_limit, keep_stored ? &loaded.stored_from : nullptr);
    if (bytes && load_record_image(loaded, *bytes, keep_stored, parse_threads)) {
      return loaded;
    }
    if (bytes) {
      note = record_container_note(*bytes);
      if (keep_stored) {
        loaded.stored = *bytes;
      }
      text =
        record_container_text(std::move(*bytes), record_file, k_default_max_text, parse_threads);
    }
  } catch (const CompressedFileError& error) {
    loaded.error = error.what();
  }
  if (!text && loaded.error.empty()) {
    loaded.error = why_unreadable(record_file, errno);
  }
  if (text) {
    loaded.record = parse_record(*text, &loaded.error, parse_threads);
  }
  const std::string checksum = loaded.record ? record_text_checksum(*text) : std::string();
  if (loaded.record && keep_stored && has_record_container_text(loaded.stored)) {
    loaded.text_checksum = checksum;
  }
  if (loaded.record && note) {
    if (auto parsed = parse_record_note(*note)) {
      apply_record_note(*loaded.record, checksum, *parsed);
    }
  }
  if (!loaded.record) {
    auto head = read_record_container_head(record_file);
    loaded.head = head ? parse_record_head(*head) : std::nullopt;
  }
  return loaded;
}

void save_record(const std::string& record_file, const Record& record, Compression effort)
{
  const std::string text = serialize_record(record);
  write_record_file(record_file, text, serialize_record_head({record.object, record.source}),
                    serialize_record_image(record, record_text_checksum(text)), effort);
}

void write_record_file(const std::string& file, std::string_view text, std::string_view head,
                       std::string_view image, Compression effort)
{
  try {
    make_directories(fs::path(file).parent_path().string());
    write_record_container(file, text, head, k_record_frames, image, effort);
  } catch (const FileWriteError& error) {
    throw error.with_advice("free space there, or point NVFRESH_RECORD_DIR at a disk with room; "
                            "see nvfresh space");
  }
}

void save_record_note(const LoadedRecord& loaded, const FileFingerprint& output,
                      const std::vector<HistoryEntry>& history)
{
  if (!loaded.record) {
    throw std::runtime_error(fmt::format("no record in {} to add a note to", loaded.file));
  }
  if (loaded.stored.empty() || loaded.text_checksum.empty()) {
    Record record = *loaded.record;
    record.output = output;
    record.history = history;
    save_record(loaded.file, record);
    return;
  }
  write_record_container_note(loaded.file, loaded.stored,
                              serialize_record_note({loaded.text_checksum, output, history}),
                              loaded.stored_from);
}

void remove_record(const std::string& record_file)
{
  ::unlink(record_file.c_str());
}

std::vector<std::string> list_record_files(const std::string& record_root)
{
  // readdir, not std::filesystem: a path object per entry was a fifth of a warm check of 10k.
  // The names are sorted before the directory is put in front of them: paths that share a long
  // prefix cost the sort a long comparison each.
  std::vector<std::string> files;
  const std::string dir = records_dir(record_root);
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) {
    return files;
  }
  while (const dirent* entry = ::readdir(stream)) {
    const std::string_view name(entry->d_name);
    if (name.size() > 4 && name.ends_with(".rec")) {
      files.emplace_back(name);
    }
  }
  ::closedir(stream);
  std::sort(files.begin(), files.end());
  for (auto& file : files) {
    file.insert(0, dir + "/");
  }
  return files;
}

}  // namespace nvfresh

// Where records live and how they are loaded and saved.
//
// The record root is NVFRESH_RECORD_DIR when set, else "<build tree>/.nvfresh", where the build
// tree is the nearest directory at or above the working directory that holds CMakeCache.txt,
// build.ninja or a .nvfresh directory, else the working directory itself. It holds:
//   records/<basename>-<hash>.rec   one record per object, keyed by the object's absolute path
//                                   (record_format.hpp has the grammar)
//   links/<basename>-<hash>.link    one link record per linked artifact (link_record.cpp)
//   hash-cache                      stat-keyed content hashes of large files (file_hasher.cpp)
//   events.log, events.log.1        the outcome of every compile (events.cpp)
//   build.lock                      held (flock) by every nvfresh process of the tree while it runs
//                                   (space/build_lock.hpp)
// The CMake module keeps its own state in "<build dir>/.nvfresh" (stamps.map, stamps/: see
// commands/sync.cpp and cmake/nvfresh.cmake), also when NVFRESH_RECORD_DIR points elsewhere.
#pragma once

#include "record/record.hpp"
#include "util/compressed_file.hpp"
#include "util/file_io.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

std::string find_record_root(const std::string& configured_dir, const std::string& working_dir);

// The record root of the build tree the working directory is in, or NVFRESH_RECORD_DIR; nullopt
// when neither names one (find_record_root would fall back to the working directory). Where
// nvfresh logs a command it passes through: never a new .nvfresh in a directory that is no build
// tree.
std::optional<std::string> existing_record_root(const std::string& configured_dir,
                                                const std::string& working_dir);

// The nearest directory at or above `dir` that is a build tree (CMakeCache.txt, build.ninja or
// .nvfresh in it), or nullopt.
std::optional<std::string> find_build_tree(const std::string& dir);

std::string records_dir(const std::string& record_root);
std::string links_dir(const std::string& record_root);
std::string hash_cache_file(const std::string& record_root);

// The record root that belongs to a build directory given on nvfresh's command line.
std::string record_root_of_build_dir(const std::string& configured_dir,
                                     const std::string& build_dir);

// The object's absolute path with symlinks in its directory resolved (the record's key).
std::string canonical_object_path(const std::string& object, const std::string& working_dir);

std::string record_file_for(const std::string& record_root, const std::string& canonical_object);

struct LoadedRecord {
  std::string file;
  std::string stored;         // the file's bytes, when load_record was asked to keep them
  std::string text_checksum;  // then, for a compressed record: the checksum its text ends with
  FileStat stored_from;       // then, the file they were read from (its inode: save_record_note)
  std::optional<Record> record;
  std::string error;  // why record is empty: "missing", or what parse_record said
  std::optional<RecordHead>
    head;  // when record is empty: the object it named, if its head is intact
};

// The record with its note applied (record.hpp, RecordNote): from the file's image when it has an
// intact one made with its text (record_image.hpp), else parsed from the text. keep_stored: also
// keep the file's bytes in LoadedRecord::stored. parse_threads: as parse_record's threads.
LoadedRecord load_record(const std::string& record_file, bool keep_stored = false,
                         size_t parse_threads = 1);
// Atomic; throws. effort: Compression::faster where the write's time counts more than the file's
// size (a record written on a cache hit).
void save_record(const std::string& record_file, const Record& record,
                 Compression effort = Compression::smaller);

// What a skip changes (the output's stamp, the history) saved as the note of the loaded record's
// file: the record's text is not written again, nothing else can change; the note alone is written
// over the old one while the file is the one loaded (write_record_container_note). Without kept
// bytes of a compressed record, the record is saved whole (atomically) with them. Throws.
void save_record_note(const LoadedRecord& loaded, const FileFingerprint& output,
                      const std::vector<HistoryEntry>& history);
void remove_record(const std::string& record_file);  // no error if absent

// Writes one of nvfresh's files under a record root (a record, a link record), compressed and
// atomically with its head and image (write_record_container), creating its directory. Throws
// FileWriteError; on a full disk its message names the file system and says what to do (free space
// there, or NVFRESH_RECORD_DIR).
void write_record_file(const std::string& file, std::string_view text, std::string_view head = {},
                       std::string_view image = {}, Compression effort = Compression::smaller);

std::vector<std::string> list_record_files(const std::string& record_root);

}  // namespace nvfresh

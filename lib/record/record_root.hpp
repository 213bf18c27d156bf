// Where records live and how they are loaded and saved.
//
// The record root is NVFRESH_RECORD_DIR when set, else "<build tree>/.nvfresh", where the build
// tree is the nearest directory at or above the working directory that holds CMakeCache.txt,
// build.ninja or a .nvfresh directory, else the working directory itself. Records are
// "<root>/records/<basename>-<hash of the object's absolute path>.rec".
#pragma once

#include "record/record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

std::string find_record_root(const std::string& configured_dir, const std::string& working_dir);

// The record root that belongs to a build directory given on nvfresh's command line.
std::string record_root_of_build_dir(const std::string& configured_dir,
                                     const std::string& build_dir);

// The object's absolute path with symlinks in its directory resolved (the record's key).
std::string canonical_object_path(const std::string& object, const std::string& working_dir);

std::string record_file_for(const std::string& record_root, const std::string& canonical_object);

struct LoadedRecord {
  std::string file;
  std::optional<Record> record;
  std::string error;  // why record is empty: "missing", or what parse_record said
};

LoadedRecord load_record(const std::string& record_file);
void save_record(const std::string& record_file, const Record& record);  // atomic; throws
void remove_record(const std::string& record_file);                      // no error if absent

std::vector<std::string> list_record_files(const std::string& record_root);

}  // namespace nvfresh

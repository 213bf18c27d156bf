// nvfresh's settings: NVFRESH_* environment variables, then an optional config file
// (NVFRESH_CONFIG, else $XDG_CONFIG_HOME/nvfresh/nvfresh.conf, else ~/.config/nvfresh/nvfresh.conf)
// with "key = value" lines and '#' comments. The environment wins. Defaults need no setting.
//
//   variable               key          meaning
//   NVFRESH_DISABLE        disable      1/true/yes: pure passthrough to the compiler
//   NVFRESH_RECORD_DIR     record_dir   where records go (default: <build tree>/.nvfresh)
//   NVFRESH_LOG_FILE       log_file     append a debug log here
//   NVFRESH_TRACE_LIB      trace_lib    the LD_PRELOAD tracer (default: found next to nvfresh)
//   NVFRESH_SPACE_FLOOR    space_floor  sync warns when the build tree's file system has less free
//                                       (default "2GiB,2%"; grammar in space/full_disk.cpp)
#pragma once

#include "util/process.hpp"

#include <string>

namespace nvfresh {

struct Config {
  bool disabled = false;
  std::string record_dir;
  std::string log_file;
  std::string trace_lib;
  std::string space_floor;  // "" means the default
  std::string config_file;  // the file that was read, if any
};

Config load_config(const Environment& env);

bool is_true(const std::string& value);

}  // namespace nvfresh

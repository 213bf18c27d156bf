// Stats of many files at once, each directory walked once. stat("/a/b/c/d.h") makes the kernel look
// up every component of the path, and for the thousand inputs of a CUTLASS TU, or the 12k files a
// check of a 10k-object tree stats, those lookups (__d_lookup_rcu, permission checks) were most of
// the stats' time. Here a directory that holds several of the files is opened once (O_PATH) and
// its files are stat'ed by name relative to it: the same answers stat() gives, one component each.
#pragma once

#include "util/file_io.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace nvfresh {

struct BatchStatLimits {
  std::size_t per_thread = 256;       // paths per thread (util/parallel)
  std::size_t max_threads = 8;        // past this the kernel's path walks contend
  std::size_t max_directories = 256;  // open at once; files of the others are stat'ed by path
};

// stat_file(*paths[i]) for every i, in that order; follows symlinks; exists=false when absent.
std::vector<FileStat> stat_files(const std::vector<const std::string*>& paths,
                                 const BatchStatLimits& limits = {});

}  // namespace nvfresh

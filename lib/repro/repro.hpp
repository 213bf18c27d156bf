// The parts of `nvfresh repro` that need no process: which perturbations each run gets, the nvcc
// command line of one run (its output redirected into the run's private directory), and grouping
// the runs into variants by their normalized per-component digests.
//
// Perturbations (nvcc and everything it starts inherit them):
//   run 0             the control: ASLR off (setarch -R), no heap or environment changes
//   runs 1..N-1       ASLR on, one heap variant from a table (MALLOC_PERTURB_, MALLOC_ARENA_MAX,
//                     GLIBC_TUNABLES=glibc.malloc.{mmap_threshold,top_pad,trim_threshold,
//                     tcache_count,arena_test}), values drawn per run, and an environment padding
//                     variable of random length (moves the initial stack and environ)
//   every run         a private TMPDIR and its own output path
#pragma once

#include "nvcc/command_line.hpp"
#include "util/hasher.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace nvfresh {

struct ObjectDigests;

inline constexpr std::string_view k_repro_pad_variable = "NVFRESH_REPRO_PAD";
// The seed lib/noise/nvfresh_heap_noise.c reads.
inline constexpr std::string_view k_heap_noise_variable = "NVFRESH_HEAP_NOISE";

struct Perturbation {
  bool aslr_off = false;
  std::vector<std::pair<std::string, std::string>> heap_env;  // variables set for this run
  std::size_t env_pad_bytes = 0;                              // length of NVFRESH_REPRO_PAD
  std::uint64_t heap_noise_seed = 0;  // NVFRESH_HEAP_NOISE for libnvfresh_heap_noise.so; 0: none

  std::string describe() const;  // "control: ASLR off" / "MALLOC_PERTURB_=77, env +1234 B"
  // `base` with the heap variables, the padding and TMPDIR/TMP/TEMP set to `tmp_dir`; with the
  // heap-noise library preloaded (in front of any LD_PRELOAD) when there is a seed and a library.
  Environment apply(const Environment& base, const std::string& tmp_dir,
                    const std::string& heap_noise_library) const;
};

// Run 0 is the ASLR-off control; the others cycle through the heap table with values from `seed`.
std::vector<Perturbation> plan_perturbations(std::size_t runs, std::uint64_t seed);

// A single-source compile that repro can run many times.
struct ReproTarget {
  std::string compiler;                // argv[0]: "nvcc" or a path
  std::vector<std::string> base_args;  // the arguments without -o and -MF (and their values)
  std::string output_name;             // file name of the output (the user's, or nvcc's default)
  std::string source;                  // the source file, absolute
  bool explicit_depfile = false;       // the user gave -MF: each run gets its own
};

// `command` is "nvcc <args...>". Returns the target, or a message saying why repro cannot run it.
std::variant<ReproTarget, std::string> prepare_repro_target(const std::vector<std::string>& command,
                                                            const Environment& env,
                                                            const std::string& working_dir);

// The full argv of one run, writing its output to `output_path` (and depfile to `depfile_path`).
std::vector<std::string> run_command(const ReproTarget& target, const std::string& output_path,
                                     const std::string& depfile_path);

// Each run's private TMPDIR has a path of the same length ("<scratch>/run-00003/tmp"); nvcc writes it
// into host debug info (the tmpxft .cudafe1.cpp path). Before digesting, it is rewritten in place to
// `k_canonical_run_dir` of the same length, so that only the compiler's own variation remains.
std::string canonical_tmp_dir(const std::string& tmp_dir);  // "run-00003" -> "run-XXXXX"
// Replaces every occurrence of `from` by `to` (same length required); returns how many.
std::size_t replace_same_length(std::string& bytes, std::string_view from, std::string_view to);

using ComponentDigestList = std::vector<std::pair<std::string, Digest>>;  // in the artifact's order

ComponentDigestList component_digest_list(const ObjectDigests& digests);

struct RunDigests {
  std::size_t run = 0;
  ComponentDigestList components;
};

struct Variant {
  ComponentDigestList components;
  std::vector<std::size_t> runs;  // ascending
};

// Runs with the same full component list (keys and digests, in order) form one variant. Variants are
// ordered by their first run; runs inside a variant ascending.
std::vector<Variant> group_variants(const std::vector<RunDigests>& runs);

// Keys of the components whose digests differ between two variants (or exist in only one).
std::vector<std::string> differing_components(const Variant& a, const Variant& b);

}  // namespace nvfresh

// A step entry: one run of cicc or ptxas that exited 0, everything a later run of the same step
// needs to stand in for it: the files it wrote, what it printed, and the files it read and looked
// up (which a hit sends on the trace channel, so that the compile's record stays complete). Paths
// and contents hold placeholders where nvcc's temporary names were (step_key.hpp). Grammar at the
// top of step_entry.cpp.
#pragma once

#include "util/hasher.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct StepRead {
  std::string path;  // absolute: a file outside nvcc's temporary files (libdevice, ...)
  Digest hash;       // its content when the step ran
  bool operator==(const StepRead&) const = default;
};

struct StepOutput {
  std::string path;     // absolute, with placeholders
  std::string content;  // with placeholders
  bool operator==(const StepOutput&) const = default;
};

struct StepEntry {
  Digest key;               // the key it was stored under: read under another one, it is a miss
  std::string tool;         // the tool's path (for the trace: the process a hit stands for)
  std::string pass;         // the tracer's pass tag ("compute_80", "sm_90")
  std::int64_t run_ns = 0;  // how long the tool ran: what a hit saves
  std::vector<StepRead> reads;
  std::vector<std::string> missing;  // lookups that found nothing
  std::vector<StepOutput> outputs;
  std::string out;  // stdout, byte for byte
  std::string err;  // stderr
  // Where the code lines of its preprocessed input sat (cache/line_layout.hpp, serialized): a cicc
  // step keyed on its input's code alone; "" for a step keyed on its whole input.
  std::string input_lines;
  bool operator==(const StepEntry&) const = default;
};

constexpr int k_step_entry_format_version = 2;

// The version of step keys (step/step_key.hpp hashes it first): changed with every change of what
// a step key holds. The salt of the remote's step Actions (cache/remote_cache.hpp, step_action),
// so that a remote never serves a step stored under another key scheme; the object cache's keys
// have their own (k_cache_key_version, cache/compile_identity.hpp).
inline constexpr std::string_view k_step_key_version = "nvfresh-step-2";

// `text` with the time ptxas -v says it took ("Compile time = 22.905 ms") left out: it differs in
// every run of the same step.
std::string without_run_times(std::string_view text);

// What a run gave that the stored entry does not (the outputs' paths and bytes, stdout, stderr:
// what a hit writes), in words ("output tmpxft_@2@ differs: 812 bytes, stored 830"); "" when a hit
// would have written exactly what the run wrote, apart from the time ptxas -v says it took.
std::string step_output_difference(const StepEntry& stored, const StepEntry& run);

std::string serialize_step_entry(const StepEntry& entry);
// nullopt (with the reason) when the text is damaged, truncated or of another version.
std::optional<StepEntry> parse_step_entry(std::string_view text, std::string* error = nullptr);

}  // namespace nvfresh

// What `nvfresh repro` knows about its runs once they have run: each run with what it produced (one
// observation, or one per sample), the variants they group into, and what was kept of each variant.
// repro/run_engine.cpp makes and runs them; repro/repro_report.cpp reports them.
#pragma once

#include "digest/compare.hpp"
#include "repro/repro.hpp"
#include "repro/run_artifacts.hpp"
#include "util/process.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// One run's artifacts, or one sample's (a run that wrote nvfresh-sample-<n>/ directories).
struct Observation {
  std::optional<std::size_t> sample;
  std::vector<ArtifactDigest> artifacts;
  ComponentDigestList components;  // what variants are grouped by
  std::optional<std::size_t> variant;
};

struct RunRecord {
  std::size_t index = 0;
  Perturbation perturbation;
  std::vector<std::string> argv;
  Environment env;
  std::string run_dir;      // <scratch>/run-00003: the run's private directories are under it
  std::string working_dir;  // where the command runs; empty: nvfresh's own working directory
  std::string tmp_dir;
  std::string output;  // nvcc mode: the compile's output file
  std::string stdout_path;
  std::string stderr_path;
  ProcessResult result;
  std::string
    error;  // why the run failed to start, or its artifacts could not be found or digested
  double seconds = 0;
  std::vector<Observation> observations;

  bool failed() const { return !error.empty() || !result.succeeded(); }
};

// Where one observation is: its run, and its sample when the run wrote samples.
struct ObservationRef {
  std::size_t run = 0;
  std::optional<std::size_t> sample;
};

// One artifact of a variant's first observation, as kept in --out, and compared with variant 1's.
struct KeptArtifact {
  std::string path;  // relative, as the pattern matched it
  std::string kept;  // the copy in --out
  Verdict verdict = Verdict::same;
  std::optional<Comparison> versus_first;  // both CUDA artifacts
  std::vector<std::string> file_diff;      // other files that differ
};

struct KeptVariant {
  std::string directory;  // --out/variant-<k>
  std::string diff;       // --out/variant-<k>.diff; empty for variant 1
  std::vector<KeptArtifact> artifacts;
  std::vector<std::string> differing;  // component keys that differ from variant 1
};

}  // namespace nvfresh

#include "doctor/tracer_probe.hpp"

#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"
#include "util/scratch_dir.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_probe_source =
  "__global__ void nvfresh_doctor_probe(int* p) { *p = 1; }\n";
constexpr size_t k_error_excerpt = 300;

// The first lines of what the probe printed, on one line.
std::string excerpt(const std::string& file)
{
  std::string text = try_read_file(file).value_or(std::string());
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > k_error_excerpt) {
    text = fmt::format("{}…", text.substr(0, k_error_excerpt));
  }
  return text.empty() ? "(nothing printed)" : text;
}

SetupCheck compile_and_judge(const TracerProbe& probe, const std::string& dir)
{
  write_file_atomically(dir + "/probe.cu", k_probe_source);
  std::vector<std::string> argv = {probe.nvfresh, probe.nvcc};
  if (!probe.host_compiler.empty()) {
    argv.push_back("-ccbin=" + probe.host_compiler);
  }
  for (const char* word : {"-c", "probe.cu", "-o", "probe.o", "-MD", "-MF", "probe.o.d"}) {
    argv.emplace_back(word);
  }
  Environment env = probe.env;
  env["NVFRESH_RECORD_DIR"] = dir + "/records";
  env.insert_or_assign("NVFRESH_CACHE", std::string(1, '0'));  // "0": GCC 12 -Wrestrict
  env.erase("NVFRESH_DISABLE");
  env.erase("NVFRESH_ACTIVE");
  const std::string toolchain =
    fmt::format("{} and host compiler {}", probe.nvcc,
                probe.host_compiler.empty() ? "gcc (nvcc's default)" : probe.host_compiler);
  ProcessResult result = run_redirected(argv, env, dir + "/out", dir + "/err", dir);
  if (!result.succeeded()) {
    return failed("tracer",
                  fmt::format("a one-line compile through nvfresh ({}) failed (exit {}): {}",
                              toolchain, result.exit_code, excerpt(dir + "/err")),
                  "make sure this nvcc and host compiler build a trivial .cu file; the build's "
                  "compiles will fail the same way");
  }
  LoadedRecord loaded =
    load_record(record_file_for(dir + "/records", canonical_object_path(dir + "/probe.o", dir)));
  if (!loaded.record) {
    return failed("tracer",
                  fmt::format("a one-line compile through nvfresh ({}) left no record ({}): {}",
                              toolchain, loaded.error, excerpt(dir + "/err")),
                  "run it again with NVFRESH_LOG_FILE=/tmp/nvfresh.log and read why");
  }
  return judge_probe_record(*loaded.record, toolchain);
}

}  // namespace

SetupCheck judge_probe_record(const Record& record, const std::string& toolchain)
{
  const std::string fix_toolchain =
    "use a dynamically linked host compiler that keeps LD_PRELOAD (-ccbin or "
    "CMAKE_CUDA_HOST_COMPILER; a wrapper script must pass the environment on unchanged); until "
    "then, a new header that shadows one this compiler included does not rebuild";
  if (!record.inputs_from_trace) {
    return failed("tracer",
                  fmt::format("the tracer saw nothing of a compile with {}: only nvcc's depfile "
                              "named its inputs",
                              toolchain),
                  "check that libnvfresh_trace.so is next to nvfresh or set NVFRESH_TRACE_LIB; " +
                    fix_toolchain);
  }
  std::vector<std::string> missed;
  std::set<std::string> passes;
  size_t read = 0;
  for (const auto& input : record.inputs) {
    if (input.role == InputRole::tool) {
      continue;
    }
    ++read;
    passes.insert(input.passes.begin(), input.passes.end());
    if (input.passes.empty()) {
      missed.push_back(input.file.path);
    }
  }
  // Name a header first: the source is the probe's own, gone once doctor ends.
  std::stable_partition(missed.begin(), missed.end(),
                        [&](const std::string& path) { return path != record.source; });
  if (!missed.empty()) {
    return failed("tracer",
                  fmt::format("the tracer missed {} of {} files a compile with {} read (first: "
                              "{}): a program of the compile ran without it (a statically linked "
                              "host compiler, or a wrapper that clears LD_PRELOAD), so what it "
                              "looked up and did not find is not recorded",
                              missed.size(), read, toolchain, missed.front()),
                  fix_toolchain);
  }
  return passed("tracer", fmt::format("a traced compile with {} saw all {} files it read (passes: "
                                      "{})",
                                      toolchain, read, fmt::join(passes, ", ")));
}

SetupCheck run_tracer_probe(const TracerProbe& probe)
{
  std::string dir = make_scratch_dir(probe.scratch_parent.empty() ? "/tmp" : probe.scratch_parent,
                                     "nvfresh-doctor.");
  SetupCheck check;
  try {
    check = compile_and_judge(probe, dir);
  } catch (const std::exception& error) {
    check = failed("tracer", fmt::format("the probe compile could not run: {}", error.what()),
                   "make sure TMPDIR is writable and nvcc can be started");
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return check;
}

}  // namespace nvfresh

#include "repro/private_caches.hpp"

#include <fmt/format.h>

namespace nvfresh {

const std::vector<CompileCache>& compile_caches()
{
  static const std::vector<CompileCache> table = {
    {"CUTE_DSL_CACHE_DIR", "CuTe DSL",
     "compiled kernels (default $TMPDIR/<user>/cutlass_python_cache)"},
    {"TRITON_CACHE_DIR", "Triton",
     "compiled kernels (default ~/.triton/cache, or under $TRITON_HOME)"},
    {"TORCHINDUCTOR_CACHE_DIR", "PyTorch Inductor",
     "FX graphs, AOTAutograd, autotuning and its Triton kernels (default "
     "/tmp/torchinductor_<user>)"},
    {"TORCH_EXTENSIONS_DIR", "torch.utils.cpp_extension",
     "extensions built by load()/load_inline() (default ~/.cache/torch_extensions)"},
    {"CUDA_CACHE_PATH", "CUDA driver",
     "PTX JIT-compiled at load time (default ~/.nv/ComputeCache)"},
    {"CUPY_CACHE_DIR", "CuPy", "compiled kernels (default ~/.cupy/kernel_cache)"},
    {"NUMBA_CACHE_DIR", "Numba", "cache=True functions (default __pycache__ beside the source)"},
    {"JAX_COMPILATION_CACHE_DIR", "JAX", "the persistent compilation cache (off unless set)"},
    {"WARP_CACHE_PATH", "NVIDIA Warp", "compiled kernels (default the user cache directory)"},
    {"FLASHINFER_WORKSPACE_BASE", "FlashInfer",
     "the parent of its JIT cache .cache/flashinfer (default $HOME)"},
    {"CCACHE_DIR", "ccache", "compiled objects (default ~/.cache/ccache)"},
    {"SCCACHE_DIR", "sccache",
     "compiled objects of its local disk cache (default ~/.cache/sccache)"},
  };
  return table;
}

std::vector<std::pair<std::string, std::string>> private_cache_directories(
  const std::string& cache_root)
{
  std::vector<std::pair<std::string, std::string>> directories;
  for (const auto& cache : compile_caches()) {
    directories.emplace_back(std::string(cache.variable),
                             fmt::format("{}/{}", cache_root, cache.variable));
  }
  return directories;
}

std::vector<std::string> inherited_cache_warnings(const Environment& env)
{
  std::vector<std::string> warnings;
  for (const auto& cache : compile_caches()) {
    const auto found = env.find(std::string(cache.variable));
    if (found == env.end()) {
      continue;
    }
    warnings.push_back(
      fmt::format("warning: {}={} ({} cache) is set here; each run uses its own empty directory "
                  "instead, since a shared cache would hand later runs the first run's result",
                  cache.variable, found->second, cache.tool));
  }
  return warnings;
}

}  // namespace nvfresh

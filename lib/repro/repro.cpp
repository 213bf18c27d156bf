#include "repro/repro.hpp"

#include "digest/object_digest.hpp"
#include "nvcc/nvcc_options.hpp"
#include "nvcc/output_names.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

namespace nvfresh {

namespace {

using Rng = std::mt19937_64;

std::uint64_t draw(Rng& rng, std::uint64_t low, std::uint64_t high)
{
  return std::uniform_int_distribution<std::uint64_t>(low, high)(rng);
}

using EnvList = std::vector<std::pair<std::string, std::string>>;

// One heap perturbation: the variables it sets, with values drawn per run.
struct HeapVariant {
  EnvList (*make)(Rng& rng);
};

EnvList malloc_perturb(Rng& rng)
{
  return {{"MALLOC_PERTURB_", std::to_string(draw(rng, 1, 255))}};
}

EnvList arena_max(Rng& rng)
{
  return {{"MALLOC_ARENA_MAX", std::to_string(1U << draw(rng, 0, 3))}};
}

EnvList mmap_threshold(Rng& rng)
{
  return {
    {"GLIBC_TUNABLES", fmt::format("glibc.malloc.mmap_threshold={}", draw(rng, 4096, 4 << 20))}};
}

EnvList top_pad(Rng& rng)
{
  return {{"GLIBC_TUNABLES", fmt::format("glibc.malloc.top_pad={}", draw(rng, 0, 64 << 20))}};
}

EnvList no_tcache(Rng& rng)
{
  return {{"GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"},
          {"MALLOC_PERTURB_", std::to_string(draw(rng, 1, 255))}};
}

EnvList trim_and_arenas(Rng& rng)
{
  return {{"GLIBC_TUNABLES", fmt::format("glibc.malloc.trim_threshold={}:glibc.malloc.arena_test=1",
                                         draw(rng, 0, 1 << 20))}};
}

constexpr std::array k_heap_variants{HeapVariant{malloc_perturb}, HeapVariant{mmap_threshold},
                                     HeapVariant{arena_max},      HeapVariant{top_pad},
                                     HeapVariant{no_tcache},      HeapVariant{trim_and_arenas}};

constexpr std::size_t k_max_env_pad = std::size_t{32} * 1024;

// nvcc's default output name per compile mode (source stem + extension, in the working directory).
// The compile modes whose output the digests read (lib/digest/object_digest.hpp).
constexpr CompileMode k_digestible_modes[] = {CompileMode::object, CompileMode::relocatable,
                                              CompileMode::ptx, CompileMode::cubin,
                                              CompileMode::fatbin};

bool digestible(CompileMode mode)
{
  return std::find(std::begin(k_digestible_modes), std::end(k_digestible_modes), mode) !=
         std::end(k_digestible_modes);
}

bool is_redirected_role(OptionRole role)
{
  return role == OptionRole::output || role == OptionRole::depfile_path;
}

// The arguments without -o / -MF and their values (as any spelling: "-o x", "-o=x", "--output-file x").
std::vector<std::string> without_output_options(const std::vector<std::string>& args)
{
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto match = match_nvcc_option(args[i]);
    if (!match || !is_redirected_role(match->option->role)) {
      kept.push_back(args[i]);
      continue;
    }
    if (!match->value) {
      ++i;  // the value is the next word
    }
  }
  return kept;
}

}  // namespace

std::string Perturbation::describe() const
{
  std::vector<std::string> parts;
  if (aslr_off) {
    parts.emplace_back("control: ASLR off");
  }
  for (const auto& [name, value] : heap_env) {
    parts.push_back(fmt::format("{}={}", name, value));
  }
  if (env_pad_bytes > 0) {
    parts.push_back(fmt::format("env +{} B", env_pad_bytes));
  }
  if (heap_noise_seed != 0) {
    parts.push_back(fmt::format("heap noise {}", heap_noise_seed));
  }
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", "));
}

Environment Perturbation::apply(const Environment& base, const std::string& tmp_dir,
                                const std::string& heap_noise_library) const
{
  Environment env = base;
  if (heap_noise_seed != 0 && !heap_noise_library.empty()) {
    env[std::string(k_heap_noise_variable)] = std::to_string(heap_noise_seed);
    auto preload = base.find("LD_PRELOAD");
    env["LD_PRELOAD"] = preload == base.end() || preload->second.empty()
                          ? heap_noise_library
                          : heap_noise_library + ":" + preload->second;
  }
  for (const auto& [name, value] : heap_env) {
    env[name] = value;
  }
  if (env_pad_bytes > 0) {
    env[std::string(k_repro_pad_variable)] = std::string(env_pad_bytes, 'x');
  }
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) {
    env[name] = tmp_dir;
  }
  return env;
}

std::vector<Perturbation> plan_perturbations(std::size_t runs, std::uint64_t seed)
{
  Rng rng(seed);
  std::vector<Perturbation> plan;
  for (std::size_t i = 0; i < runs; ++i) {
    Perturbation perturbation;
    if (i == 0) {
      perturbation.aslr_off = true;
    } else {
      perturbation.heap_env = k_heap_variants[(i - 1) % k_heap_variants.size()].make(rng);
      perturbation.env_pad_bytes = draw(rng, 1, k_max_env_pad);
      perturbation.heap_noise_seed = draw(rng, 1, 999'999'999);
    }
    plan.push_back(std::move(perturbation));
  }
  return plan;
}

std::variant<ReproTarget, std::string> prepare_repro_target(const std::vector<std::string>& command,
                                                            const Environment& env,
                                                            const std::string& working_dir)
{
  if (command.empty()) {
    return std::string("no compile command after \"--\" (e.g. -- nvcc -c k.cu -o k.o)");
  }
  const std::vector<std::string> args(command.begin() + 1, command.end());
  ParseResult parsed = parse_command_line(args, env, working_dir);
  if (!parsed.request) {
    return fmt::format("repro needs a single-source compile: {}{}", describe(parsed.reason),
                       parsed.detail.empty() ? "" : " (" + parsed.detail + ")");
  }
  if (!digestible(parsed.request->mode)) {
    return std::string(
      "repro digests objects, PTX, cubins and fatbins; this compile makes none of them");
  }
  ReproTarget target;
  target.compiler = command[0];
  target.base_args = without_output_options(args);
  target.explicit_depfile = !parsed.request->depfile.path.empty();
  target.source =
    (std::filesystem::path(working_dir) / parsed.request->source).lexically_normal().string();
  const auto& output = parsed.request->output;
  target.output_name = output.empty() ? default_output(*parsed.request)
                                      : std::filesystem::path(output).filename().string();
  // The output must now come only from the -o repro adds: one inside an options file or
  // NVCC_*_FLAGS would still be there.
  const auto redirected = run_command(target, "/repro/out", "/repro/out.d");
  ParseResult check =
    parse_command_line({redirected.begin() + 1, redirected.end()}, env, working_dir);
  if (!check.request || check.request->output != "/repro/out") {
    return std::string(
      "cannot redirect the output: is -o (or -MF) inside an options file or NVCC_*_FLAGS?");
  }
  return target;
}

std::vector<std::string> run_command(const ReproTarget& target, const std::string& output_path,
                                     const std::string& depfile_path)
{
  std::vector<std::string> argv{target.compiler};
  argv.insert(argv.end(), target.base_args.begin(), target.base_args.end());
  argv.insert(argv.end(), {"-o", output_path});
  if (target.explicit_depfile) {
    argv.insert(argv.end(), {"-MF", depfile_path});
  }
  return argv;
}

std::string canonical_tmp_dir(const std::string& tmp_dir)
{
  const auto run = tmp_dir.rfind("/run-");
  if (run == std::string::npos) {
    return tmp_dir;
  }
  std::string canonical = tmp_dir;
  for (std::size_t i = run + 5; i < canonical.size() && canonical[i] != '/'; ++i) {
    canonical[i] = 'X';
  }
  return canonical;
}

std::size_t replace_same_length(std::string& bytes, std::string_view from, std::string_view to)
{
  if (from.empty() || from.size() != to.size()) {
    return 0;
  }
  std::size_t count = 0;
  for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size())) {
    bytes.replace(at, from.size(), to);
    ++count;
  }
  return count;
}

ComponentDigestList component_digest_list(const ObjectDigests& digests)
{
  ComponentDigestList list;
  for (const auto& component : digests.components) {
    list.emplace_back(component.key, component.digest);
  }
  return list;
}

std::vector<Variant> group_variants(const std::vector<RunDigests>& runs)
{
  std::vector<const RunDigests*> ordered;
  ordered.reserve(runs.size());
  for (const auto& run : runs) {
    ordered.push_back(&run);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto* a, const auto* b) { return a->run < b->run; });
  std::vector<Variant> variants;
  std::map<ComponentDigestList, std::size_t> index_of;
  for (const auto* run : ordered) {
    auto [it, inserted] = index_of.try_emplace(run->components, variants.size());
    if (inserted) {
      variants.push_back(Variant{run->components, {}});
    }
    variants[it->second].runs.push_back(run->run);
  }
  return variants;
}

std::vector<std::string> differing_components(const Variant& a, const Variant& b)
{
  std::map<std::string, std::pair<std::optional<Digest>, std::optional<Digest>>> by_key;
  for (const auto& [key, digest] : a.components) {
    by_key[key].first = digest;
  }
  for (const auto& [key, digest] : b.components) {
    by_key[key].second = digest;
  }
  std::vector<std::string> keys;
  for (const auto& [key, pair] : by_key) {
    if (pair.first != pair.second) {
      keys.push_back(key);
    }
  }
  return keys;
}

}  // namespace nvfresh

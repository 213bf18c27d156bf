#include "nvcc/nvcc_options.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

namespace nvfresh {

namespace {

using R = OptionRole;
using M = ModeKind;
using V = ValueKind;
using J = JoinedValue;

constexpr NvccOption flag(std::string_view long_name, std::string_view short_name, OptionRole role)
{
  return NvccOption{long_name, short_name, V::none, J::no,
                    false,     role,       M::none, IncludeDirKind::none};
}

constexpr NvccOption phase(std::string_view long_name, std::string_view short_name, ModeKind mode)
{
  return NvccOption{long_name, short_name,      V::none, J::no,
                    false,     R::compile_mode, mode,    IncludeDirKind::none};
}

constexpr NvccOption value(std::string_view long_name, std::string_view short_name, OptionRole role,
                           ValueKind kind = V::single, J joined = J::no)
{
  return NvccOption{long_name, short_name, kind,    joined,
                    false,     role,       M::none, IncludeDirKind::none};
}

constexpr NvccOption path(std::string_view long_name, std::string_view short_name, OptionRole role,
                          ValueKind kind = V::single, J joined = J::no)
{
  return NvccOption{long_name, short_name, kind, joined, true, role, M::none, IncludeDirKind::none};
}

constexpr NvccOption include(std::string_view long_name, std::string_view short_name,
                             IncludeDirKind kind, J joined)
{
  return NvccOption{long_name, short_name,     V::comma_list, joined,
                    true,      R::include_dir, M::none,       kind};
}

// Roles, in short: "hash" when the option can change the object, its embedded code or whether the
// compile succeeds; "pass_only" only when it cannot (link-stage options have no effect with -c,
// diagnostics that only silence or downgrade messages, thread counts, verbosity). When in doubt a
// row says hash: a needless recompile costs minutes, a stale object costs a wrong result.
constexpr std::array k_options{
  // Compilation phase.
  flag("--cuda", "-cuda", R::not_a_compile),  // writes .cu.cpp.ii: preprocessing, not an object
  phase("--cubin", "-cubin", M::cubin),
  phase("--fatbin", "-fatbin", M::fatbin),
  phase("--ptx", "-ptx", M::ptx),
  phase("--optix-ir", "-optix-ir", M::optix_ir),
  phase("--ltoir", "-ltoir", M::ltoir),
  flag("--preprocess", "-E", R::not_a_compile),
  flag("--generate-dependencies", "-M", R::not_a_compile),
  flag("--generate-nonsystem-dependencies", "-MM", R::not_a_compile),
  flag("--generate-dependencies-with-compile", "-MD", R::depfile_system),
  flag("--generate-nonsystem-dependencies-with-compile", "-MMD", R::depfile_nonsystem),
  path("--dependency-output", "-MF", R::depfile_path),
  flag("--generate-dependency-targets", "-MP", R::depfile_phony),
  phase("--compile", "-c", M::compile),
  phase("--device-c", "-dc", M::device_c),
  phase("--device-w", "-dw", M::device_w),
  flag("--device-link", "-dlink", R::not_a_compile),
  flag("--link", "-link", R::not_a_compile),
  flag("--lib", "-lib", R::not_a_compile),
  flag("--run", "-run", R::not_a_compile),
  // Files and paths.
  path("--output-file", "-o", R::output),
  path("--pre-include", "-include", R::pre_include, V::comma_list),
  flag("--objdir-as-tempdir", "-objtemp", R::hash),  // changes the tmpxft stem inside the object
  value("--library", "-l", R::pass_only, V::comma_list, J::any),
  value("--define-macro", "-D", R::define_macro, V::comma_list, J::any),
  value("--undefine-macro", "-U", R::undefine_macro, V::comma_list, J::any),
  include("--include-path", "-I", IncludeDirKind::normal, J::any),
  include("--system-include", "-isystem", IncludeDirKind::system, J::no),
  path("--library-path", "-L", R::pass_only, V::comma_list, J::any),
  path("--output-directory", "-odir", R::hash),  // names the target of generated dependencies
  path("--compiler-bindir", "-ccbin", R::host_compiler),
  flag("--allow-unsupported-compiler", "-allow-unsupported-compiler", R::pass_only),
  path("--archiver-binary", "-arbin", R::pass_only),
  value("--cudart", "-cudart", R::pass_only),
  value("--cudadevrt", "-cudadevrt", R::pass_only),
  path("--libdevice-directory", "-ldir", R::hash),
  value("--target-directory", "-target-dir", R::hash),
  flag("--use-local-env", "-use-local-env", R::pass_only),
  flag("--force-cl-env-setup", "-force-cl-env-setup", R::pass_only),
  // Options for altering compiler/linker behavior.
  flag("--profile", "-pg", R::hash),
  flag("--debug", "-g", R::hash),
  flag("--device-debug", "-G", R::hash),
  flag("--generate-line-info", "-lineinfo", R::hash),
  value("--optimization-info", "-opt-info", R::hash, V::comma_list),
  value("--optimize", "-O", R::hash, V::single, J::any),
  value("--Ofast-compile", "-Ofc", R::hash),
  value("--dopt", "-dopt", R::hash),
  flag("--dlink-time-opt", "-dlto", R::hash),
  flag("--lto", "-lto", R::hash),
  flag("--gen-opt-lto", "-gen-opt-lto", R::hash),
  value("--ftemplate-backtrace-limit", "-ftemplate-backtrace-limit", R::pass_only),
  value("--ftemplate-depth", "-ftemplate-depth", R::hash),
  flag("--no-exceptions", "-noeh", R::hash),
  flag("--shared", "-shared", R::hash),
  value("--x", "-x", R::language),
  value("--std", "-std", R::hash),
  flag("--no-host-device-initializer-list", "-nohdinitlist", R::hash),
  flag("--no-host-device-move-forward", "-nohdmoveforward", R::hash),
  flag("--expt-relaxed-constexpr", "-expt-relaxed-constexpr", R::hash),
  flag("--extended-lambda", "-extended-lambda", R::hash),
  flag("--expt-extended-lambda", "-expt-extended-lambda", R::hash),
  value("--machine", "-m", R::hash),
  flag("--m64", "-m64", R::hash),
  // Options for passing specific phase options.
  value("--compiler-options", "-Xcompiler", R::host_options, V::comma_list),
  value("--linker-options", "-Xlinker", R::pass_only, V::comma_list),
  value("--archive-options", "-Xarchive", R::pass_only, V::comma_list),
  value("--ptxas-options", "-Xptxas", R::hash, V::comma_list),
  value("--nvlink-options", "-Xnvlink", R::hash, V::comma_list),
  value("", "-Xcudafe", R::hash, V::comma_list),  // undocumented, accepted by 11.8 to 13.x
  value("", "-Xfatbin", R::hash, V::comma_list),  // undocumented, accepted by 11.8 to 13.x
  value("--static-global-template-stub", "-static-global-template-stub", R::hash),
  value("--device-entity-has-hidden-visibility", "-device-entity-has-hidden-visibility", R::hash),
  // Miscellaneous options for guiding the compiler driver.
  flag("--forward-unknown-to-host-compiler", "-forward-unknown-to-host-compiler", R::hash),
  flag("--forward-unknown-to-host-linker", "-forward-unknown-to-host-linker", R::pass_only),
  flag("--forward-unknown-opts", "-forward-unknown-opts", R::hash),
  flag("--dont-use-profile", "-noprof", R::hash),
  flag("--dryrun", "-dryrun", R::too_hard),  // runs nothing: there is no object to record
  flag("--verbose", "-v", R::pass_only),
  value("--threads", "-t", R::pass_only, V::single, J::digits),
  value("--split-compile", "-split-compile", R::hash),
  value("--split-compile-extended", "-split-compile-extended", R::hash),
  flag("--fdevice-syntax-only", "-fdevice-syntax-only", R::not_a_compile),
  path("--fdevice-time-trace", "-fdevice-time-trace", R::too_hard),  // writes a trace file
  flag("--keep", "-keep", R::too_hard),                              // keeps untracked files
  path("--keep-dir", "-keep-dir", R::pass_only),  // without --keep only names a directory
  flag("--save-temps", "-save-temps", R::too_hard),
  flag("--clean-targets", "-clean", R::too_hard),  // deletes instead of compiling
  path("--time", "-time", R::too_hard),            // appends to a timing file
  value("--run-args", "-run-args", R::pass_only, V::comma_list),
  value("--input-drive-prefix", "-idp", R::hash),
  value("--dependency-drive-prefix", "-ddp", R::hash),
  value("--drive-prefix", "-dp", R::hash),
  value("--dependency-target-name", "-MT", R::depfile_target),
  flag("--no-align-double", "", R::hash),
  flag("--no-device-link", "-nodlink", R::hash),
  // Options for steering GPU code generation. -gencode's commas are read by its own parser.
  value("--gpu-architecture", "-arch", R::gpu_architecture),
  value("--gpu-code", "-code", R::gpu_code, V::comma_list),
  value("--generate-code", "-gencode", R::generate_code),
  value("--relocatable-device-code", "-rdc", R::relocatable),
  value("--entries", "-e", R::hash, V::comma_list),
  value("--maxrregcount", "-maxrregcount", R::hash),
  flag("--use_fast_math", "-use_fast_math", R::hash),
  value("--ftz", "-ftz", R::hash),
  value("--prec-div", "-prec-div", R::hash),
  value("--prec-sqrt", "-prec-sqrt", R::hash),
  value("--fmad", "-fmad", R::hash),
  flag("--extra-device-vectorization", "-extra-device-vectorization", R::hash),
  value("--default-stream", "-default-stream", R::hash),
  // Options for steering the compiler's diagnostics and other details.
  flag("--disable-warnings", "-w", R::pass_only),
  flag("--keep-device-functions", "-keep-device-functions", R::hash),
  flag("--source-in-ptx", "-src-in-ptx", R::hash),
  flag("--restrict", "-restrict", R::hash),
  flag("--Wreorder", "-Wreorder", R::hash),  // warnings that -Werror can turn into errors
  flag("--Wdefault-stream-launch", "-Wdefault-stream-launch", R::hash),
  flag("--Wmissing-launch-bounds", "-Wmissing-launch-bounds", R::hash),
  flag("--Wext-lambda-captures-this", "-Wext-lambda-captures-this", R::hash),
  flag("--Wno-deprecated-declarations", "-Wno-deprecated-declarations", R::pass_only),
  flag("--Wno-deprecated-gpu-targets", "-Wno-deprecated-gpu-targets", R::pass_only),
  value("--Werror", "-Werror", R::hash, V::comma_list),
  flag("--resource-usage", "-res-usage", R::hash),  // its report is part of the replayed output
  flag("--extensible-whole-program", "-ewp", R::hash),
  flag("--no-compress", "-no-compress", R::hash),
  flag("--qpp-config", "-qpp-config", R::hash),
  flag("--compile-as-tools-patch", "-astoolspatch", R::hash),
  flag("--list-gpu-code", "-code-ls", R::not_a_compile),
  flag("--list-gpu-arch", "-arch-ls", R::not_a_compile),
  flag("--display-error-number", "-err-no", R::pass_only),
  flag("--no-display-error-number", "-no-err-no", R::pass_only),
  value("--diag-error", "-diag-error", R::hash, V::comma_list),  // can fail the compile
  value("--diag-suppress", "-diag-suppress", R::pass_only, V::comma_list),
  value("--diag-warn", "-diag-warn", R::pass_only, V::comma_list),
  value("--host-linker-script", "-hls", R::hash),
  flag("--augment-host-linker-script", "-aug-hls", R::hash),
  flag("--relocatable-link", "-r", R::hash),
  value("--brief-diagnostics", "-brief-diag", R::pass_only),
  value("--jump-table-density", "-jtd", R::hash),
  flag("--relocatable-ptx", "-reloc-ptx", R::hash),
  value("--device-stack-protector", "-device-stack-protector", R::hash),
  value("--compress-mode", "-compress-mode", R::hash),
  value("--frandom-seed", "-frandom-seed", R::hash),
  value("--sanitize", "-sanitize", R::hash),
  flag("--jobserver", "-jobserver", R::pass_only),
  flag("--help", "-h", R::not_a_compile),
  flag("--version", "-V", R::not_a_compile),
  path("--options-file", "-optf", R::options_file, V::comma_list),
};

using SpellingIndex = std::unordered_map<std::string_view, const NvccOption*>;

SpellingIndex build_spelling_index()
{
  SpellingIndex index;
  for (const NvccOption& option : k_options) {
    for (std::string_view spelling : {option.long_name, option.short_name}) {
      if (!spelling.empty()) {
        index.emplace(spelling, &option);
      }
    }
  }
  return index;
}

const SpellingIndex& spelling_index()
{
  static const SpellingIndex index = build_spelling_index();
  return index;
}

const NvccOption* find_spelling(std::string_view spelling)
{
  const auto it = spelling_index().find(spelling);
  return it == spelling_index().end() ? nullptr : it->second;
}

bool all_digits(std::string_view text)
{
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "-I/usr/include" -> -I with "/usr/include"; the longest joined short spelling wins.
std::optional<OptionMatch> match_joined(std::string_view word)
{
  std::optional<OptionMatch> best;
  for (const NvccOption& option : k_options) {
    const std::string_view name = option.short_name;
    if (option.joined == J::no || name.empty() || word.size() <= name.size() ||
        !word.starts_with(name)) {
      continue;
    }
    const std::string_view rest = word.substr(name.size());
    if (option.joined == J::digits && !all_digits(rest)) {
      continue;
    }
    if (!best || best->spelling.size() < name.size()) {
      best = OptionMatch{&option, name, rest};
    }
  }
  return best;
}

}  // namespace

std::span<const NvccOption> nvcc_options()
{
  return k_options;
}

std::optional<OptionMatch> match_nvcc_option(std::string_view word)
{
  if (!word.starts_with('-')) {
    return std::nullopt;
  }
  if (const NvccOption* option = find_spelling(word)) {
    return OptionMatch{option, word, std::nullopt};
  }
  const auto equals = word.find('=');
  if (equals != std::string_view::npos) {
    const std::string_view name = word.substr(0, equals);
    const NvccOption* option = find_spelling(name);
    if (option && option->takes_value()) {
      return OptionMatch{option, name, word.substr(equals + 1)};
    }
  }
  return match_joined(word);
}

std::string_view describe(OptionRole role)
{
  switch (role) {
  case R::hash: return "hash";
  case R::pass_only: return "pass only";
  case R::output: return "output";
  case R::compile_mode: return "compile mode";
  case R::not_a_compile: return "not a compile";
  case R::too_hard: return "too hard";
  case R::gpu_architecture: return "gpu architecture";
  case R::gpu_code: return "gpu code";
  case R::generate_code: return "generate code";
  case R::relocatable: return "relocatable device code";
  case R::include_dir: return "include directory";
  case R::define_macro: return "define macro";
  case R::undefine_macro: return "undefine macro";
  case R::pre_include: return "pre-include";
  case R::host_compiler: return "host compiler";
  case R::language: return "language";
  case R::host_options: return "host compiler options";
  case R::depfile_system: return "dependency file (all headers)";
  case R::depfile_nonsystem: return "dependency file (non-system headers)";
  case R::depfile_path: return "dependency file path";
  case R::depfile_target: return "dependency target";
  case R::depfile_phony: return "dependency phony targets";
  case R::options_file: return "options file";
  }
  return "unknown";
}

}  // namespace nvfresh

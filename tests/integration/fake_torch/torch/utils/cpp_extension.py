"""A stand-in for torch.utils.cpp_extension in the tests: torch's build behaviour without torch.

It behaves as torch 2.x's torch/utils/cpp_extension.py does (read at pytorch/pytorch 0011ec5c, the
release line of torch 2.11) in everything nvfresh.torch relies on or that decides whether a build
is stale, and is written for these tests (no torch code in it):
  - BuildExtension is a setuptools build_ext: with ninja (use_ninja, the default) finalize_options
    sets force, and build_extensions replaces self.compiler.compile by a function that writes
    <output_dir>/build.ninja and runs `ninja -v` there (_run_ninja_build, cwd = the build dir);
    setuptools then links the .so itself (compiler.spawn). The extension's include_dirs stay as
    given (torch makes only self.compiler.include_dirs absolute), so a relative one is not found
    from the build dir, as with real torch.
  - build.ninja as torch writes it: `nvcc = $PYTORCH_NVCC` (else <CUDA_HOME>/bin/nvcc), rule
    cuda_compile with depfile = $out.d, deps = gcc and the command `$nvcc
    --generate-dependencies-with-compile --dependency-output $out.d $cuda_cflags -c $in -o $out $cuda_post_cflags`,
    rule compile `$cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags`; for JIT builds also
    rule link `$cxx $in $ldflags -o $out` and `default <name>.so`; rewritten only when its text changes.
  - the nvcc flags: COMMON_NVCC_FLAGS, --compiler-options '-fPIC', -std=c++17, and the
    -gencode flags of TORCH_CUDA_ARCH_LIST ("8.0" -> -gencode=arch=compute_80,code=sm_80).
  - load()/load_inline(): the build directory is build_directory or TORCH_EXTENSIONS_DIR/<name>;
    a load() in a process that already built the same sources and arguments builds nothing (torch's
    versioner hashes sources and arguments, not headers); the .so is imported from the build dir.
Left out (not used by the tests or by nvfresh.torch): torch's own include and library paths (its
headers, c10, torch_python: the tests' extensions use the Python C API), pybind11 ABI flags, ROCm,
SYCL, MSVC, device link (dlink), the distutils backend's compile, precompiled headers.
"""
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension
from setuptools.command.build_ext import build_ext

COMMON_NVCC_FLAGS = [
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
]


def _cuda_home():
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        return home
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda" if os.path.exists("/usr/local/cuda") else None


CUDA_HOME = _cuda_home()


def _join_cuda_home(*parts):
    if CUDA_HOME is None:
        raise OSError("CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")
    return os.path.join(CUDA_HOME, *parts)


def _is_cuda_file(path):
    return os.path.splitext(path)[1] in (".cu", ".cuh")


def get_cxx_compiler():
    return os.environ.get("CXX", "c++")


def is_ninja_available():
    try:
        subprocess.check_output(["ninja", "--version"])
    except Exception:
        return False
    return True


def include_paths(device_type="cpu"):
    return [_join_cuda_home("include")] if device_type == "cuda" else []


def library_paths(device_type="cpu"):
    return [_join_cuda_home("lib64")] if device_type == "cuda" else []


def _get_cuda_arch_flags(cflags=None):
    """-gencode flags from TORCH_CUDA_ARCH_LIST ("8.0;9.0+PTX"); none when cflags name an arch."""
    if any("arch" in flag and "TORCH_EXTENSION_NAME" not in flag for flag in cflags or []):
        return []
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if not arch_list:
        raise RuntimeError("the fake torch has no GPU to ask: set TORCH_CUDA_ARCH_LIST")
    flags = set()
    for arch in arch_list.replace(" ", ";").split(";"):
        number = arch.split("+")[0].replace(".", "")
        flags.add(f"-gencode=arch=compute_{number},code=sm_{number}")
        if arch.endswith("+PTX"):
            flags.add(f"-gencode=arch=compute_{number},code=compute_{number}")
    return sorted(flags)


def _unix_cuda_flags(cflags):
    flags = COMMON_NVCC_FLAGS + ["--compiler-options", "'-fPIC'"] + cflags + _get_cuda_arch_flags(cflags)
    if os.getenv("CC") is not None and not any(f.startswith(("-ccbin", "--compiler-bindir")) for f in flags):
        flags += ["-ccbin", os.getenv("CC")]
    return flags


def _with_std17(flags):
    return flags if any(f.startswith("-std=") for f in flags) else flags + ["-std=c++17"]


def _maybe_write(path, content):
    if os.path.exists(path):
        with open(path) as file:
            if file.read() == content:
                return
    with open(path, "w") as file:
        file.write(content)


def _ninja_text(cflags, post_cflags, cuda_cflags, cuda_post_cflags, sources, objects, ldflags,
                library_target, with_cuda):
    config = ["ninja_required_version = 1.3", f"cxx = {get_cxx_compiler()}"]
    if with_cuda:
        config.append(f"nvcc = {os.getenv('PYTORCH_NVCC') or _join_cuda_home('bin', 'nvcc')}")
    flags = [f"cflags = {' '.join(cflags)}", f"post_cflags = {' '.join(post_cflags)}"]
    if with_cuda:
        flags += [f"cuda_cflags = {' '.join(cuda_cflags)}", f"cuda_post_cflags = {' '.join(cuda_post_cflags)}"]
    flags += ["cuda_dlink_post_cflags = ", "sycl_dlink_post_cflags = ", f"ldflags = {' '.join(ldflags)}"]
    rules = [["rule compile", "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags",
              "  depfile = $out.d", "  deps = gcc"]]
    if with_cuda:
        rules.append(["rule cuda_compile", "  depfile = $out.d", "  deps = gcc",
                      "  command = $nvcc --generate-dependencies-with-compile --dependency-output $out.d "
                      "$cuda_cflags -c $in -o $out $cuda_post_cflags"])
    builds = []
    for source, obj in zip((os.path.abspath(s) for s in sources), objects):
        rule = "cuda_compile" if with_cuda and _is_cuda_file(source) else "compile"
        builds.append(f"build {obj.replace(' ', '$ ')}: {rule} {source.replace(' ', '$ ')}")
    blocks = [config, flags] + rules + [[], []]
    if library_target is not None:
        blocks += [["rule link", "  command = $cxx $in $ldflags -o $out"], builds,
                   [f"build {library_target}: link {' '.join(objects)}"], [f"default {library_target}"]]
    else:
        blocks += [[], builds, [], []]
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def _run_ninja_build(build_directory, verbose, error_prefix):
    command = ["ninja", "-v"]
    if os.environ.get("MAX_JOBS", "").isdigit():
        command += ["-j", os.environ["MAX_JOBS"]]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        subprocess.run(command, stdout=1 if verbose else subprocess.PIPE, stderr=subprocess.STDOUT,
                       cwd=build_directory, check=True, env=os.environ.copy())
    except subprocess.CalledProcessError as error:
        output = error.output.decode() if error.output else ""
        raise RuntimeError(f"{error_prefix}: {output}" if output else error_prefix) from error


def _write_ninja_file_and_compile_objects(sources, objects, cflags, post_cflags, cuda_cflags,
                                          cuda_post_cflags, build_directory, verbose, with_cuda):
    os.makedirs(build_directory, exist_ok=True)
    _maybe_write(os.path.join(build_directory, "build.ninja"),
                 _ninja_text(cflags, post_cflags, cuda_cflags, cuda_post_cflags, sources, objects, [],
                             None, with_cuda))
    _run_ninja_build(build_directory, verbose, "Error compiling objects for extension")


class BuildExtension(build_ext):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.no_python_abi_suffix = kwargs.get("no_python_abi_suffix", False)
        self.use_ninja = kwargs.get("use_ninja", True) and is_ninja_available()

    def finalize_options(self):
        super().finalize_options()
        if self.use_ninja:
            self.force = True

    def build_extensions(self):
        for extension in self.extensions:
            self._add_flag(extension, "-DTORCH_API_INCLUDE_EXTENSION_H")
            self._add_flag(extension, f"-DTORCH_EXTENSION_NAME={extension.name.split('.')[-1]}")
        self.compiler.src_extensions += [".cu", ".cuh"]
        if not self.use_ninja:
            raise RuntimeError("the fake torch models only the ninja backend")
        self.compiler.compile = self._ninja_compile
        build_ext.build_extensions(self)

    @staticmethod
    def _add_flag(extension, flag):
        args = extension.extra_compile_args
        if isinstance(args, dict):
            extension.extra_compile_args = {key: list(value) + [flag] for key, value in args.items()}
        else:
            extension.extra_compile_args = list(args or []) + [flag]

    def _ninja_compile(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                       extra_preargs=None, extra_postargs=None, depends=None):
        output_dir = os.path.abspath(output_dir)
        self.compiler.include_dirs = [os.path.abspath(d) for d in self.compiler.include_dirs]
        _, objects, extra_postargs, pp_opts, _ = self.compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        common_cflags = self.compiler._get_cc_args(pp_opts, debug, extra_preargs)
        extra_cc_cflags = self.compiler.compiler_so[1:]
        with_cuda = any(map(_is_cuda_file, sources))
        as_dict = isinstance(extra_postargs, dict)
        post_cflags = _with_std17(list(extra_postargs["cxx"] if as_dict else extra_postargs))
        cuda_cflags = cuda_post_cflags = None
        if with_cuda:
            cuda_post = _with_std17(_unix_cuda_flags(list(extra_postargs["nvcc"] if as_dict else extra_postargs)))
            cuda_cflags = [shlex.quote(f) for f in common_cflags]
            cuda_post_cflags = [shlex.quote(f) for f in cuda_post]
        _write_ninja_file_and_compile_objects(
            sources, objects, [shlex.quote(f) for f in extra_cc_cflags + common_cflags],
            [shlex.quote(f) for f in post_cflags], cuda_cflags, cuda_post_cflags, output_dir, True, with_cuda)
        return objects

    def get_ext_filename(self, ext_name):
        filename = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            parts = filename.split(".")
            filename = ".".join(parts[:-2] + parts[-1:])
        return filename


def CUDAExtension(name, sources, *args, **kwargs):
    kwargs["library_dirs"] = kwargs.get("library_dirs", []) + library_paths("cuda")
    kwargs["libraries"] = kwargs.get("libraries", []) + ["cudart"]
    kwargs["include_dirs"] = kwargs.get("include_dirs", []) + include_paths("cuda")
    kwargs["language"] = "c++"
    return Extension(name, sources, *args, **kwargs)


_built_versions = {}  # name -> hash of what the last build in this process was built from


def _get_build_directory(name, verbose):
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.expanduser("~/.cache/torch_extensions/fake")
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    return path


def _build_arguments_hash(sources, arguments):
    digest = hashlib.sha256(repr(arguments).encode())
    for source in sources:
        with open(source, "rb") as file:
            digest.update(file.read())
    return digest.hexdigest()


def _jit_ninja_text(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                    with_cuda):
    user_includes = [os.path.abspath(p.strip()) for p in extra_include_paths]
    system_includes = include_paths("cuda" if with_cuda else "cpu") + [sysconfig.get_path("include")]
    common = [f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    common += [f"-I{shlex.quote(p)}" for p in user_includes]
    common += [f"-isystem {shlex.quote(p)}" for p in system_includes]
    cflags = common + ["-fPIC", "-std=c++17"] + [f.strip() for f in extra_cflags]
    cuda_flags = None
    if with_cuda:
        cuda_flags = common + COMMON_NVCC_FLAGS + _get_cuda_arch_flags()
        cuda_flags += ["--compiler-options", "'-fPIC'"] + [f.strip() for f in extra_cuda_cflags]
        cuda_flags = _with_std17(cuda_flags)
    objects = [os.path.splitext(os.path.basename(s))[0] + (".cuda.o" if with_cuda and _is_cuda_file(s) else ".o")
               for s in sources]
    ldflags = ["-shared"] + [f.strip() for f in extra_ldflags]
    if with_cuda:
        ldflags += [f"-L{_join_cuda_home('lib64')}", "-lcudart"]
    return _ninja_text(cflags, [], cuda_flags, [], sources, objects, ldflags, f"{name}.so", with_cuda)


def _jit_compile(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                 build_directory, verbose, with_cuda):
    with_cuda = any(map(_is_cuda_file, sources)) if with_cuda is None else with_cuda
    arguments = [extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths, build_directory, with_cuda]
    version = _build_arguments_hash(sources, arguments)
    if _built_versions.get(name) != version:
        _maybe_write(os.path.join(build_directory, "build.ninja"),
                     _jit_ninja_text(name, sources, extra_cflags or [], extra_cuda_cflags or [],
                                     extra_ldflags or [], extra_include_paths or [], with_cuda))
        _run_ninja_build(build_directory, verbose, f"Error building extension '{name}'")
        _built_versions[name] = version
    spec = importlib.util.spec_from_file_location(name, os.path.join(build_directory, f"{name}.so"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
         extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False,
         with_cuda=None, with_sycl=None, is_python_module=True, is_standalone=False,
         keep_intermediates=True):
    sources = [sources] if isinstance(sources, str) else list(sources)
    return _jit_compile(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                        build_directory or _get_build_directory(name, verbose), verbose, with_cuda)


def load_inline(name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None,
                extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None,
                extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
                with_sycl=None, is_python_module=True, with_pytorch_error_handling=True,
                keep_intermediates=True, use_pch=False, no_implicit_headers=False):
    build_directory = build_directory or _get_build_directory(name, verbose)
    cpp_sources = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    cuda_sources = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    sources = [os.path.join(build_directory, "main.cpp")]
    _maybe_write(sources[0], "\n".join(cpp_sources))
    if cuda_sources:
        sources.append(os.path.join(build_directory, "cuda.cu"))
        _maybe_write(sources[1], "\n".join(cuda_sources))
    return _jit_compile(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                        build_directory, verbose, with_cuda)

// Tests of nvcc command-line parsing over real command lines: CMake's (Ninja and Makefiles, with
// and without response files, captured in tests/unit/data/cmake_lines), ONNX Runtime's and
// PyTorch cpp_extension's, plus every alias of every option of the table.
#include "nvcc/command_line.hpp"
#include "nvcc/nvcc_options.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

namespace nvfresh {
namespace {

const std::string k_cmake_lines = NVFRESH_TEST_DATA_DIR "/cmake_lines";

using Args = std::vector<std::string>;

ParseResult parse(const Args& args, const Environment& env = {}, const std::string& cwd = ".")
{
  return parse_command_line(args, env, cwd);
}

CompileRequest require_request(const ParseResult& result)
{
  INFO("fallback: " << describe(result.reason) << ": " << result.detail);
  REQUIRE(result.reason == Cause::none);
  REQUIRE(result.request);
  return *result.request;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
  return std::find(list.begin(), list.end(), item) != list.end();
}

// A case folder of tests/unit/data/cmake_lines: the argv words after the compiler.
Args read_cmake_line(const std::string& name)
{
  std::istringstream lines(read_file(k_cmake_lines + "/" + name + "/argv.txt"));
  Args words;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("arg: ")) {
      words.push_back(line.substr(5));
    }
  }
  REQUIRE(words.size() > 1);
  REQUIRE(words.front().ends_with("nvcc"));
  words.erase(words.begin());
  return words;
}

ParseResult parse_cmake_line(const std::string& name)
{
  return parse(read_cmake_line(name), {}, k_cmake_lines + "/" + name);
}

// A scratch directory for options files, removed at the end of the test.
class TempDir {
public:
  TempDir()
  {
    const auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0;; ++attempt) {
      m_path =
        base / ("nvfresh-test-cmdline-" + std::to_string(now_ns()) + "-" + std::to_string(attempt));
      if (std::filesystem::create_directory(m_path)) {
        break;
      }
    }
  }
  ~TempDir() { std::filesystem::remove_all(m_path); }
  std::string path() const { return m_path.string(); }
  void write(const std::string& name, const std::string& text) const
  {
    write_file_atomically((m_path / name).string(), text);
  }

private:
  std::filesystem::path m_path;
};

const std::vector<DevicePass> k_cmake_passes{{"compute_80", {"compute_80", "sm_80"}},
                                             {"compute_90", {"compute_90", "sm_90"}}};

// ---------------------------------------------------------------------------------------------
// Real CMake lines.

TEST_CASE("CMake 3.25 Ninja line of a separable-compilation library")
{
  const ParseResult result = parse_cmake_line("ninja_kern");
  const CompileRequest& request = require_request(result);
  CHECK(request.source == "/tmp/cmk/src/kern.cu");
  CHECK(request.output == "CMakeFiles/kern.dir/kern.cu.o");
  CHECK(request.language == "cu");
  CHECK(request.mode == CompileMode::relocatable);  // -rdc=true -c
  CHECK(request.device_passes == k_cmake_passes);
  CHECK(request.host_compiler.empty());
  CHECK(request.include_dirs ==
        std::vector<IncludeDir>{{"/tmp/cmk/src/inc", IncludeKind::normal},
                                {"/tmp/cmk/src/dir with space", IncludeKind::normal},
                                {"/tmp/cmk/src/sys", IncludeKind::system}});
  CHECK(request.defines ==
        Args{"-DBAR=\"quoted value\"", "-DBAZ", "-DFOO=1", "-Dkern_EXPORTS", "-DNDEBUG"});
  CHECK(request.depfile == DepfileRequest{true, true, "CMakeFiles/kern.dir/kern.cu.o.d",
                                          "CMakeFiles/kern.dir/kern.cu.o", false});
  CHECK(request.options_files.empty());
  CHECK(request.signature_args == Args{"--forward-unknown-to-host-compiler",
                                       "--define-macro=BAR=\"quoted value\"",
                                       "--define-macro=BAZ",
                                       "--define-macro=FOO=1",
                                       "--define-macro=kern_EXPORTS",
                                       "--include-path=/tmp/cmk/src/inc",
                                       "--include-path=/tmp/cmk/src/dir with space",
                                       "--system-include=/tmp/cmk/src/sys",
                                       "--optimize=2",
                                       "--debug",
                                       "--define-macro=NDEBUG",
                                       "--generate-code=arch=compute_80,code=[compute_80,sm_80]",
                                       "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                                       "--compiler-options=-fPIC",
                                       "--expt-relaxed-constexpr",
                                       "--compiler-options=-Wall",
                                       "--x=cu",
                                       "--relocatable-device-code=true",
                                       "--compile",
                                       "/tmp/cmk/src/kern.cu"});
}

TEST_CASE("CMake 3.25 Ninja line of an executable's object")
{
  const CompileRequest& request = require_request(parse_cmake_line("ninja_app"));
  CHECK(request.source == "/tmp/cmk/src/main.cu");
  CHECK(request.output == "CMakeFiles/app.dir/main.cu.o");
  CHECK(request.mode == CompileMode::object);
  CHECK(request.device_passes == k_cmake_passes);
  CHECK(request.include_dirs.empty());
  CHECK(request.defines == Args{"-DNDEBUG"});
  CHECK(request.depfile.target == "CMakeFiles/app.dir/main.cu.o");
}

TEST_CASE("response files and includes_CUDA.rsp give the same request as the plain line")
{
  const std::vector<std::pair<std::string, std::string>> pairs{{"ninja_rsp_kern", "ninja_kern"},
                                                               {"make_kern", "ninja_kern"},
                                                               {"ninja_rsp_app", "ninja_app"},
                                                               {"make_app", "ninja_app"}};
  for (const auto& [with_files, plain] : pairs) {
    INFO(with_files << " against " << plain);
    const CompileRequest& a = require_request(parse_cmake_line(with_files));
    const CompileRequest& b = require_request(parse_cmake_line(plain));
    CHECK(a.signature_args == b.signature_args);
    CHECK(a.include_dirs == b.include_dirs);
    CHECK(a.defines == b.defines);
    CHECK(a.device_passes == b.device_passes);
    CHECK(a.depfile == b.depfile);
    CHECK(a.source == b.source);
    CHECK(a.output == b.output);
    CHECK(a.mode == b.mode);
  }
  CHECK(require_request(parse_cmake_line("ninja_rsp_kern")).options_files ==
        Args{"CMakeFiles/kern.dir/kern.cu.o.rsp"});
  CHECK(require_request(parse_cmake_line("make_kern")).options_files ==
        Args{"CMakeFiles/kern.dir/includes_CUDA.rsp"});
  CHECK(require_request(parse_cmake_line("make_app")).options_files.empty());
}

TEST_CASE("the expanded arguments replace --options-file in place")
{
  const CompileRequest& request = require_request(parse_cmake_line("make_kern"));
  const Args& args = request.effective_args;
  const auto at = std::find(args.begin(), args.end(), "-I/tmp/cmk/src/dir with space");
  REQUIRE(at != args.end());
  CHECK(*(at - 1) == "-I/tmp/cmk/src/inc");
  CHECK(*(at - 2) == "-Dkern_EXPORTS");
  CHECK(*(at + 1) == "-isystem=/tmp/cmk/src/sys");
  CHECK(*(at + 2) == "-O2");
  CHECK_FALSE(contains(args, "--options-file"));
}

TEST_CASE("CMake's device-link line is not a compile")
{
  const ParseResult result = parse_cmake_line("ninja_dlink");
  CHECK(result.reason == Cause::not_a_compile);
  CHECK_FALSE(result.request);
  CHECK_THAT(result.detail, Catch::Contains("--device-link"));
}

// ---------------------------------------------------------------------------------------------
// ONNX Runtime and PyTorch lines (written after their build code: onnxruntime's
// cmake/onnxruntime_providers_cuda.cmake flags and torch.utils.cpp_extension's ninja rule).

TEST_CASE("ONNX Runtime style line")
{
  const Args args{"-forward-unknown-to-host-compiler",
                  "-DUSE_CUDA=1",
                  "-I/ort/include",
                  "--threads",
                  "4",
                  "-Xcompiler",
                  "-Wall,-Wno-deprecated",
                  "-Xcudafe",
                  "--diag_suppress=2803",
                  "--diag-suppress=177",
                  "--expt-relaxed-constexpr",
                  "-gencode=arch=compute_80,code=[sm_80,compute_80]",
                  "--std",
                  "c++17",
                  "-MD",
                  "-MT",
                  "obj.o",
                  "-MF",
                  "obj.o.d",
                  "-x",
                  "cu",
                  "-c",
                  "/ort/kernel.cu",
                  "-o",
                  "obj.o"};
  const CompileRequest& request = require_request(parse(args));
  CHECK(request.device_passes == std::vector<DevicePass>{{"compute_80", {"sm_80", "compute_80"}}});
  CHECK(request.signature_args ==
        Args{"--forward-unknown-to-host-compiler", "--define-macro=USE_CUDA=1",
             "--include-path=/ort/include", "--compiler-options=-Wall",
             "--compiler-options=-Wno-deprecated", "-Xcudafe=--diag_suppress=2803",
             "--expt-relaxed-constexpr", "--generate-code=arch=compute_80,code=[sm_80,compute_80]",
             "--std=c++17", "--x=cu", "--compile", "/ort/kernel.cu"});
}

TEST_CASE("PyTorch cpp_extension style line")
{
  // --compiler-options ''"'"'-fPIC'"'"'' in build.ninja reaches nvcc as the word '-fPIC' (quotes
  // included): the host compiler's shell strips them.
  const Args args{"--generate-dependencies-with-compile",
                  "--dependency-output",
                  "x.o.d",
                  "-DTORCH_EXTENSION_NAME=ext",
                  "-I/torch/include",
                  "-isystem",
                  "/torch/include/api",
                  "-D__CUDA_NO_HALF_OPERATORS__",
                  "-D__CUDA_NO_HALF_CONVERSIONS__",
                  "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
                  "-D__CUDA_NO_HALF2_OPERATORS__",
                  "--expt-relaxed-constexpr",
                  "--compiler-options",
                  "'-fPIC'",
                  "-O2",
                  "-DPYBIND11_COMPILER_TYPE=\"_gcc\"",
                  "-gencode=arch=compute_80,code=sm_80",
                  "-std=c++17",
                  "-c",
                  "/ext/x.cu",
                  "-o",
                  "/ext/build/x.o"};
  const CompileRequest& request = require_request(parse(args));
  CHECK(request.source == "/ext/x.cu");
  CHECK(request.output == "/ext/build/x.o");
  CHECK(request.language == "cu");
  CHECK(request.depfile == DepfileRequest{true, true, "x.o.d", "", false});
  CHECK(request.device_passes == std::vector<DevicePass>{{"compute_80", {"sm_80"}}});
  CHECK(request.include_dirs ==
        std::vector<IncludeDir>{{"/torch/include", IncludeKind::normal},
                                {"/torch/include/api", IncludeKind::system}});
  CHECK(request.defines.size() == 6);
  CHECK(request.defines.back() == "-DPYBIND11_COMPILER_TYPE=\"_gcc\"");
  CHECK(contains(request.signature_args, "--compiler-options='-fPIC'"));
  CHECK(contains(request.signature_args, "--std=c++17"));
  CHECK(contains(request.signature_args, "--optimize=2"));
}

// ---------------------------------------------------------------------------------------------
// Value forms, comma lists, arch handling.

TEST_CASE("value forms -opt v, -opt=v, --long v and --long=v give the same request")
{
  const std::vector<Args> forms{
    {"-o", "a.o"}, {"-o=a.o"}, {"--output-file", "a.o"}, {"--output-file=a.o"}};
  for (const Args& form : forms) {
    Args args{"-c", "a.cu", "-I", "x", "-arch", "sm_80"};
    args.insert(args.end(), form.begin(), form.end());
    const CompileRequest& request = require_request(parse(args));
    CHECK(request.output == "a.o");
  }
  const Args a = require_request(parse({"-c", "a.cu", "-I", "x", "-I=y", "-Iz"})).signature_args;
  const Args b = require_request(parse({"-c", "a.cu", "--include-path", "x,y", "--include-path=z"}))
                   .signature_args;
  CHECK(a == b);
}

TEST_CASE("comma lists are split as nvcc splits them")
{
  const CompileRequest& request =
    require_request(parse({"-c", "a.cu", "-I", "a,b", "-DX=\"1,2\"", "-DY=f(a,b)", "-include",
                           "p.h,q.h", "-Xcompiler", "-fPIC,-Wall"}));
  CHECK(request.include_dirs ==
        std::vector<IncludeDir>{{"a", IncludeKind::normal}, {"b", IncludeKind::normal}});
  // nvcc 13.0 keeps a quoted comma and splits an unquoted one: -DY=f(a,b) defines "Y=f(a" and "b)".
  CHECK(request.defines == Args{"-DX=\"1,2\"", "-DY=f(a", "-Db)"});
  CHECK(request.forced_includes == Args{"p.h", "q.h"});
  CHECK(contains(request.signature_args, "--compiler-options=-fPIC"));
  CHECK(contains(request.signature_args, "--compiler-options=-Wall"));
}

TEST_CASE("device passes from -arch, -code and -gencode")
{
  struct Case {
    Args options;
    std::vector<DevicePass> passes;
  };
  const std::vector<Case> cases{
    {{"-arch=sm_80"}, {{"compute_80", {"sm_80", "compute_80"}}}},
    {{"--gpu-architecture", "compute_80"}, {{"compute_80", {"compute_80"}}}},
    {{"-arch=compute_80", "-code=sm_80,sm_86"}, {{"compute_80", {"sm_80", "sm_86"}}}},
    {{"--gpu-code", "sm_90a", "-arch", "compute_90a"}, {{"compute_90a", {"sm_90a"}}}},
    {{"-arch=lto_80"}, {{"compute_80", {"lto_80"}}}},
    {{"-arch=all-major"}, {{"all-major", {}}}},
    {{"-arch=sm_80,sm_90"},
     {{"compute_80", {"sm_80", "compute_80"}}, {"compute_90", {"sm_90", "compute_90"}}}},
    {{"-gencode=arch=compute_80,code=[sm_80,compute_80]"},
     {{"compute_80", {"sm_80", "compute_80"}}}},
    {{"-gencode", "arch=compute_80,code=\"sm_80,compute_80\""},
     {{"compute_80", {"sm_80", "compute_80"}}}},
    {{"--generate-code", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"},
     {{"compute_80", {"sm_80"}}, {"compute_90", {"sm_90"}}}},
    {{"-arch=sm_80", "-gencode=arch=compute_90,code=sm_90"},
     {{"compute_80", {"sm_80", "compute_80"}}, {"compute_90", {"sm_90"}}}},
    {{}, {{"compute_75", {"sm_75", "compute_75"}}}},  // nvcc 13.x's default
  };
  for (const Case& c : cases) {
    Args args{"-c", "a.cu"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    INFO("options " << Catch::Detail::stringify(c.options));
    CHECK(require_request(parse(args)).device_passes == c.passes);
  }
}

TEST_CASE("the default architecture is a version-dependent parameter")
{
  CHECK(default_gpu_architecture(11) == "sm_52");
  CHECK(default_gpu_architecture(12) == "sm_52");
  CHECK(default_gpu_architecture(13) == "sm_75");
  CHECK(k_default_gpu_architecture == "sm_75");
  const ParseResult result =
    parse_command_line({"-c", "a.cu"}, {}, ".", default_gpu_architecture(12));
  CHECK(require_request(result).device_passes ==
        std::vector<DevicePass>{{"compute_52", {"sm_52", "compute_52"}}});
}

TEST_CASE("compile modes")
{
  const std::vector<std::pair<Args, CompileMode>> cases{
    {{"-c"}, CompileMode::object},
    {{"--compile"}, CompileMode::object},
    {{"-c", "-rdc=true"}, CompileMode::relocatable},
    {{"-c", "--relocatable-device-code", "false"}, CompileMode::object},
    {{"-dc"}, CompileMode::relocatable},
    {{"--device-c"}, CompileMode::relocatable},
    {{"-dw"}, CompileMode::object},
    {{"-ptx"}, CompileMode::ptx},
    {{"--cubin"}, CompileMode::cubin},
    {{"-fatbin"}, CompileMode::fatbin},
    {{"--optix-ir"}, CompileMode::optix_ir},
    {{"-ltoir", "-dlto"}, CompileMode::ltoir},
  };
  for (const auto& [options, mode] : cases) {
    Args args{"a.cu"};
    args.insert(args.end(), options.begin(), options.end());
    INFO("options " << Catch::Detail::stringify(options));
    CHECK(require_request(parse(args)).mode == mode);
  }
}

TEST_CASE("language from -x or the source's extension")
{
  CHECK(require_request(parse({"-c", "a.cu"})).language == "cu");
  CHECK(require_request(parse({"-c", "a.cpp"})).language == "c++");
  CHECK(require_request(parse({"-c", "a.c"})).language == "c");
  CHECK(require_request(parse({"-cubin", "a.ptx"})).language == "ptx");
  CHECK(require_request(parse({"-x", "cu", "-c", "a.cpp"})).language == "cu");
  CHECK(require_request(parse({"--x=c++", "-c", "a.cu"})).language == "c++");
  CHECK(require_request(parse({"-x", "cu", "-c", "kernel.inc"})).source == "kernel.inc");
}

// ---------------------------------------------------------------------------------------------
// Depfile control.

TEST_CASE("depfile requests")
{
  struct Case {
    Args options;
    DepfileRequest expected;
  };
  const std::vector<Case> cases{
    {{}, {false, true, "", "", false}},
    {{"-MD"}, {true, true, "", "", false}},  // nvcc's default path: the output with .d
    {{"-MMD", "-MF", "d.d"}, {true, false, "d.d", "", false}},
    {{"--generate-nonsystem-dependencies-with-compile", "--dependency-output=d.d"},
     {true, false, "d.d", "", false}},
    {{"-MD", "-MT", "dir/obj file.o", "-MP"}, {true, true, "", "dir/obj file.o", true}},
    {{"-MD", "--dependency-target-name", "t1", "-MT=t2", "--generate-dependency-targets"},
     {true, true, "", "t1 t2", true}},
  };
  for (const Case& c : cases) {
    Args args{"-c", "a.cu", "-o", "a.o"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    INFO("options " << Catch::Detail::stringify(c.options));
    const CompileRequest& request = require_request(parse(args));
    CHECK(request.depfile == c.expected);
    CHECK(request.signature_args == Args{"--compile", "a.cu"});
  }
}

// ---------------------------------------------------------------------------------------------
// Include directories, defines and forced includes given to the host compiler.

TEST_CASE("include directories from -Xcompiler come first, in the host compiler's order")
{
  // nvcc 13.0 --dryrun puts "-I/xc -isystem /xs" before its own "-Ifoo -Ibar ... -isystem /sys".
  // nvcc hands -Xcompiler values to the host compiler through a shell, so "-iquote /q" is two
  // words there (and a double-quoted "\"-iquote /q\"" would stay one).
  const CompileRequest& request = require_request(
    parse({"-c", "a.cu", "-Ifoo", "-Xcompiler", "-I/xc", "-isystem=/sys", "-Ibar", "-Xcompiler",
           "-isystem,/xs", "-Xcompiler=-iquote /q", "--compiler-options",
           "-idirafter/after,-DHOST=1,-UOLD,-include,host.h", "-DNV", "-include", "nv.h"}));
  CHECK(request.include_dirs == std::vector<IncludeDir>{{"/xc", IncludeKind::normal},
                                                        {"/xs", IncludeKind::system},
                                                        {"/q", IncludeKind::quote},
                                                        {"/after", IncludeKind::after},
                                                        {"foo", IncludeKind::normal},
                                                        {"/sys", IncludeKind::system},
                                                        {"bar", IncludeKind::normal}});
  CHECK(request.defines == Args{"-DNV", "-DHOST=1", "-UOLD"});
  CHECK(request.forced_includes == Args{"nv.h", "host.h"});
}

// ---------------------------------------------------------------------------------------------
// Environment and options files.

TEST_CASE("NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS surround the arguments")
{
  const Environment env{{"NVCC_PREPEND_FLAGS", "-DPRE -ccbin /opt/gcc"},
                        {"NVCC_APPEND_FLAGS", " -DAPP=\"a b\"  -lineinfo "},
                        {"OTHER", "-DIGNORED"}};
  const CompileRequest& request = require_request(parse({"-DMID", "-c", "a.cu"}, env));
  CHECK(request.effective_args ==
        Args{"-DPRE", "-ccbin", "/opt/gcc", "-DMID", "-c", "a.cu", "-DAPP=\"a b\"", "-lineinfo"});
  CHECK(request.defines == Args{"-DPRE", "-DMID", "-DAPP=\"a b\""});
  CHECK(request.host_compiler == "/opt/gcc");
  CHECK(contains(request.signature_args, "--generate-line-info"));
}

TEST_CASE("options files are read relative to the working directory, nested, and recorded")
{
  TempDir dir;
  dir.write("outer.rsp", "-DOUTER \"-I/path with space\"\n-optf inner.rsp -O3\n");
  dir.write("inner.rsp", "-DINNER=\"\\\"q\\\"\" -DS=a\\ b -DQ='x'");
  dir.write("second.rsp", "-lineinfo");
  const CompileRequest& request = require_request(
    parse({"-c", "a.cu", "--options-file", "outer.rsp,second.rsp"}, {}, dir.path()));
  CHECK(request.options_files == Args{"outer.rsp", "inner.rsp", "second.rsp"});
  CHECK(request.effective_args == Args{"-c", "a.cu", "-DOUTER", "-I/path with space",
                                       "-DINNER=\"q\"", "-DS=a b", "-DQ='x'", "-O3", "-lineinfo"});
  CHECK(request.include_dirs == std::vector<IncludeDir>{{"/path with space", IncludeKind::normal}});
}

TEST_CASE("an unreadable or self-including options file falls back")
{
  TempDir dir;
  const ParseResult missing = parse({"-c", "a.cu", "-optf", "missing.rsp"}, {}, dir.path());
  CHECK(missing.reason == Cause::unreadable_options_file);
  CHECK_THAT(missing.detail, Catch::Contains("missing.rsp"));
  dir.write("loop.rsp", "-optf loop.rsp");
  CHECK(parse({"-c", "a.cu", "-optf=loop.rsp"}, {}, dir.path()).reason == Cause::bad_command_line);
}

TEST_CASE("split_nvcc_words and split_nvcc_env_flags follow nvcc 13.0")
{
  CHECK(split_nvcc_words("") == Args{});
  CHECK(split_nvcc_words("  -c\ta.cu\n-o  a.o ") == Args{"-c", "a.cu", "-o", "a.o"});
  CHECK(split_nvcc_words("-I\"sp ace\" \"-DR=\\\"x\\\"\"") == Args{"-Isp ace", "-DR=\"x\""});
  CHECK(split_nvcc_words("-DS=a\\ b -DQ='ab'") == Args{"-DS=a b", "-DQ='ab'"});
  CHECK(split_nvcc_words("-DQ='a b'") == Args{"-DQ='a", "b'"});
  CHECK(split_nvcc_words("\"\"") == Args{""});
  CHECK(split_nvcc_env_flags("-DQ=\"a b\" -DZ") == Args{"-DQ=\"a b\"", "-DZ"});
  CHECK(split_nvcc_env_flags("-DQ='a b'") == Args{"-DQ='a", "b'"});
  CHECK(split_nvcc_env_flags("-DC=a\\b") == Args{"-DC=a\\b"});
}

// ---------------------------------------------------------------------------------------------
// Signature normalization and unknown options.

TEST_CASE("unknown options are kept in the signature, pass-only options are not")
{
  const CompileRequest& request = require_request(parse(
    {"-forward-unknown-to-host-compiler", "-fno-strict-aliasing", "--threads", "4", "-t8", "-v",
     "-diag-suppress=177", "--keep-dir", "/tmp/k", "-c", "a.cu", "-Wno-deprecated-gpu-targets"}));
  CHECK(request.signature_args ==
        Args{"--forward-unknown-to-host-compiler", "-fno-strict-aliasing", "--compile", "a.cu"});
  CHECK(request.source == "a.cu");
}

TEST_CASE("output and depfile control stay out of the signature, the source stays in")
{
  const Args a =
    require_request(parse({"-c", "a.cu", "-o", "x.o", "-MD", "-MF", "x.d"})).signature_args;
  const Args b = require_request(parse({"-c", "a.cu", "-o", "y.o"})).signature_args;
  const Args c = require_request(parse({"-c", "b.cu", "-o", "y.o"})).signature_args;
  CHECK(a == b);
  CHECK(b != c);
  CHECK(require_request(parse({"-c", "a.cu", "-O3"})).signature_args !=
        require_request(parse({"-c", "a.cu", "-O2"})).signature_args);
}

// ---------------------------------------------------------------------------------------------
// Fallbacks.

TEST_CASE("lines nvfresh does not handle say why")
{
  struct Case {
    Args args;
    Cause reason;
    std::string detail_contains;
  };
  const std::vector<Case> cases{
    {{"-E", "a.cu"}, Cause::not_a_compile, "--preprocess"},
    {{"-c", "-E", "a.cu"}, Cause::not_a_compile, "--preprocess"},
    {{"-M", "a.cu"}, Cause::not_a_compile, "--generate-dependencies"},
    {{"-MM", "a.cu"}, Cause::not_a_compile, "--generate-nonsystem-dependencies"},
    {{"--version"}, Cause::not_a_compile, "--version"},
    {{"-V"}, Cause::not_a_compile, "--version"},
    {{"a.cu", "-o", "app"}, Cause::not_a_compile, "would link"},
    {{"a.o", "b.o", "-o", "app"}, Cause::not_a_compile, "would link"},
    {{"-dlink", "a.o", "-o", "dl.o"}, Cause::not_a_compile, "--device-link"},
    {{"-lib", "a.cu", "-o", "a.a"}, Cause::not_a_compile, "--lib"},
    {{"-c", "a.cu", "b.cu"}, Cause::several_sources, "a.cu and b.cu"},
    {{"-c", "a.cu", "b.o"}, Cause::several_sources, "2 input files"},
    {{"-c"}, Cause::no_source, "no input"},
    {{"-c", "a.o"}, Cause::no_source, "a.o"},
    {{"-c", "a.cu", "-save-temps"}, Cause::unsupported_option, "--save-temps"},
    {{"-c", "a.cu", "-keep"}, Cause::unsupported_option, "--keep"},
    {{"-c", "a.cu", "-time", "t.csv"}, Cause::unsupported_option, "--time"},
    {{"-c", "a.cu", "--fdevice-time-trace=t.json"},
     Cause::unsupported_option,
     "--fdevice-time-trace"},
    {{"-c", "a.cu", "-dryrun"}, Cause::unsupported_option, "--dryrun"},
    {{"-c", "a.cu", "-arch=native"}, Cause::unsupported_option, "native"},
    {{"-c", "a.cu", "-o"}, Cause::bad_command_line, "-o is missing its value"},
    {{"-c", "a.cu", "-code=sm_80"}, Cause::bad_command_line, "without -arch"},
    {{"-c", "a.cu", "-rdc=yes"}, Cause::bad_command_line, "yes"},
    {{"-c", "a.cu", "-gencode", "code=sm_80"}, Cause::bad_command_line, "code=sm_80"},
  };
  for (const Case& c : cases) {
    INFO("args " << Catch::Detail::stringify(c.args));
    const ParseResult result = parse(c.args);
    CHECK(result.reason == c.reason);
    CHECK_FALSE(result.request);
    CHECK_THAT(result.detail, Catch::Contains(c.detail_contains));
  }
}

// ---------------------------------------------------------------------------------------------
// Every alias of every option: each spelling, with its value in every form nvcc accepts, gives the
// same request (or the same fallback) as the row's canonical spelling.

void check_same_outcome(const ParseResult& a, const ParseResult& b)
{
  REQUIRE(a.reason == b.reason);
  REQUIRE(a.request.has_value() == b.request.has_value());
  if (!a.request) {
    return;
  }
  CHECK(a.request->signature_args == b.request->signature_args);
  CHECK(a.request->mode == b.request->mode);
  CHECK(a.request->output == b.request->output);
  CHECK(a.request->source == b.request->source);
  CHECK(a.request->language == b.request->language);
  CHECK(a.request->device_passes == b.request->device_passes);
  CHECK(a.request->host_compiler == b.request->host_compiler);
  CHECK(a.request->include_dirs == b.request->include_dirs);
  CHECK(a.request->defines == b.request->defines);
  CHECK(a.request->forced_includes == b.request->forced_includes);
  CHECK(a.request->options_files == b.request->options_files);
  CHECK(a.request->depfile == b.request->depfile);
}

std::string sample_value(const NvccOption& option)
{
  switch (option.role) {
  case OptionRole::gpu_architecture: return "compute_80";
  case OptionRole::gpu_code: return "sm_80";
  case OptionRole::generate_code: return "arch=compute_80,code=sm_80";
  case OptionRole::relocatable: return "true";
  case OptionRole::language: return "cu";
  case OptionRole::options_file: return "opts.rsp";
  default: return option.joined == JoinedValue::digits ? "4" : "v1";
  }
}

std::vector<Args> value_forms(std::string_view spelling, const NvccOption& option)
{
  const std::string name(spelling);
  if (!option.takes_value()) {
    return {{name}};
  }
  const std::string value = sample_value(option);
  std::vector<Args> forms{{name, value}, {name + "=" + value}};
  if (option.joined != JoinedValue::no && spelling == option.short_name) {
    forms.push_back({name + value});
  }
  return forms;
}

Args line_with(const NvccOption& option, const Args& form)
{
  Args args{"-c", "a.cu", "-o", "a.o"};
  if (option.role == OptionRole::gpu_code) {
    args.push_back("-arch=compute_80");
  }
  args.insert(args.end(), form.begin(), form.end());
  return args;
}

TEST_CASE("every alias of every option parses like its canonical spelling")
{
  TempDir dir;
  dir.write("opts.rsp", "-DFROM_FILE");
  for (const NvccOption& option : nvcc_options()) {
    const std::string canonical(option.canonical_name());
    const ParseResult reference =
      parse(line_with(option, value_forms(canonical, option).front()), {}, dir.path());
    for (std::string_view spelling : {option.long_name, option.short_name}) {
      if (spelling.empty()) {
        continue;
      }
      for (const Args& form : value_forms(spelling, option)) {
        INFO("option " << canonical << ", form " << Catch::Detail::stringify(form));
        check_same_outcome(parse(line_with(option, form), {}, dir.path()), reference);
      }
    }
  }
}

TEST_CASE("every row's role shows in the parse result")
{
  TempDir dir;
  dir.write("opts.rsp", "-DFROM_FILE");
  const Args plain = require_request(parse({"-c", "a.cu", "-o", "a.o"})).signature_args;
  for (const NvccOption& option : nvcc_options()) {
    const Args form = value_forms(option.canonical_name(), option).front();
    const ParseResult result = parse(line_with(option, form), {}, dir.path());
    INFO("option " << option.canonical_name() << " (" << describe(option.role) << ")");
    switch (option.role) {
    case OptionRole::not_a_compile: CHECK(result.reason == Cause::not_a_compile); break;
    case OptionRole::too_hard: CHECK(result.reason == Cause::unsupported_option); break;
    case OptionRole::pass_only: CHECK(require_request(result).signature_args == plain); break;
    case OptionRole::hash:
    case OptionRole::host_options:
      CHECK(require_request(result).signature_args.size() > plain.size());
      break;
    default: CHECK(result.reason == Cause::none); break;
    }
  }
}

}  // namespace
}  // namespace nvfresh

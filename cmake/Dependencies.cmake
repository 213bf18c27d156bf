# The single place that finds nvfresh's dependencies (all Debian packages; nothing is downloaded).
#
# NVFRESH_STATIC_LAUNCHER (on unless sanitizing): the launcher is one static executable. It runs in
# front of every compile, and most runs are skips of a few milliseconds, of which the dynamic loader
# took an eighth (resolving libstdc++, fmt, Boost and the rest: 2.7M of 21.8M instructions for the
# FMHA skip). So every library is taken as an archive: fmt header-only (Debian ships no libfmt.a),
# Boost's, xxHash's, zstd's and lz4's .a files, and glibc's own (nvfresh uses no NSS and no dlopen).
# The sanitizer runtimes cannot be linked into a static executable, so those builds stay dynamic.
if(NVFRESH_ENABLE_ASAN OR NVFRESH_ENABLE_UBSAN OR NVFRESH_BUILD_FUZZERS)
  set(NVFRESH_STATIC_DEFAULT OFF)
else()
  set(NVFRESH_STATIC_DEFAULT ON)
endif()
option(NVFRESH_STATIC_LAUNCHER "Link the nvfresh launcher as one static executable" ${NVFRESH_STATIC_DEFAULT})
# Archives and shared libraries are found under different cache names, so that a build directory
# configured the other way round does not keep a choice that no longer links.
if(NVFRESH_STATIC_LAUNCHER)
  set(Boost_USE_STATIC_LIBS ON)
  set(NVFRESH_ARCHIVE_SUFFIX .a)
  set(NVFRESH_LIBRARY_KIND ARCHIVE)
else()
  set(Boost_USE_STATIC_LIBS OFF)
  set(NVFRESH_ARCHIVE_SUFFIX "")
  set(NVFRESH_LIBRARY_KIND SHARED)
endif()

find_package(Boost 1.81 REQUIRED COMPONENTS filesystem)
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)
if(NVFRESH_STATIC_LAUNCHER)
  # Debian ships no libfmt.a: fmt's compiled part is built once here (cmake/fmt_compiled.cpp says
  # why not header-only), against the headers of Debian's fmt.
  get_target_property(NVFRESH_FMT_INCLUDES fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
  add_library(nvfresh_fmt STATIC "${CMAKE_CURRENT_LIST_DIR}/fmt_compiled.cpp")
  target_include_directories(nvfresh_fmt SYSTEM PUBLIC ${NVFRESH_FMT_INCLUDES})
  set_target_properties(nvfresh_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)
else()
  add_library(nvfresh_fmt ALIAS fmt::fmt)
endif()

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY_${NVFRESH_LIBRARY_KIND} NAMES libxxhash${NVFRESH_ARCHIVE_SUFFIX} xxhash REQUIRED)
set(XXHASH_LIBRARY ${XXHASH_LIBRARY_${NVFRESH_LIBRARY_KIND}})
add_library(nvfresh_xxhash INTERFACE)
target_include_directories(nvfresh_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(nvfresh_xxhash INTERFACE ${XXHASH_LIBRARY})

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(ZSTD_LIBRARY_${NVFRESH_LIBRARY_KIND} NAMES libzstd${NVFRESH_ARCHIVE_SUFFIX} zstd REQUIRED)
set(ZSTD_LIBRARY ${ZSTD_LIBRARY_${NVFRESH_LIBRARY_KIND}})
find_path(LZ4_INCLUDE_DIR lz4.h REQUIRED)
find_library(LZ4_LIBRARY_${NVFRESH_LIBRARY_KIND} NAMES liblz4${NVFRESH_ARCHIVE_SUFFIX} lz4 REQUIRED)
set(LZ4_LIBRARY ${LZ4_LIBRARY_${NVFRESH_LIBRARY_KIND}})
add_library(nvfresh_compression INTERFACE)
target_include_directories(nvfresh_compression INTERFACE ${ZSTD_INCLUDE_DIR} ${LZ4_INCLUDE_DIR})
target_link_libraries(nvfresh_compression INTERFACE ${ZSTD_LIBRARY} ${LZ4_LIBRARY})

if(NVFRESH_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()

# The remote cache (doc/manual.md, "Sharing through a remote cache"): gRPC and protobuf from
# Debian (libgrpc++-dev, protobuf-compiler-grpc, libprotobuf-dev), the REAPI .proto files from
# Debian's bazel-bootstrap-source, SHA-256 from OpenSSL's libcrypto (libssl-dev). They are linked
# into the nvfresh-remote helper only, dynamically: the launcher stays static and gRPC-free, and
# runs the helper only when NVFRESH_REMOTE is set (ARCHITECTURE.md says why).
option(NVFRESH_REMOTE_CACHE "Build nvfresh-remote, the REAPI (gRPC) remote cache client" ON)
if(NVFRESH_REMOTE_CACHE)
  # gRPC's own CMake package (Debian ships it) rather than pkg-config: pkg_check_modules with
  # IMPORTED_TARGET looks up each of abseil's many libraries and took 30 s of a 34 s configure.
  find_package(gRPC CONFIG REQUIRED)
  find_package(Protobuf REQUIRED)
  add_library(nvfresh_grpc INTERFACE)
  target_link_libraries(nvfresh_grpc INTERFACE gRPC::grpc++ protobuf::libprotobuf)
  find_package(OpenSSL REQUIRED COMPONENTS Crypto)
  find_program(NVFRESH_PROTOC protoc REQUIRED)
  find_program(NVFRESH_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
  set(NVFRESH_BAZEL_SOURCE "/usr/src/bazel-bootstrap" CACHE PATH
      "Debian's bazel-bootstrap-source tree, which holds the REAPI .proto files")
  set(NVFRESH_REAPI_PROTO_ROOTS
      "${NVFRESH_BAZEL_SOURCE}/third_party/remoteapis"
      "${NVFRESH_BAZEL_SOURCE}/third_party/googleapis"
      "/usr/include")  # google/protobuf/*.proto (libprotobuf-dev)
  if(NOT EXISTS "${NVFRESH_BAZEL_SOURCE}/third_party/remoteapis/build/bazel/remote/execution/v2/remote_execution.proto")
    message(FATAL_ERROR "The REAPI .proto files are not in ${NVFRESH_BAZEL_SOURCE}: install Debian's "
                        "bazel-bootstrap-source (scripts/install_deps.sh), or configure with "
                        "-DNVFRESH_REMOTE_CACHE=OFF")
  endif()
  # proto | whether it defines a service the client calls
  set(NVFRESH_REAPI_PROTOS
      "build/bazel/semver/semver.proto|"
      "build/bazel/remote/execution/v2/remote_execution.proto|1"
      "google/api/http.proto|"
      "google/api/annotations.proto|"
      "google/rpc/status.proto|"
      "google/longrunning/operations.proto|"
      "google/bytestream/bytestream.proto|1")
endif()

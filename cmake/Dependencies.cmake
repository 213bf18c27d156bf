# The single place that finds nvfresh's dependencies (all Debian packages; nothing is downloaded).
find_package(Boost 1.81 REQUIRED COMPONENTS filesystem)
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(nvfresh_xxhash INTERFACE)
target_include_directories(nvfresh_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(nvfresh_xxhash INTERFACE ${XXHASH_LIBRARY})

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(ZSTD_LIBRARY zstd REQUIRED)
find_path(LZ4_INCLUDE_DIR lz4.h REQUIRED)
find_library(LZ4_LIBRARY lz4 REQUIRED)
add_library(nvfresh_compression INTERFACE)
target_include_directories(nvfresh_compression INTERFACE ${ZSTD_INCLUDE_DIR} ${LZ4_INCLUDE_DIR})
target_link_libraries(nvfresh_compression INTERFACE ${ZSTD_LIBRARY} ${LZ4_LIBRARY})

if(NVFRESH_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()

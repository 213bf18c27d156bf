# nvfresh.cmake: put nvfresh in front of nvcc for every CUDA target of a project, and wire
# `nvfresh sync` in, so that ONE ordinary `cmake --build` (Ninja or Unix Makefiles) rebuilds
# exactly the stale objects, including those whose staleness no mtime shows.
#
# Three ways to use it:
#   include(<path>/nvfresh.cmake)                         in a project's CMakeLists.txt
#   cmake -DCMAKE_PROJECT_INCLUDE=<path>/nvfresh.cmake    injected into any project, unchanged
#   find_package(nvfresh)                                 after `cmake --install` of nvfresh
# Set NVFRESH_EXECUTABLE to choose the binary (default: found next to this file or on PATH).
#
# How: at the end of the top-level CMakeLists (cmake_language(DEFER)), every target with CUDA
# sources gets nvfresh prepended to its CUDA_COMPILER_LAUNCHER (a compiler cache there, ccache,
# sccache or buildcache, is taken out with one configure-time line: nvfresh caches CUDA objects
# itself; -DNVFRESH_KEEP_CUDA_LAUNCHER=ON keeps it behind nvfresh, where it is sound; any other
# launcher stays), and every CUDA source gets a stamp file in its OBJECT_DEPENDS.
# The always-run target `nvfresh_sync` produces the stamps as BYPRODUCTS (Ninja: restat), runs
# `nvfresh sync`, and touches only the stamps of stale objects: Ninja prunes the other objects
# after the restat, Make's per-target sub-makes see the new stamps, and only stale objects rebuild.
include_guard(GLOBAL)

if(NOT NVFRESH_EXECUTABLE)
  find_program(NVFRESH_EXECUTABLE nvfresh
    HINTS "${CMAKE_CURRENT_LIST_DIR}/../../bin" "${CMAKE_CURRENT_LIST_DIR}/../build/bin")
endif()
if(NOT NVFRESH_EXECUTABLE)
  message(WARNING "nvfresh: the nvfresh executable was not found; set NVFRESH_EXECUTABLE. "
                  "CUDA targets are built without nvfresh.")
  return()
endif()

set(NVFRESH_STATE_DIR "${CMAKE_BINARY_DIR}/.nvfresh" CACHE INTERNAL "nvfresh's records and stamps")

function(_nvfresh_collect_targets dir out_var)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _nvfresh_collect_targets("${subdir}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out_var} "${targets}" PARENT_SCOPE)
endfunction()

# The absolute paths of a target's CUDA sources (generator expressions are skipped).
function(_nvfresh_cuda_sources target out_var)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(result "")
  foreach(source IN LISTS sources)
    if(source MATCHES "\\$<")
      continue()
    endif()
    get_source_file_property(language "${source}" TARGET_DIRECTORY ${target} LANGUAGE)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE OUTPUT_VARIABLE path)
    if(language STREQUAL "CUDA" OR (NOT language AND path MATCHES "\\.cu$"))
      list(APPEND result "${path}")
    endif()
  endforeach()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(_nvfresh_prepend_launcher target)
  get_target_property(launcher ${target} CUDA_COMPILER_LAUNCHER)
  if(NOT launcher)
    set(launcher "")
  endif()
  list(LENGTH launcher count)
  if(count GREATER 0)
    list(GET launcher 0 first)
    get_filename_component(first_name "${first}" NAME)
    if(first_name STREQUAL "nvfresh")
      return()
    endif()
  endif()
  if(count GREATER 0 AND NOT NVFRESH_KEEP_CUDA_LAUNCHER AND NOT _nvfresh_cache_off)
    get_filename_component(first_stem "${first}" NAME_WE)
    if(first_stem MATCHES "^(ccache|sccache|buildcache)$")
      list(REMOVE_AT launcher 0)
      set_property(GLOBAL APPEND PROPERTY _NVFRESH_REPLACED_LAUNCHERS "${first_stem}")
    endif()
  endif()
  list(PREPEND launcher "${NVFRESH_EXECUTABLE}")
  set_property(TARGET ${target} PROPERTY CUDA_COMPILER_LAUNCHER "${launcher}")
endfunction()

# One configure-time line when a compiler cache was taken out of the CUDA launchers: behind nvfresh
# it is made sound by recaching every compile nvfresh runs, so it would only store, never serve,
# and nvfresh's own cache keys on every input of every pass. NVFRESH_KEEP_CUDA_LAUNCHER=ON keeps it.
function(_nvfresh_report_replaced_launchers)
  get_property(replaced GLOBAL PROPERTY _NVFRESH_REPLACED_LAUNCHERS)
  if(NOT replaced)
    return()
  endif()
  list(LENGTH replaced count)
  list(REMOVE_DUPLICATES replaced)
  list(JOIN replaced ", " names)
  message(STATUS "nvfresh: ${names} taken out of the CUDA compiler launcher of ${count} target(s): "
                 "nvfresh caches CUDA objects itself, keyed on every input of every nvcc pass "
                 "(behind nvfresh, ${names} could only store, never serve). C and C++ keep their "
                 "launchers. -DNVFRESH_KEEP_CUDA_LAUNCHER=ON keeps ${names} behind nvfresh.")
endfunction()

# Link steps go through `nvfresh link-record --` (RULE_LAUNCH_LINK: every link and archive command
# of the target, for every linker language, Ninja and Makefiles; <LANG>_LINKER_LAUNCHER would miss
# CUDA-linked targets and static libraries in CMake 3.25). It runs the link unchanged and records
# the content hash of each object the artifact was linked from. An existing launcher stays behind.
function(_nvfresh_prepend_link_launcher target)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY)$")
    return()
  endif()
  get_target_property(launcher ${target} RULE_LAUNCH_LINK)
  if(NOT launcher)
    set(launcher "")
  endif()
  if(launcher MATCHES "link-record")
    return()
  endif()
  set_property(TARGET ${target} PROPERTY RULE_LAUNCH_LINK
               "\"${NVFRESH_EXECUTABLE}\" link-record -- ${launcher}")
endfunction()

# Targets that link one of the CUDA targets directly (a test executable with host code only).
function(_nvfresh_linking_targets targets cuda_targets out_var)
  set(result "")
  foreach(target IN LISTS targets)
    get_target_property(libs ${target} LINK_LIBRARIES)
    foreach(lib IN LISTS libs)
      if(lib IN_LIST cuda_targets)
        list(APPEND result ${target})
        break()
      endif()
    endforeach()
  endforeach()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(_nvfresh_wire_project)
  _nvfresh_collect_targets("${CMAKE_SOURCE_DIR}" targets)
  set(stamps "")
  set(map "")
  set(cuda_targets "")
  file(MAKE_DIRECTORY "${NVFRESH_STATE_DIR}/stamps")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(imported ${target} IMPORTED)
    if(imported OR type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    _nvfresh_cuda_sources(${target} sources)
    if(NOT sources)
      continue()
    endif()
    list(APPEND cuda_targets ${target})
    foreach(source IN LISTS sources)
      string(MD5 key "${source}")
      set(stamp "${NVFRESH_STATE_DIR}/stamps/${key}.stamp")
      if(NOT stamp IN_LIST stamps)
        list(APPEND stamps "${stamp}")
        string(APPEND map "${source}\t${stamp}\n")
        if(NOT EXISTS "${stamp}")
          file(TOUCH "${stamp}")
        endif()
      endif()
      set_property(SOURCE "${source}" TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${stamp}")
    endforeach()
  endforeach()
  if(NOT cuda_targets)
    return()
  endif()
  file(CONFIGURE OUTPUT "${NVFRESH_STATE_DIR}/stamps.map" CONTENT "${map}")
  add_custom_target(nvfresh_sync
    COMMAND "${NVFRESH_EXECUTABLE}" sync -C "${CMAKE_BINARY_DIR}"
    BYPRODUCTS ${stamps}
    COMMENT "nvfresh: checking recorded CUDA objects against the disk"
    VERBATIM)
  set(_nvfresh_cache_off FALSE)
  if(DEFINED ENV{NVFRESH_CACHE} AND "$ENV{NVFRESH_CACHE}" MATCHES "^(0|[Ff][Aa][Ll][Ss][Ee]|[Nn][Oo]|[Oo][Ff][Ff])$")
    set(_nvfresh_cache_off TRUE)  # no cache of nvfresh's: a compiler cache behind it stays
  endif()
  foreach(target IN LISTS cuda_targets)
    _nvfresh_prepend_launcher(${target})
    add_dependencies(${target} nvfresh_sync)
  endforeach()
  _nvfresh_report_replaced_launchers()
  _nvfresh_linking_targets("${targets}" "${cuda_targets}" linking)
  foreach(target IN LISTS cuda_targets linking)
    _nvfresh_prepend_link_launcher(${target})
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _nvfresh_wire_project)

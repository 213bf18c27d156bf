# ASan / UBSan for nvfresh's own C++ targets, applied per target (NVFRESH_ENABLE_ASAN/UBSAN).
#
# Never applied to the two C libraries nvfresh preloads into other programs (LD_PRELOAD):
# nvfresh_trace (into every process of a compile) and nvfresh_heap_noise (into `repro`'s perturbed
# runs). An instrumented preload library needs the sanitizer runtime in a program that was not
# built with it, and kills it at start ("ASan runtime does not come first in initial library
# list"), so the real-nvcc suite could not run. Those targets simply never call this function.
#
# The runtimes are linked statically (gcc: -static-libasan/-static-libubsan; clang does so by
# default): an instrumented nvfresh that finds itself behind another nvfresh gets the tracer
# preloaded, and a static runtime still comes first there.
#
# nvfresh_set_sanitizers(<target>) puts the flags in the target's PUBLIC usage requirements, so
# everything that links it (the launcher, the unit tests, the test tools, the fuzzers) is
# instrumented and linked with the runtime too.
#
# NVFRESH_BUILD_FUZZERS implies both: a fuzzer finds memory errors and undefined behaviour only
# through them.
set(NVFRESH_SANITIZE_FLAGS "")
if(NVFRESH_ENABLE_ASAN OR NVFRESH_BUILD_FUZZERS)
  list(APPEND NVFRESH_SANITIZE_FLAGS -fsanitize=address -fno-omit-frame-pointer)
endif()
if(NVFRESH_ENABLE_UBSAN OR NVFRESH_BUILD_FUZZERS)
  list(APPEND NVFRESH_SANITIZE_FLAGS -fsanitize=undefined -fno-sanitize-recover=undefined)
endif()

set(NVFRESH_SANITIZE_LINK_FLAGS ${NVFRESH_SANITIZE_FLAGS})
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  if("-fsanitize=address" IN_LIST NVFRESH_SANITIZE_FLAGS)
    list(APPEND NVFRESH_SANITIZE_LINK_FLAGS -static-libasan)
  endif()
  if("-fsanitize=undefined" IN_LIST NVFRESH_SANITIZE_FLAGS)
    list(APPEND NVFRESH_SANITIZE_LINK_FLAGS -static-libubsan)
  endif()
endif()

function(nvfresh_set_sanitizers target)
  if(NVFRESH_SANITIZE_FLAGS)
    target_compile_options(${target} PUBLIC ${NVFRESH_SANITIZE_FLAGS})
    target_link_options(${target} PUBLIC ${NVFRESH_SANITIZE_LINK_FLAGS})
  endif()
endfunction()

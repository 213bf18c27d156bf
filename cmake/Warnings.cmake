# Per-compiler warning flags for nvfresh's own targets; -Werror only when NVFRESH_WERROR=ON (CI).
function(nvfresh_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2)
  # clang 14 (the fuzzers' compiler) calls returning an int member of an aggregate that holds
  # references to locals "address of stack memory returned" (`struct R { const V& v; int code; };
  # R r{local, 3}; return r.code;`), a false positive that commands/repro.cpp's Report meets.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
    target_compile_options(${target} PRIVATE -Wno-return-stack-address)
  endif()
  if(NVFRESH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Per-compiler warning flags for nvfresh's own targets; -Werror only when NVFRESH_WERROR=ON (CI).
function(nvfresh_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2)
  if(NVFRESH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

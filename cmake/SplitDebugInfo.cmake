# The debug info of nvfresh's executables in a file of its own, as distributions split -dbg packages.
#
# nvfresh_split_debug_info(<target>) moves <target>'s DWARF into <file>.debug beside it after each
# link, and leaves the executable stripped of it, with a .gnu_debuglink naming that file (and its
# CRC): gdb, valgrind and perf find it beside the executable in the build tree, and in .debug/ beside
# it once installed. The launcher is 8 MB stripped, against 175 MB with the static libraries' DWARF.
#
# `cmake --install <build>` installs the stripped executables only; the debug files are the `debug`
# component, installed on request: `cmake --install <build> --component debug`.
option(NVFRESH_SPLIT_DEBUG_INFO "Move the executables' debug info into <name>.debug (install component debug)" ON)

function(nvfresh_split_debug_info target)
  if(NOT NVFRESH_SPLIT_DEBUG_INFO OR NOT CMAKE_OBJCOPY)
    return()
  endif()
  set(binary "$<TARGET_FILE:${target}>")
  set(debug_name "$<TARGET_FILE_NAME:${target}>.debug")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_OBJCOPY}" --only-keep-debug "${binary}" "${debug_name}"
    COMMAND "${CMAKE_OBJCOPY}" --strip-debug "--add-gnu-debuglink=${debug_name}" "${binary}" "${binary}.stripped"
    # renamed over it, not written in place: a build may be running the launcher (ETXTBSY)
    COMMAND "${CMAKE_COMMAND}" -E rename "${binary}.stripped" "${binary}"
    WORKING_DIRECTORY "$<TARGET_FILE_DIR:${target}>"
    COMMENT "Splitting the debug info of ${target} into ${debug_name}"
    VERBATIM)
  install(FILES "${binary}.debug" DESTINATION "${CMAKE_INSTALL_BINDIR}/.debug" COMPONENT debug EXCLUDE_FROM_ALL)
endfunction()

# find_package(nvfresh): the installed nvfresh, wired into this project (see nvfresh.cmake).
get_filename_component(_nvfresh_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT NVFRESH_EXECUTABLE AND EXISTS "${_nvfresh_prefix}/bin/nvfresh")
  set(NVFRESH_EXECUTABLE "${_nvfresh_prefix}/bin/nvfresh" CACHE FILEPATH "the nvfresh launcher")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/nvfresh.cmake")
set(nvfresh_FOUND TRUE)

# Writes the build-info header (cli/build_info.hpp.in) with the version and the commit of the tree
# at build time, "-dirty" when tracked files differ from it, "unknown" outside a git checkout.
# Run on every build (CMakeLists.txt, target infraplan_build_info_header); configure_file rewrites
# the header only when its text changes, so an unchanged commit rebuilds nothing.
#   cmake -DSOURCE_DIR=… -DOUT=… -DPROJECT_VERSION=… [-DGIT_EXECUTABLE=…] -P cmake/build_info.cmake
set(INFRAPLAN_GIT_COMMIT "unknown")
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _commit)
    set(INFRAPLAN_GIT_COMMIT ${_commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE _dirty ERROR_QUIET)
    if(NOT _dirty EQUAL 0)
      string(APPEND INFRAPLAN_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
configure_file(${SOURCE_DIR}/cli/build_info.hpp.in ${OUT} @ONLY)

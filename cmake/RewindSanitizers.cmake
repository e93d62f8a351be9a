# REWIND_SANITIZE: build everything with GCC/Clang sanitizers, e.g. "address,undefined"
# or "thread" (CMakePresets.json: asan-ubsan, tsan; scripts/test-sanitizers.sh runs the
# fast tests so built). Errors stop the program (no recovery), so a test fails on the
# first report. Third-party libraries (MPI, HDF5) are not instrumented.
set(REWIND_SANITIZE "" CACHE STRING "Sanitizers to build with (-fsanitize=...): empty, address,undefined or thread")
if(REWIND_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "REWIND_SANITIZE needs GCC or Clang, not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  message(STATUS "Sanitizers: -fsanitize=${REWIND_SANITIZE}")
  # -O1: fast enough to run, quick to compile, stacks still readable.
  add_compile_options(-fsanitize=${REWIND_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g)
  add_link_options(-fsanitize=${REWIND_SANITIZE})
  if(REWIND_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC warns that TSan does not model atomic_thread_fence (asio's fenced blocks); a
    # race it hides would show as a report on the data itself, so the warning is noise.
    add_compile_options(-Wno-tsan)
  endif()
endif()

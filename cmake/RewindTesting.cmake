# rewind_add_test(NAME n SOURCES s... LIBS l... [MPI_RANKS 1 2 3 4] [LABELS l...] [TIMEOUT sec])
#
# One helper makes serial and MPI twins, as ADIOS2 and t8code do:
#  - without MPI_RANKS the binary is a plain Catch2 test, label "unit";
#  - with MPI_RANKS, one ctest entry per rank count runs the whole binary under
#    mpiexec, label "mpi". CI machines have 2 cores, so we oversubscribe, and CI
#    runs as root, so OpenMPI's root guard is lifted for tests only.
#  - IO_COMPONENTS c1 c2...: every rank count once per Open MPI I/O component (OMPI_MCA_io),
#    the first under the plain name, the others as NAME.<component>.npN (HDF5 over ROMIO
#    and OMPIO: older OMPIO releases corrupted collective writes).
# Every test binary links rewind_test_main, which initialises MPI once, and runs with
# `-w NoAssertions`: a test case (or leaf section) that asserts nothing fails — on every
# rank, so a test that returns early at one rank count is caught.
set(REWIND_MPIEXEC_EXTRA_FLAGS "--oversubscribe" CACHE STRING "Extra flags for mpiexec in tests")
set(REWIND_CATCH_ARGS -w NoAssertions)
set(REWIND_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")

function(rewind_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;MPI_RANKS;LABELS;ENV;ARGS;IO_COMPONENTS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE rewind_test_main ${T_LIBS})
  rewind_target_warnings(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_MPI_RANKS)
    add_test(NAME ${T_NAME} COMMAND $<TARGET_FILE:${T_NAME}> ${REWIND_CATCH_ARGS} ${T_ARGS})
    set_tests_properties(${T_NAME} PROPERTIES LABELS "unit;${T_LABELS}" TIMEOUT ${T_TIMEOUT}
                         ENVIRONMENT "${REWIND_TEST_ENV};${T_ENV}")
    return()
  endif()
  if(NOT T_IO_COMPONENTS)
    set(T_IO_COMPONENTS "default")  # one variant: whatever Open MPI chooses
  endif()
  set(first TRUE)
  foreach(io IN LISTS T_IO_COMPONENTS)
    set(suffix ".${io}")
    if(first)
      set(suffix "")  # the first component keeps the plain name, the others are named
    endif()
    set(first FALSE)
    set(env "${REWIND_TEST_ENV};${T_ENV}")
    if(NOT io STREQUAL "default")
      list(APPEND env "OMPI_MCA_io=${io}")
    endif()
    foreach(n IN LISTS T_MPI_RANKS)
      add_test(NAME ${T_NAME}${suffix}.np${n}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${REWIND_MPIEXEC_EXTRA_FLAGS}
                       ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS} ${REWIND_CATCH_ARGS} ${T_ARGS})
      set_tests_properties(${T_NAME}${suffix}.np${n} PROPERTIES
        LABELS "mpi;${T_LABELS}" PROCESSORS ${n} TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${env}")
    endforeach()
  endforeach()
endfunction()

# rewind_script_test(NAME n SCRIPT s [ARGS a...] [LABELS l...] [PROCESSORS n] [TIMEOUT sec]
#                    [SKIP_RETURN_CODE c])
#
# A test script of the calling folder: `bash s ARGS` for a shell script, `REWIND_PYTHON s
# ARGS` for a Python one, in REWIND_TEST_ENV (Open MPI may run as root, oversubscribed).
# The scripts print ok/FAIL lines and exit non-zero on a FAIL (SKIP_RETURN_CODE, e.g. 77:
# skipped). PROCESSORS, TIMEOUT and SKIP_RETURN_CODE as ctest's, unset if not given.
set(REWIND_PYTHON /usr/bin/python3 CACHE FILEPATH
    "The python3 of the script tests: Debian's, with h5py, numpy, zstandard and pytest")
function(rewind_script_test)
  cmake_parse_arguments(T "" "NAME;SCRIPT;PROCESSORS;TIMEOUT;SKIP_RETURN_CODE" "ARGS;LABELS" ${ARGN})
  set(runner bash)
  if(T_SCRIPT MATCHES "\\.py$")
    set(runner ${REWIND_PYTHON})
  endif()
  add_test(NAME ${T_NAME} COMMAND ${runner} ${CMAKE_CURRENT_SOURCE_DIR}/${T_SCRIPT} ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "${REWIND_TEST_ENV}")
  foreach(p IN ITEMS PROCESSORS TIMEOUT SKIP_RETURN_CODE)
    if(T_${p})
      set_tests_properties(${T_NAME} PROPERTIES ${p} ${T_${p}})
    endif()
  endforeach()
endfunction()

# rewind_add_test(NAME n SOURCES s... LIBS l... [MPI_RANKS 1 2 3 4] [LABELS l...] [TIMEOUT sec])
#
# One helper makes serial and MPI twins, as ADIOS2 and t8code do:
#  - without MPI_RANKS the binary is a plain Catch2 test, label "unit";
#  - with MPI_RANKS, one ctest entry per rank count runs the whole binary under
#    mpiexec, label "mpi". CI machines have 2 cores, so we oversubscribe, and CI
#    runs as root, so OpenMPI's root guard is lifted for tests only.
# Every test binary links rewind_test_main, which initialises MPI once.
set(REWIND_MPIEXEC_EXTRA_FLAGS "--oversubscribe" CACHE STRING "Extra flags for mpiexec in tests")
set(REWIND_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")

function(rewind_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;MPI_RANKS;LABELS;ENV;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE rewind_test_main ${T_LIBS})
  rewind_target_warnings(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(T_MPI_RANKS)
    foreach(n IN LISTS T_MPI_RANKS)
      add_test(NAME ${T_NAME}.np${n}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${REWIND_MPIEXEC_EXTRA_FLAGS}
                       ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
      set_tests_properties(${T_NAME}.np${n} PROPERTIES
        LABELS "mpi;${T_LABELS}" PROCESSORS ${n} TIMEOUT ${T_TIMEOUT}
        ENVIRONMENT "${REWIND_TEST_ENV};${T_ENV}")
    endforeach()
  else()
    add_test(NAME ${T_NAME} COMMAND $<TARGET_FILE:${T_NAME}> ${T_ARGS})
    set_tests_properties(${T_NAME} PROPERTIES LABELS "unit;${T_LABELS}" TIMEOUT ${T_TIMEOUT}
                         ENVIRONMENT "${REWIND_TEST_ENV};${T_ENV}")
  endif()
endfunction()

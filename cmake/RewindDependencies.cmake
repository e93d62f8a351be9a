# Every third-party dependency, found once, as namespaced imported targets
# (cmake/RewindFindDependency.cmake says how each is found).
# The kernel (with rewind::mpi and the in-situ hook) needs only MPI, parallel HDF5, fmt,
# nlohmann_json, xxHash, zfp's headers and Threads: REWIND_KERNEL_ONLY stops there.
include(RewindFindDependency)
foreach(_rewind_dep IN ITEMS MPI HDF5 fmt nlohmann_json xxHash zfp Threads)
  rewind_find_dependency(${_rewind_dep})
endforeach()
if(NOT REWIND_KERNEL_ONLY)
  foreach(_rewind_dep IN ITEMS Boost CLI11 tomlplusplus zstd)
    rewind_find_dependency(${_rewind_dep})
  endforeach()
endif()
if(REWIND_BUILD_TESTS)
  rewind_find_dependency(Catch2)
endif()

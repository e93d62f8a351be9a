# Every third-party dependency, found once, as namespaced imported targets.
find_package(MPI REQUIRED COMPONENTS C CXX)

# Debian ships serial and OpenMPI flavours of HDF5 side by side; ParaView links the
# OpenMPI one, so we pin it: one HDF5 library per process.
set(HDF5_PREFER_PARALLEL TRUE)
if(NOT HDF5_C_COMPILER_EXECUTABLE AND EXISTS /usr/bin/h5pcc.openmpi)
  set(HDF5_C_COMPILER_EXECUTABLE /usr/bin/h5pcc.openmpi CACHE FILEPATH "HDF5 parallel compiler wrapper")
endif()
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "Rewind needs parallel HDF5 (Debian: libhdf5-openmpi-dev); found a serial HDF5 at ${HDF5_INCLUDE_DIRS}")
endif()
if(NOT TARGET HDF5::HDF5)
  add_library(HDF5::HDF5 INTERFACE IMPORTED)
  target_include_directories(HDF5::HDF5 INTERFACE ${HDF5_INCLUDE_DIRS})
  target_link_libraries(HDF5::HDF5 INTERFACE ${HDF5_LIBRARIES})
  target_compile_definitions(HDF5::HDF5 INTERFACE ${HDF5_DEFINITIONS})
endif()

find_package(Boost 1.74 REQUIRED)            # header-only parts: Asio, Beast
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(tomlplusplus REQUIRED IMPORTED_TARGET tomlplusplus)
if(NOT TARGET tomlplusplus::tomlplusplus)
  add_library(tomlplusplus::tomlplusplus ALIAS PkgConfig::tomlplusplus)
endif()
pkg_check_modules(libzstd REQUIRED IMPORTED_TARGET libzstd)   # Debian: libzstd-dev
if(NOT TARGET zstd::libzstd)
  add_library(zstd::libzstd ALIAS PkgConfig::libzstd)
endif()
find_package(Threads REQUIRED)
if(REWIND_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
endif()

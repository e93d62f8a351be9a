# rewind_find_dependency(<name>): finds one third-party package by the name Rewind gives it
# and makes sure the namespaced target Rewind links exists:
#
#   MPI           MPI::MPI_C, MPI::MPI_CXX
#   HDF5          HDF5::HDF5 (parallel; Debian: the OpenMPI flavour, one HDF5 per process)
#   fmt           fmt::fmt
#   nlohmann_json nlohmann_json::nlohmann_json (header-only)
#   xxHash        xxHash::xxhash (pkg-config libxxhash)
#   zfp           zfp::zfp (headers only: the kernel opens libzfp.so.1 at run time)
#   tomlplusplus  tomlplusplus::tomlplusplus (pkg-config)
#   zstd          zstd::libzstd (pkg-config libzstd)
#   Threads, Boost, CLI11, Catch2
#
# Used twice, so both find the same things the same way: by the build
# (cmake/RewindDependencies.cmake: a missing package stops the configure) and by the
# installed RewindConfig.cmake (Rewind_FINDING_DEPENDENCIES set: a missing package makes
# find_package(Rewind) fail with Rewind_NOT_FOUND_MESSAGE naming it, as find_dependency does).
# A macro, so that the installed config's return() on failure leaves the config file.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

macro(_rewind_find_package)
  if(Rewind_FINDING_DEPENDENCIES)
    find_dependency(${ARGN})
  else()
    find_package(${ARGN} REQUIRED)
  endif()
endmacro()

# _rewind_find_pkg_config(<prefix> <module> <alias>): a pkg-config module as PkgConfig::<prefix> and <alias>.
macro(_rewind_find_pkg_config prefix module alias)
  if(NOT TARGET ${alias})
    _rewind_find_package(PkgConfig)
    if(Rewind_FINDING_DEPENDENCIES)
      pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
      if(NOT ${prefix}_FOUND)
        set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
            "${CMAKE_FIND_PACKAGE_NAME} could not be found because pkg-config module ${module} could not be found.")
        set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
        return()
      endif()
    else()
      pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET ${module})
    endif()
    add_library(${alias} ALIAS PkgConfig::${prefix})
  endif()
endmacro()

macro(rewind_find_dependency name)
  if("${name}" STREQUAL "MPI")
    if(Rewind_FINDING_DEPENDENCIES)  # the consumer's languages (FindMPI refuses the others)
      get_property(_rewind_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
      # Static Rewind libraries are C++ and link MPI's C++ library: a C or Fortran code
      # links them with the C++ compiler (their link language), so C++ is enabled for it.
      if(NOT Rewind_SHARED_LIBS AND NOT CXX IN_LIST _rewind_languages)
        enable_language(CXX)
        list(APPEND _rewind_languages CXX)
      endif()
      set(_rewind_mpi_components)
      foreach(_rewind_language IN ITEMS C CXX)
        if(_rewind_language IN_LIST _rewind_languages)
          list(APPEND _rewind_mpi_components ${_rewind_language})
        endif()
      endforeach()
      if(Fortran IN_LIST _rewind_languages)
        list(APPEND _rewind_mpi_components OPTIONAL_COMPONENTS Fortran)
      endif()
      _rewind_find_package(MPI COMPONENTS ${_rewind_mpi_components})
    else()  # the build: C and C++, Fortran too when the Fortran module is built
      get_property(_rewind_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
      if(Fortran IN_LIST _rewind_languages)
        _rewind_find_package(MPI COMPONENTS C CXX Fortran)
      else()
        _rewind_find_package(MPI COMPONENTS C CXX)
      endif()
    endif()
  elseif("${name}" STREQUAL "HDF5")
    # Debian ships serial and OpenMPI flavours of HDF5 side by side; ParaView links the
    # OpenMPI one, so we pin it. Elsewhere (Spack, a module system) the HDF5 found first.
    set(HDF5_PREFER_PARALLEL TRUE)
    if(NOT HDF5_C_COMPILER_EXECUTABLE AND EXISTS /usr/bin/h5pcc.openmpi)
      set(HDF5_C_COMPILER_EXECUTABLE /usr/bin/h5pcc.openmpi CACHE FILEPATH "HDF5 parallel compiler wrapper")
    endif()
    # FindHDF5 compiles a C test even for a C++ project (a static Rewind's consumer
    # links HDF5's C library): C must be enabled.
    get_property(_rewind_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT C IN_LIST _rewind_languages)
      enable_language(C)
    endif()
    _rewind_find_package(HDF5 COMPONENTS C)
    if(NOT HDF5_IS_PARALLEL)
      set(_rewind_hdf5_message "Rewind needs parallel HDF5 (Debian: libhdf5-openmpi-dev; Spack: hdf5+mpi); found a serial HDF5 at ${HDF5_INCLUDE_DIRS}")
      if(Rewind_FINDING_DEPENDENCIES)
        set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "${_rewind_hdf5_message}")
        set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
        return()
      endif()
      message(FATAL_ERROR "${_rewind_hdf5_message}")
    endif()
    if(NOT TARGET HDF5::HDF5)
      add_library(HDF5::HDF5 INTERFACE IMPORTED)
      target_include_directories(HDF5::HDF5 INTERFACE ${HDF5_INCLUDE_DIRS})
      target_link_libraries(HDF5::HDF5 INTERFACE ${HDF5_LIBRARIES})
      target_compile_definitions(HDF5::HDF5 INTERFACE ${HDF5_DEFINITIONS})
    endif()
  elseif("${name}" STREQUAL "fmt")
    _rewind_find_package(fmt 9)
  elseif("${name}" STREQUAL "nlohmann_json")
    _rewind_find_package(nlohmann_json 3.10)
  elseif("${name}" STREQUAL "xxHash")
    _rewind_find_pkg_config(libxxhash libxxhash xxHash::xxhash)   # Debian: libxxhash-dev
  elseif("${name}" STREQUAL "zfp")
    _rewind_find_package(zfp 1.0)                                  # Debian: libzfp-dev
  elseif("${name}" STREQUAL "tomlplusplus")
    _rewind_find_pkg_config(tomlplusplus tomlplusplus tomlplusplus::tomlplusplus)
  elseif("${name}" STREQUAL "zstd")
    _rewind_find_pkg_config(libzstd libzstd zstd::libzstd)         # Debian: libzstd-dev
  elseif("${name}" STREQUAL "Threads")
    _rewind_find_package(Threads)
  elseif("${name}" STREQUAL "Boost")
    _rewind_find_package(Boost 1.74)                               # header-only parts: Asio, Beast
  elseif("${name}" STREQUAL "CLI11")
    _rewind_find_package(CLI11 2.1)
  elseif("${name}" STREQUAL "Catch2")
    _rewind_find_package(Catch2 2.13)
  else()
    message(FATAL_ERROR "rewind_find_dependency: no rule for '${name}' (cmake/RewindFindDependency.cmake)")
  endif()
endmacro()

# The names rewind_find_dependency knows (cmake/RewindInstall.cmake checks the links of
# installed libraries against them).
set(REWIND_KNOWN_DEPENDENCIES MPI HDF5 fmt nlohmann_json xxHash zfp tomlplusplus zstd Threads Boost CLI11 Catch2)

# Rewind as an installed package (README, "Installing Rewind as a package").
#
# rewind_install_library(<target> [HEADERS <path>...] [PKG_CONFIG])
#   One line per library a consumer may link, right after its add_library:
#   - <target> is rewind_<name>; it is exported as Rewind::<name> and that alias is made
#     here, so code in the build tree (add_subdirectory) links the same name; the old
#     rewind::<name> aliases stay.
#   - it is its own component: find_package(Rewind COMPONENTS <name>) loads it and the
#     components it links (worked out from its links when the package is generated).
#   - HEADERS: paths under the calling folder's include/ to install, a folder
#     (rewind/kernel) or a file (rewind/insitu.h).
#   - PKG_CONFIG: rewind.pc links it (-lrewind_<name>, before those registered earlier).
#   Its include folder must be given as $<BUILD_INTERFACE:…/include> and
#   $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>; a header-only library it links only
#   privately as $<BUILD_INTERFACE:…> (so a static library's consumers need not find it).
#   What a consumer must find follows from the links, by their namespace (MPI::MPI_CXX →
#   MPI), with rewind_find_dependency's rules (cmake/RewindFindDependency.cmake): a
#   library's PUBLIC links always, its PRIVATE ones when it is static.
#
#   For example the C API (api/CMakeLists.txt) and the live library (live/):
#     rewind_install_library(rewind_capi HEADERS rewind/rewind.h PKG_CONFIG)
#     rewind_install_library(rewind_live HEADERS rewind/live)
#
# rewind_install_program(<target> [<folder>]): an executable (to bin/) or a run-time
#   module (a hook, an HDF5 filter: to lib/<folder>/), not exported.
#
# rewind_install_package(): called once, last, by the top-level CMakeLists.txt; writes
# RewindConfig.cmake, its version file, RewindComponents.cmake and rewind.pc.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(REWIND_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Rewind)

function(rewind_install_library target)
  cmake_parse_arguments(I "PKG_CONFIG" "" "HEADERS" ${ARGN})
  string(REGEX REPLACE "^rewind_" "" name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(Rewind::${name} ALIAS ${target})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "SHARED_LIBRARY")
    set_target_properties(${target} PROPERTIES VERSION ${PROJECT_VERSION}
                          SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  endif()
  set_property(GLOBAL APPEND PROPERTY REWIND_INSTALLED_LIBRARIES ${target})
  if(I_PKG_CONFIG)
    get_property(pc GLOBAL PROPERTY REWIND_PKG_CONFIG_LIBRARIES)
    set_property(GLOBAL PROPERTY REWIND_PKG_CONFIG_LIBRARIES ${target} ${pc})
  endif()
  if(NOT REWIND_INSTALL)
    return()
  endif()
  install(TARGETS ${target} EXPORT Rewind_${name}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT Rewind_${name} NAMESPACE Rewind:: DESTINATION ${REWIND_INSTALL_CMAKEDIR}
          FILE Rewind-${name}-targets.cmake)
  foreach(path IN LISTS I_HEADERS)
    set(src ${CMAKE_CURRENT_SOURCE_DIR}/include/${path})
    get_filename_component(dest ${CMAKE_INSTALL_INCLUDEDIR}/${path} DIRECTORY)
    if(IS_DIRECTORY ${src})
      install(DIRECTORY ${src} DESTINATION ${dest})
    elseif(EXISTS ${src})
      install(FILES ${src} DESTINATION ${dest})
    else()
      message(FATAL_ERROR "rewind_install_library(${target}): no header ${src}")
    endif()
  endforeach()
endfunction()

# rewind_install_program(<target> [<library-destination>]): installs an executable (bin/)
# or a module loaded at run time (a hook, a plugin: under lib/<library-destination>).
function(rewind_install_program target)
  if(REWIND_INSTALL)
    set(dest ${CMAKE_INSTALL_LIBDIR})
    if(ARGC GREATER 1)
      set(dest ${CMAKE_INSTALL_LIBDIR}/${ARGV1})
    endif()
    install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} LIBRARY DESTINATION ${dest})
  endif()
endfunction()

# _rewind_link_items(<target> <public-out> <private-out>): the target's links as written,
# split into those its consumers see (PUBLIC/INTERFACE) and its PRIVATE ones;
# $<BUILD_INTERFACE:…> items (header-only, build only) are dropped.
function(_rewind_link_items target public_out private_out)
  get_target_property(iface ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT iface)  # unset: <var>-NOTFOUND
    set(iface)
  endif()
  set(private)
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(private ${target} LINK_LIBRARIES)
    if(NOT private)
      set(private)
    endif()
  endif()
  set(public)
  foreach(item IN LISTS iface)
    if(NOT item MATCHES "^\\$<")
      list(APPEND public ${item})
    endif()
  endforeach()
  set(priv)
  foreach(item IN LISTS private)
    if(NOT item MATCHES "^\\$<" AND NOT item IN_LIST public)
      list(APPEND priv ${item})
    endif()
  endforeach()
  set(${public_out} ${public} PARENT_SCOPE)
  set(${private_out} ${priv} PARENT_SCOPE)
endfunction()

# _rewind_real_target(<item> <out>): the installed Rewind library an item names (through
# aliases), or "" if it is not one of ours.
function(_rewind_real_target item out)
  set(real "")
  if(TARGET ${item})
    get_target_property(aliased ${item} ALIASED_TARGET)
    if(aliased)
      set(item ${aliased})
    endif()
    get_property(installed GLOBAL PROPERTY REWIND_INSTALLED_LIBRARIES)
    if(item IN_LIST installed)
      set(real ${item})
    elseif(item MATCHES "^rewind_")
      message(FATAL_ERROR "rewind_install_package: an installed library links ${item}, which is not installed (rewind_install_library)")
    endif()
  endif()
  set(${out} ${real} PARENT_SCOPE)
endfunction()

# _rewind_component_needs(<target> <requires-out> <packages-out>): the components a
# consumer of <target> must load with it, and the third-party packages it must find.
function(_rewind_component_needs target requires_out packages_out)
  _rewind_link_items(${target} public private)
  get_target_property(type ${target} TYPE)
  set(items ${public})
  if(type STREQUAL "STATIC_LIBRARY")
    list(APPEND items ${private})  # exported as $<LINK_ONLY:…>: the consumer links them
  endif()
  set(requires)
  set(packages)
  foreach(item IN LISTS items)
    _rewind_real_target(${item} real)
    if(real)
      string(REGEX REPLACE "^rewind_" "" comp ${real})
      list(APPEND requires ${comp})
    elseif(item MATCHES "^([A-Za-z0-9_]+)::")
      set(pkg ${CMAKE_MATCH_1})
      if(NOT pkg IN_LIST REWIND_KNOWN_DEPENDENCIES)
        message(FATAL_ERROR "rewind_install_package: ${target} links ${item}: add a rule for ${pkg} to cmake/RewindFindDependency.cmake")
      endif()
      list(APPEND packages ${pkg})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES requires)
  list(REMOVE_DUPLICATES packages)
  set(${requires_out} ${requires} PARENT_SCOPE)
  set(${packages_out} ${packages} PARENT_SCOPE)
endfunction()

# _rewind_static_link_flags(<out> <items>...): the linker flags of third-party link items
# for rewind.pc's Libs.private — a library file for each imported target, walking into
# what it links; plain names as -l<name>.
function(_rewind_static_link_flags out)
  set(flags)
  set(todo ${ARGN})
  set(seen)
  while(todo)
    list(POP_FRONT todo item)
    if(item IN_LIST seen OR item MATCHES "^\\$<")
      continue()
    endif()
    list(APPEND seen ${item})
    _rewind_real_target(${item} real)
    if(item STREQUAL "MPI::MPI_CXX")  # mpicc links MPI's C library, not its C++ one
      foreach(lib IN LISTS MPI_CXX_LIBRARIES)
        if(NOT lib IN_LIST MPI_C_LIBRARIES)
          list(APPEND flags ${lib})
        endif()
      endforeach()
      continue()
    elseif(real OR item MATCHES "^MPI::")  # ours are listed in Libs; MPI's flags come from the wrapper
      continue()
    elseif(TARGET ${item})
      get_target_property(type ${item} TYPE)
      if(NOT type STREQUAL "INTERFACE_LIBRARY")
        list(APPEND flags "$<TARGET_LINKER_FILE:${item}>")
      endif()
      get_target_property(deps ${item} INTERFACE_LINK_LIBRARIES)
      if(deps)
        list(APPEND todo ${deps})
      endif()
    elseif(item MATCHES "^-" OR IS_ABSOLUTE "${item}")
      list(APPEND flags ${item})
    else()
      list(APPEND flags -l${item})
    endif()
  endwhile()
  list(REMOVE_DUPLICATES flags)
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# _rewind_sorted_libraries(<out>): the installed libraries, each after those it links.
function(_rewind_sorted_libraries out)
  get_property(todo GLOBAL PROPERTY REWIND_INSTALLED_LIBRARIES)
  set(done)
  while(todo)
    set(progress FALSE)
    foreach(target IN LISTS todo)
      _rewind_component_needs(${target} requires packages)
      set(ready TRUE)
      foreach(comp IN LISTS requires)
        if(NOT rewind_${comp} IN_LIST done)
          set(ready FALSE)
        endif()
      endforeach()
      if(ready)
        list(APPEND done ${target})
        list(REMOVE_ITEM todo ${target})
        set(progress TRUE)
      endif()
    endforeach()
    if(NOT progress)
      message(FATAL_ERROR "rewind_install_package: a link cycle among ${todo}")
    endif()
  endwhile()
  set(${out} ${done} PARENT_SCOPE)
endfunction()

function(_rewind_write_components file)
  _rewind_sorted_libraries(libraries)
  set(text "# Generated by cmake/RewindInstall.cmake: Rewind's components (one per library), each\n")
  string(APPEND text "# after those it needs, what each needs loaded first, and the packages its consumers find.\n")
  set(names)
  foreach(target IN LISTS libraries)
    string(REGEX REPLACE "^rewind_" "" name ${target})
    list(APPEND names ${name})
    _rewind_component_needs(${target} requires packages)
    get_target_property(type ${target} TYPE)
    string(APPEND text "set(Rewind_${name}_REQUIRES \"${requires}\")\n")
    string(APPEND text "set(Rewind_${name}_PACKAGES \"${packages}\")  # ${type}\n")
  endforeach()
  string(APPEND text "set(Rewind_AVAILABLE_COMPONENTS \"${names}\")\n")
  file(WRITE ${file} "${text}")
endfunction()

function(_rewind_write_pkg_config file)
  get_property(libraries GLOBAL PROPERTY REWIND_PKG_CONFIG_LIBRARIES)
  set(libs "-L\${libdir}")
  set(private_items)
  foreach(target IN LISTS libraries)
    string(APPEND libs " -l${target}")
    _rewind_link_items(${target} public private)
    list(APPEND private_items ${public} ${private})
  endforeach()
  _rewind_static_link_flags(flags ${private_items})
  # A C or Fortran program links the C++ kernel: its runtime too, when the kernel is static.
  foreach(lib IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
    if(lib MATCHES "stdc\\+\\+|^c\\+\\+$|^m$")
      list(APPEND flags -l${lib})
    endif()
  endforeach()
  list(JOIN flags " " REWIND_PC_LIBS_PRIVATE)
  # pkg-config reads Libs.private only with --static. Static Rewind libraries need those
  # libraries on every link, so there they go into Libs: the documented plain line
  # (`mpicc x.c $(pkg-config --cflags --libs rewind)`) links on either kind of install.
  list(GET libraries 0 first)
  get_target_property(type ${first} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    string(APPEND libs " ${REWIND_PC_LIBS_PRIVATE}")
    set(REWIND_PC_LIBS_PRIVATE "")
  endif()
  set(REWIND_PC_LIBS "${libs}")
  file(RELATIVE_PATH REWIND_PC_PREFIX_FROM_PCFILEDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" REWIND_PC_PREFIX_FROM_PCFILEDIR ${REWIND_PC_PREFIX_FROM_PCFILEDIR})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/rewind.pc.in ${file}.in @ONLY)
  file(GENERATE OUTPUT ${file} INPUT ${file}.in)
endfunction()

function(rewind_install_package)
  if(NOT REWIND_INSTALL)
    return()
  endif()
  set(out ${PROJECT_BINARY_DIR}/package)
  _rewind_write_components(${out}/RewindComponents.cmake)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/RewindConfig.cmake.in ${out}/RewindConfig.cmake
                                INSTALL_DESTINATION ${REWIND_INSTALL_CMAKEDIR}
                                PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR)
  write_basic_package_version_file(${out}/RewindConfigVersion.cmake COMPATIBILITY SameMinorVersion)
  install(FILES ${out}/RewindConfig.cmake ${out}/RewindConfigVersion.cmake ${out}/RewindComponents.cmake
                ${PROJECT_SOURCE_DIR}/cmake/RewindFindDependency.cmake
          DESTINATION ${REWIND_INSTALL_CMAKEDIR})
  _rewind_write_pkg_config(${out}/rewind.pc)
  install(FILES ${out}/rewind.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  if(TARGET rewind_fortran)  # the Fortran module: -I for rewind.mod, -lrewind_fortran, then rewind.pc
    file(RELATIVE_PATH REWIND_PC_PREFIX_FROM_PCFILEDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
    string(REGEX REPLACE "/$" "" REWIND_PC_PREFIX_FROM_PCFILEDIR ${REWIND_PC_PREFIX_FROM_PCFILEDIR})
    configure_file(${PROJECT_SOURCE_DIR}/cmake/rewind-fortran.pc.in ${out}/rewind-fortran.pc @ONLY)
    install(FILES ${out}/rewind-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  endif()
endfunction()

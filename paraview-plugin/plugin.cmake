# Included by CMakeLists.txt once ParaView is found.
paraview_plugin_scan(
  PLUGIN_FILES "${CMAKE_CURRENT_SOURCE_DIR}/RewindReader/paraview.plugin"
  PROVIDES_PLUGINS rewind_plugins
  ENABLE_BY_DEFAULT ON)
# Installed as lib/rewind-paraview-plugins/RewindReader/RewindReader.so (PV_PLUGIN_PATH or
# LoadPlugin), finding Rewind's shared libraries (BUILD_SHARED_LIBS) by a relative RPATH;
# the reader module's own headers and static pieces are not installed.
paraview_plugin_build(
  PLUGINS ${rewind_plugins}
  RUNTIME_DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY_DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY_SUBDIRECTORY "rewind-paraview-plugins"
  INSTALL_HEADERS OFF
  ADD_INSTALL_RPATHS ON
  AUTOLOAD RewindReader)
# Where tests and users find the plugin (pvpython: LoadPlugin(path)).
set(REWIND_PARAVIEW_PLUGIN_PATH
    "${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}/rewind-paraview-plugins/RewindReader/RewindReader.so"
    CACHE INTERNAL "Path of the built RewindReader ParaView plugin")

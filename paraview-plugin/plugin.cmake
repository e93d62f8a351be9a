# Included by CMakeLists.txt once ParaView is found.
paraview_plugin_scan(
  PLUGIN_FILES "${CMAKE_CURRENT_SOURCE_DIR}/RewindReader/paraview.plugin"
  PROVIDES_PLUGINS rewind_plugins
  ENABLE_BY_DEFAULT ON)
paraview_plugin_build(
  PLUGINS ${rewind_plugins}
  RUNTIME_DESTINATION bin
  LIBRARY_DESTINATION lib
  LIBRARY_SUBDIRECTORY "rewind-paraview-plugins"
  AUTOLOAD RewindReader)
# Where tests and users find the plugin (pvpython: LoadPlugin(path)).
set(REWIND_PARAVIEW_PLUGIN_PATH
    "${CMAKE_BINARY_DIR}/lib/rewind-paraview-plugins/RewindReader/RewindReader.so"
    CACHE INTERNAL "Path of the built RewindReader ParaView plugin")

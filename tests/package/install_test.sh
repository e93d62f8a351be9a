#!/usr/bin/env bash
# The build, installed: `cmake --install BUILD_DIR --prefix` a temporary folder, then every
# check of check_install.sh on it (the rewind command, the plugin when built, find_package,
# pkg-config, the headers at C++17, a hook against the installed ABI header).
#   install_test.sh BUILD_DIR SOURCE_DIR MPIEXEC
set -u
build=$(realpath "$1") src=$(realpath "$2") mpiexec=${3:-mpiexec}
prefix=$(mktemp -d); trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix/install.log" 2>&1 \
  || { tail -n 20 "$prefix/install.log"; echo "FAIL cmake --install $build --prefix $prefix"; exit 1; }
echo "ok   cmake --install $build --prefix $prefix"
bash "$src/tests/package/check_install.sh" "$prefix" "$src" "$mpiexec"

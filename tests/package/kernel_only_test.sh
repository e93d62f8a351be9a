#!/usr/bin/env bash
# A code that wants only output and restart: Rewind's kernel built inside the code's own
# CMake project (host/: add_subdirectory, as FetchContent does) with REWIND_KERNEL_ONLY=ON
# and shared libraries, where Boost, CLI11, Catch2, ParaView and Qt cannot be found and
# pkg-config knows only libxxhash (so neither toml++ nor zstd); tests, benchmarks and
# the ParaView pieces are off because Rewind is not the top-level project. The host's
# program links Rewind::kernel from the build tree and runs on 2 ranks; then the build
# is installed and check_install.sh checks that kernel-only, shared installation.
#   kernel_only_test.sh SOURCE_DIR MPIEXEC
mpiexec=${2:-mpiexec}
source "$(dirname "$0")/lib.sh" "$1"

mkdir pkgconfig && cp "$(pkg-config --variable=pcfiledir libxxhash)/libxxhash.pc" pkgconfig/
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
PKG_CONFIG_LIBDIR=$tmp/pkgconfig cmake -S "$here/host" -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREWIND_SOURCE_DIR="$src" -DREWIND_KERNEL_ONLY=ON -DBUILD_SHARED_LIBS=ON "${launcher[@]}" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_ParaView=ON -DCMAKE_DISABLE_FIND_PACKAGE_Qt5=ON >configure.log 2>&1
check "REWIND_KERNEL_ONLY=ON configures without Boost, CLI11, Catch2, ParaView, Qt, toml++, zstd" "[ $? = 0 ]" \
  || { show configure.log; exit 1; }
check "... as a subproject: tests, benchmarks, plugin and Catalyst hook default to OFF" \
  "[ \$(grep -cE '^-- REWIND_BUILD_(TESTS|BENCH|PARAVIEW_PLUGIN|CATALYST_ADAPTOR)=OFF$' configure.log) = 4 ]" \
  || show configure.log
cmake --build build -j 2 >build.log 2>&1
check "... builds (the kernel, the in-situ loader, hooks) and the host program against Rewind::kernel" "[ $? = 0 ]" \
  || { show build.log; exit 1; }
check "... the kernel is a shared library" "[ -e build/rewind/kernel/librewind_kernel.so ]"
"$mpiexec" -n 2 build/host_app host.h5 >host.log 2>&1
check "... the host program (the kernel's example writer) writes and reads back on 2 ranks (h5py agrees)" \
  "writer_ok host.log host.h5" || show host.log
cmake --install build --prefix "$tmp/prefix" >install.log 2>&1
check "... cmake --install" "[ $? = 0 ] && [ ! -e prefix/bin/rewind ]" || show install.log
bash "$here/check_install.sh" "$tmp/prefix" "$src" "$mpiexec" || fail=1
exit $fail

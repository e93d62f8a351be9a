#!/usr/bin/env bash
# An installed Rewind, checked the way a code that adopts it meets it:
#   check_install.sh PREFIX SOURCE_DIR MPIEXEC
# REWIND_MPIEXEC_FLAGS: mpiexec's extra flags; REWIND_EXPECT_PLUGIN=yes: the ParaView
# plugin was built, so it must be installed.
# Each check_* function is one thing a user does with the installation; the list at the
# bottom runs them. To check another piece (the C API's and the Fortran module's example
# codes), add a function and a line there; $prefix, $src, $here, $mpiexec, $libdir, $static
# and $full say what is being checked (lib.sh: check, show, writer_ok, $python). The C++
# program is the kernel's own example, examples/kernel/foreign_writer.cpp (3 steps written,
# a restart read back), built here against the installation. Prints ok/FAIL per check
# and exits 1 if any failed.
prefix=$(realpath "$1") mpiexec=${3:-mpiexec}
source "$(dirname "$0")/lib.sh" "$2"
example=$src/examples/kernel/foreign_writer.cpp

# What this installation is: where its libraries went, static or shared, whole or kernel-only.
kernel_lib=$(find "$prefix" -name 'librewind_kernel.*' -print -quit)
[ -n "$kernel_lib" ] || { echo "FAIL no librewind_kernel under $prefix: Rewind is not installed there"; exit 1; }
libdir=$(dirname "$kernel_lib")
static=no; [ -e "$libdir/librewind_kernel.a" ] && static=yes
full=no; [ -e "$prefix/bin/rewind" ] && full=yes
echo "installation: $prefix (libraries in $libdir, static: $static, whole: $full)"
# The documented lines (README, docs/adopting.md) are used exactly as written; a shared
# installation outside the loader's path also needs an rpath to run what they build.
rpath=(); [ $static = yes ] || rpath=(-Wl,-rpath,"$libdir")
export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# Neither these packages nor ParaView may be needed by a code that uses the kernel.
no_extras=(-DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
           -DCMAKE_DISABLE_FIND_PACKAGE_ParaView=ON -DCMAKE_DISABLE_FIND_PACKAGE_Qt5=ON)

# Every installed header of the kernel, rewind::mpi and the in-situ hook compiles alone
# with `mpicxx -std=c++17` (the standard they promise), the hook ABI as C99 too.
check_headers() {
  local h bad=0 headers
  headers=$(cd "$prefix/include" && ls rewind/kernel/*.hpp rewind/mpi/*.hpp rewind/insitu/*.hpp) || bad=1
  for h in $headers; do
    echo "#include <$h>" | mpicxx -std=c++17 -pedantic-errors -fsyntax-only -I"$prefix/include" -x c++ - \
      >>headers.log 2>&1 || { echo "     $h" ; bad=1; }
  done
  for h in rewind/insitu.h $(cd "$prefix/include" && ls rewind/rewind.h 2>/dev/null); do
    echo "#include <$h>" | mpicc -std=c99 -pedantic-errors -fsyntax-only -I"$prefix/include" -x c - \
      >>headers.log 2>&1 || { echo "     $h"; bad=1; }
  done
  check "installed kernel, mpi and hook headers compile alone with mpicxx -std=c++17 (the C headers as C99)" "[ $bad = 0 ]" \
    || show headers.log
}

# find_package(Rewind COMPONENTS kernel insitu_abi) in a C++17 project: the kernel's
# example writes and reads back on 2 ranks, h5py finds what it wrote; a C hook builds.
check_cmake_consumer() {
  cmake -S "$here/consumer" -B cmake-consumer -DCMAKE_PREFIX_PATH="$prefix" -DWRITER_SOURCE="$example" \
    "${no_extras[@]}" >consumer.log 2>&1 && cmake --build cmake-consumer >>consumer.log 2>&1
  check "find_package(Rewind COMPONENTS kernel insitu_abi): a C++17 writer and a C hook build" "[ $? = 0 ]" \
    || { show consumer.log; return; }
  check "... only the asked components (and what they link) are loaded" \
    "grep -q 'loaded Rewind::kernel' consumer.log && ! grep -q 'loaded Rewind::solver' consumer.log"
  "$mpiexec" ${REWIND_MPIEXEC_FLAGS:-} -n 2 cmake-consumer/writer cmake.h5 >writer.log 2>&1
  check "... the writer under mpiexec -n 2 reads back its restart step; h5py finds every value it wrote" \
    "writer_ok writer.log cmake.h5" || show writer.log
}

# The same program built by the MPI wrapper with pkg-config's flags, the documented line
# (no --static: a static installation's rewind.pc lists what its libraries link in Libs).
check_pkg_config() {
  mpicxx -std=c++17 "$example" -o writer_pc $(pkg-config --cflags --libs rewind) "${rpath[@]}" >pc.log 2>&1
  check "mpicxx -std=c++17 foreign_writer.cpp \$(pkg-config --cflags --libs rewind)" "[ $? = 0 ]" \
    || { show pc.log; return; }
  "$mpiexec" ${REWIND_MPIEXEC_FLAGS:-} -n 2 ./writer_pc pc.h5 >writer_pc.log 2>&1
  check "... which writes and reads back on 2 ranks (h5py agrees)" "writer_ok writer_pc.log pc.h5" || show writer_pc.log
}

# The C API's own end-to-end program (tests/api/capi_roundtrip.c, plain C99) built by
# mpicc with pkg-config's flags, as rewind.pc is meant to be used, then run on 2 ranks.
check_capi_pkg_config() {
  [ -e "$prefix/include/rewind/rewind.h" ] || { echo "skip the C API (not in this installation)"; return; }
  mpicc "$src/tests/api/capi_roundtrip.c" -o capi_pc $(pkg-config --cflags --libs rewind) -lm "${rpath[@]}" >capi_pc.log 2>&1
  check "mpicc capi_roundtrip.c \$(pkg-config --cflags --libs rewind) -lm (its own)" "[ $? = 0 ]" \
    || { show capi_pc.log; return; }
  "$mpiexec" ${REWIND_MPIEXEC_FLAGS:-} -n 2 ./capi_pc capi.h5 >capi_run.log 2>&1
  check "... which passes its own checks on 2 ranks" "[ $? = 0 ] && ! grep -q FAIL capi_run.log" || show capi_run.log
}

# The C API's misuse program (tests/api/capi_misuse.c) built the same way, on 2 ranks:
# every misuse refused on every rank, then h5py (and `rewind verify` where installed)
# finds exactly its good steps.
check_capi_misuse() {
  [ -e "$prefix/include/rewind/rewind.h" ] || return
  mpicc "$src/tests/api/capi_misuse.c" -o misuse_pc $(pkg-config --cflags --libs rewind) -lm "${rpath[@]}" >misuse_pc.log 2>&1
  check "mpicc capi_misuse.c \$(pkg-config --cflags --libs rewind) -lm (its own)" "[ $? = 0 ]" || { show misuse_pc.log; return; }
  "$mpiexec" ${REWIND_MPIEXEC_FLAGS:-} -n 2 ./misuse_pc misuse.h5 >misuse_run.log 2>&1
  check "... every misuse refused on every rank with one line (2 ranks)" "[ $? = 0 ] && ! grep -q FAIL misuse_run.log" \
    || show misuse_run.log
  check "... h5py finds exactly the good steps, with the values written" \
    "$python $src/tests/api/misuse_oracle.py misuse.h5 >misuse_oracle.log 2>&1" || show misuse_oracle.log
  [ $full = yes ] || return
  check "... rewind verify misuse.h5" "\"$prefix/bin/rewind\" verify misuse.h5 >misuse_verify.log 2>&1" || show misuse_verify.log
}

# A component this installation does not have: find_package fails with one line naming it.
check_missing_component() {
  local want=no_such_component; [ $full = no ] && want=driver
  cmake -S "$here/consumer" -B missing -DCMAKE_PREFIX_PATH="$prefix" "-DREWIND_COMPONENTS=kernel;$want" \
    "${no_extras[@]}" >missing.log 2>&1
  check "find_package(Rewind COMPONENTS kernel $want) fails, naming the component" \
    "[ $? != 0 ] && grep -q \"Rewind component '$want' is not in this installation\" missing.log" || show missing.log
}

# Without COMPONENTS: every installed library is found (configure only).
check_all_components() {
  cmake -S "$here/consumer" -B all -DCMAKE_PREFIX_PATH="$prefix" -DREWIND_COMPONENTS= >all.log 2>&1
  local want; want=$(sed -n 's/.*components \(.*\)$/\1/p' all.log | tr ';' ' ')
  local missing=0 c
  for c in $want; do grep -q "loaded Rewind::$c\$" all.log || missing=1; done
  check "find_package(Rewind) loads every installed component ($want)" "[ -n \"$want\" ] && [ $missing = 0 ]" \
    || show all.log
}

# The rewind command from the prefix: --help; a short run that loads the consumer's C
# hook, verified by `rewind verify`.
check_rewind_command() {
  "$prefix/bin/rewind" --help >help.log 2>&1
  check "$prefix/bin/rewind --help" "[ $? = 0 ] && grep -q ' run' help.log" || show help.log
  local hook=$tmp/cmake-consumer/libconsumer_hook.so
  [ -e "$hook" ] || return
  "$prefix/bin/rewind" run "$src/cases/taylor-green.toml" --set tree.depth=1 --set monitor.progress=0 \
    --set output.visualisation_every=1 --steps 2 --output run.h5 --set insitu.library="$hook" \
    --set "insitu.args=\"log=$tmp/hook.log\"" >run.log 2>&1
  check "... rewind run calls the installed-header C hook at steps 0, 1, 2" \
    "[ $? = 0 ] && [ \"\$(cut -d' ' -f1,2 hook.log | tr '\n' ' ')\" = 'step 0 step 1 step 2 ' ]" || show run.log
  check "... rewind verify run.h5" "\"$prefix/bin/rewind\" verify run.h5 >verify.log 2>&1" || show verify.log
}

# The installed ParaView plugin loads in pvpython and shows the run's steps (the times
# h5py finds in the file). REWIND_EXPECT_PLUGIN=yes: it must be there (it was built).
check_paraview_plugin() {
  local plugin=$libdir/rewind-paraview-plugins/RewindReader/RewindReader.so
  if [ ! -e "$plugin" ] && [ "${REWIND_EXPECT_PLUGIN:-no}" != yes ]; then
    echo "skip the ParaView plugin (not built: not in this installation)"; return
  fi
  check "the ParaView plugin is installed" "[ -e $plugin ]" || return
  if ! command -v pvpython >/dev/null || ! command -v Xvfb >/dev/null || [ ! -e run.h5 ]; then
    echo "skip the ParaView plugin in pvpython (no pvpython, Xvfb or run.h5)"; return
  fi
  $python -c "
import h5py; f = h5py.File('run.h5', 'r')
print(' '.join(repr(float(f['simulation'][k].attrs['time'])) for k in sorted(f['simulation']) if k.startswith('step_')))" >times.want
  timeout 90 "$src/scripts/headless.sh" pvpython "$here/installed_plugin.py" "$plugin" run.h5 >pv.log 2>&1
  check "... pvpython loads it from the prefix and shows the run's steps (h5py's times)" \
    "[ \"\$(grep '^times ' pv.log | cut -d' ' -f2-)\" = \"\$(cat times.want)\" ]" || show pv.log
}

# The two codes Rewind never saw (examples/), built as their users build them — the C
# one with find_package(Rewind COMPONENTS capi), the Fortran one with mpifort and
# pkg-config — and run through everything they do (tests/examples/examples.sh: runs on
# 1-4 ranks, restart, live windows, steering, branches, with the installed rewind).
check_examples() {
  cmake -S "$src/examples/heat-c" -B heat-c -DCMAKE_PREFIX_PATH="$prefix" "${no_extras[@]}" >heat-c.log 2>&1 &&
    cmake --build heat-c >>heat-c.log 2>&1
  check "examples/heat-c builds with find_package(Rewind COMPONENTS capi)" "[ -x heat-c/heat ]" || { show heat-c.log; return; }
  mpifort "$src/examples/heat-f/heat3d.f90" -o heat3d $(pkg-config --cflags --libs rewind-fortran) "${rpath[@]}" \
    >heat-f.log 2>&1
  check "examples/heat-f builds with mpifort \$(pkg-config --cflags --libs rewind-fortran)" "[ -x heat3d ]" \
    || { show heat-f.log; return; }
  bash "$src/tests/examples/examples.sh" heat-c/heat heat3d "$prefix/bin/rewind" "$src" "$mpiexec" >examples.log 2>&1
  check "... both run through output, restart, live windows, steering and branches (tests/examples/examples.sh)" \
    "[ $? = 0 ]" || { grep -E '^FAIL' examples.log | head -20; }
  grep -c '^ok' examples.log | sed 's/^/     checks passed: /'
}

check_headers
check_cmake_consumer
check_pkg_config
check_capi_pkg_config
check_capi_misuse
check_missing_component
if [ $full = yes ]; then
  check_all_components
  check_rewind_command
  check_paraview_plugin
  check_examples
fi
exit $fail

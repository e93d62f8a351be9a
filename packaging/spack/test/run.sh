#!/usr/bin/env bash
# Tries the Rewind recipe with a Spack checkout, every dependency a Debian external:
#   packaging/spack/test/run.sh SPACK_ROOT [SPEC_VARIANTS...]
# e.g. run.sh ~/spack +kernel_only        run.sh ~/spack ~shared
# Spack's configuration, caches and install tree stay in a temporary folder (kept:
# printed at the end); the source is this checkout (spack develop). Clingo must be
# importable by the Python that runs Spack (SPACK_PYTHON; pip install clingo).
set -euo pipefail
spack_root=$(realpath "$1"); shift
variants=("$@")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
work=$(mktemp -d /tmp/rewind-spack.XXXXXX)
export SPACK_USER_CONFIG_PATH=$work/user SPACK_USER_CACHE_PATH=$work/cache
# Spack's build environment drops every *_ROOT variable, OpenMPI's OMPI_ALLOW_RUN_AS_ROOT
# too: as root, the installed tree's checks give mpiexec the flag itself.
export OMPI_MCA_rmaps_base_oversubscribe=1
[ "$(id -u)" = 0 ] && export REWIND_MPIEXEC_FLAGS="--allow-run-as-root"
spack=("$spack_root/bin/spack")
mkdir -p "$work/user"
cp "$here/packages.yaml" "$work/user/packages.yaml"
cat >"$work/user/config.yaml" <<YAML
config:
  install_tree:
    root: $work/opt
  build_stage: [$work/stage]
  source_cache: $work/source-cache
  misc_cache: $work/misc-cache
YAML
"${spack[@]}" compiler find --scope user >/dev/null
"${spack[@]}" repo add --scope user "$here/.."
"${spack[@]}" list tomlplusplus | grep -qx tomlplusplus || "${spack[@]}" repo add --scope user "$here/shims"
# An environment that builds this checkout (spack develop), concretized with the test
# dependencies of the root, then installed with --test=root: ctest -L unit after the
# build, tests/package/check_install.sh on the installed prefix.
env=(-e "$work/env")
"${spack[@]}" env create -d "$work/env" >/dev/null
"${spack[@]}" "${env[@]}" add rewind@=main "${variants[@]}"
"${spack[@]}" "${env[@]}" develop --no-clone -p "$src" rewind@=main
"${spack[@]}" "${env[@]}" concretize --test root | tee "$work/spec.txt"
"${spack[@]}" "${env[@]}" install --test=root -v 2>&1 | tee "$work/install.log"
prefix=$("${spack[@]}" "${env[@]}" location -i rewind)
echo "rewind installed in $prefix; Spack's files in $work"

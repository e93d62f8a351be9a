#!/usr/bin/env bash
# Installs every Debian bookworm package Rewind needs to build, test and run.
# Idempotent: packages already present are skipped, so a second run is fast.
#   scripts/install-deps.sh            core + ParaView SDK
#   REWIND_NO_PARAVIEW=1 scripts/install-deps.sh   core only
set -euo pipefail

core=(build-essential cmake ninja-build pkg-config git
      openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools gfortran
      libboost-dev catch2 nlohmann-json3-dev libtomlplusplus-dev libcli11-dev
      libfmt-dev libzstd-dev libxxhash-dev clang-14 libfuzzer-14-dev clang-format-14 clang-tidy-14
      python3-h5py python3-numpy python3-matplotlib python3-zstandard
      python3-venv python3-setuptools python3-wheel python3-pytest
      libzfp-dev hdf5-filter-plugin bitshuffle
      slurmctld slurmd slurm-client util-linux iproute2   # tests/slurm: a local Slurm, ~1 min
      openssh-server openssh-client  # tests/multinode/multinode_ssh_tunnel.sh: sshds in namespaces of its own
      gdb)  # tests/multinode/lib.sh: the stacks of a job past its time limit

paraview=(paraview paraview-dev python3-paraview xvfb xauth
      qtbase5-dev qttools5-dev libqt5svg5-dev libqt5x11extras5-dev qtxmlpatterns5-dev-tools
      libqt5opengl5-dev libutfcpp-dev libogg-dev libtheora-dev libtbb-dev libglew-dev
      libfreetype-dev libnetcdf-dev libpng-dev libtiff-dev libjpeg-dev liblz4-dev liblzma-dev
      libxml2-dev libexpat1-dev libeigen3-dev libgl2ps-dev libfontconfig-dev libx11-dev libgl-dev
      libjsoncpp-dev libdouble-conversion-dev tao-pegtl-dev libpugixml-dev libcgns-dev
      libsqlite3-dev zlib1g-dev libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
      libswresample-dev libgdal-dev)

want=("${core[@]}")
if [ "${REWIND_NO_PARAVIEW:-0}" != 1 ]; then want+=("${paraview[@]}"); fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

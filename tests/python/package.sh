#!/usr/bin/env bash
# The rewind Python package the way a user gets it: a fresh virtual environment over
# Debian's numpy and h5py (--system-site-packages, /usr/bin/python3), `pip install` of
# python/ without network (--no-build-isolation: Debian's setuptools builds it; --no-deps:
# Debian names its h5py distribution h5py._debian_h5py_serial, which pip does not count
# as h5py), then test_package.py with that environment's python and pytest (Debian's
# python3-pytest), against files written by `rewind run`, h5py, the rewind commands,
# `rewind serve` and a live run.
#   package.sh REWIND SOURCE_DIR MPIEXEC
set -u
rewind=$1 src=$2 mpiexec=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
/usr/bin/python3 -m venv --system-site-packages venv || { echo "FAIL python3 -m venv (python3-venv installed?)"; exit 1; }
# pip builds in the folder it installs from (build/, rewind.egg-info): a copy, not the repository.
cp -r "$src/python" pkg
if ! venv/bin/pip install --no-build-isolation --no-index --no-deps ./pkg >pip.log 2>&1; then
  cat pip.log
  echo "FAIL pip install --no-build-isolation --no-index --no-deps ./python"
  exit 1
fi
echo "ok   pip install ./python into a fresh venv, offline"
mkdir work && cd work || exit 1
venv=$tmp/venv
"$venv/bin/python" -m pytest -p no:cacheprovider -rA --rootdir "$src/tests/python" "$src/tests/python/test_package.py" \
  --rewind "$rewind" --mpiexec "$mpiexec"

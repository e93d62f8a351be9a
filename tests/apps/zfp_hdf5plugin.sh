#!/usr/bin/env bash
# Interop of Rewind's zfp codec with H5Z-ZFP as PyPI's `hdf5plugin` bundles it: h5py
# (with hdf5plugin imported) reads the zfp datasets of a visualisation step written by
# `rewind run`, and every value is within the recorded zfp_accuracy of the same run's
# uncompressed output. Needs a Python whose h5py + hdf5plugin decode filter 32013:
# $REWIND_HDF5PLUGIN_PYTHON, else python3 on PATH. Without one the test is SKIPPED
# (exit 77, said loudly), never passed: Debian's python3-hdf5plugin ships no filters.
source "$(dirname "$0")/lib.sh" "$@"
py=${REWIND_HDF5PLUGIN_PYTHON:-python3}
if ! "$py" -c 'import h5py, hdf5plugin; assert h5py.h5z.filter_avail(32013)' >/dev/null 2>&1; then
  echo "SKIPPED: no Python with h5py + PyPI's hdf5plugin (H5Z-ZFP) here ($py); set REWIND_HDF5PLUGIN_PYTHON," \
       "e.g. a venv with 'pip install h5py hdf5plugin'. The zfp interop was NOT checked." >&2
  exit 77
fi
. "$src/scripts/mpi-env.sh"
sched=(--set time.end=0.1 --set output.checkpoint_interval=0.1 --set output.visualisation_interval=0.05 -q)
"$mpiexec" -n 3 "$rewind" run "$src/cases/default.toml" --output zfp.h5 "${sched[@]}" --monitor zfp.csv \
  --set 'output.io.visualisation_compression="zfp"' --set output.io.zfp_accuracy=1e-3 >log 2>&1
"$rewind" run "$src/cases/default.toml" --output plain.h5 "${sched[@]}" --monitor plain.csv >>log 2>&1
check "runs" "[ -f zfp.h5 ] && [ -f plain.h5 ]"
for f32 in true false; do
  "$rewind" run "$src/cases/default.toml" --output zfp_$f32.h5 "${sched[@]}" --monitor z$f32.csv --set output.float32=$f32 \
    --set 'output.io.visualisation_compression="zfp"' --set output.io.zfp_accuracy=1e-3 >>log 2>&1
  "$rewind" run "$src/cases/default.toml" --output plain_$f32.h5 "${sched[@]}" --monitor p$f32.csv --set output.float32=$f32 >>log 2>&1
  check "h5py + hdf5plugin ($("$py" -c 'import hdf5plugin; print(hdf5plugin.version)')) read float32=$f32 zfp steps within the bound" \
    "'$py' - zfp_$f32.h5 plain_$f32.h5 >py.$f32 2>&1 <<'PY'
import sys, h5py, hdf5plugin, numpy as np
z, p = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
n = 0
for s in z['simulation']:
    if not s.startswith('step_') or z['simulation'][s].attrs['kind'] != b'visualisation': continue
    for v in z['simulation'][s]['cell_data']:
        d = z['simulation'][s]['cell_data'][v]
        assert '32013' in d._filters or 32013 in d._filters, (s, v, d._filters)
        bound = float(d.attrs['zfp_accuracy'])
        got, want = d[...].astype(np.float64), p['simulation'][s]['cell_data'][v][...].astype(np.float64)
        err = np.abs(got - want).max()
        slack = np.abs(want).max() * 2 ** -23 if d.dtype == np.float32 else 0
        assert 0 < err <= bound + slack, (s, v, err, bound)
        n += 1
        print(s, v, d.dtype, 'max |x - x~| =', err, '<= bound', bound)
assert n >= 3, n
print(n, 'zfp datasets read within their bound')
PY"
  cat py.$f32
done
check "2-rank zfp file reads too" "'$py' -c \"import h5py, hdf5plugin; f = h5py.File('zfp.h5', 'r'); [f['simulation'][s]['cell_data']['u'][...] for s in f['simulation'] if s.startswith('step_')]\""
exit $fail

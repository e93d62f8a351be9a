#!/usr/bin/env bash
# Compressed output (format 1.5) through `rewind run`, as a user meets it:
#  - [output.io] compression = deflate | lz4 | bitshuffle from --set and from the case
#    file; a run to T on 2 compute ranks, restarted from its compressed checkpoint on 2
#    and on 1, equals an uncompressed run to 2T bit for bit (every step: rewind diff);
#  - h5dump and h5py (Debian's, serial HDF5) read every compressed dataset, equal to
#    the uncompressed file's; rewind verify passes; the file is smaller;
#  - zfp visualisation steps stay within zfp_accuracy of the uncompressed run (rewind
#    diff --tol), checkpoints of the same run stay exact;
#  - bad values: one error line naming the key, non-zero exit, no file written.
source "$(dirname "$0")/lib.sh" "$@"
. "$src/scripts/mpi-env.sh"
case_file=$src/cases/default.toml
# T = 0.1: visualisation every 0.05, checkpoint every 0.1.
sched=(--set output.checkpoint_interval=0.1 --set output.visualisation_interval=0.05 -q)
run() { run_compute "$@"; }
# Every step of two runs of the same schedule (T = 0.1: steps at t = 0, 0.05, ..., 0.2).
times="0 0.05 0.1 0.15 0.2"
same_all() { for t in $times; do same "$1@t=$t" "$2@t=$t" || return 1; done; }

run 1 "$case_file" --output full.h5 --set time.end=0.2 "${sched[@]}" --monitor full.csv
check "uncompressed run to 2T" "[ -f full.h5 ]"

for comp in deflate lz4 bitshuffle; do
  run 2 "$case_file" --output $comp.h5 --set time.end=0.1 "${sched[@]}" --monitor $comp.csv \
    --set "output.io.compression=\"$comp\"" --set output.io.chunk_grids=8
  check "$comp: run to T on 2 compute ranks" "[ -f $comp.h5 ]"
  cp $comp.h5 ${comp}1.h5 && cp $comp.csv ${comp}1.csv
  run 2 --restart $comp.h5 --set time.end=0.2 -q --monitor ${comp}c.csv
  run 1 --restart ${comp}1.h5 --set time.end=0.2 -q --monitor ${comp}1c.csv
  check "$comp: run to T + restart from the compressed checkpoint (2 -> 2 ranks) == run to 2T, every step bit for bit" "same_all full.h5 $comp.h5"
  check "$comp: ... (2 -> 1 rank) == run to 2T, every step bit for bit" "same_all full.h5 ${comp}1.h5"
  check "$comp: rewind verify" "'$rewind' verify $comp.h5 >verify.out 2>&1"
  step=$(h5ls $comp.h5/simulation | grep -o 'step_[0-9]*' | tail -1)
  check "$comp: h5dump reads a compressed dataset" \
    "h5dump -d /simulation/$step/cell_data/u -c 1,1,2,4 $comp.h5 >dump.out 2>&1 && grep -q 'DATA {' dump.out && ! grep -qi error dump.out"
  check "$comp: h5dump shows the chunked, filtered layout" "h5dump -pH -d /simulation/$step/cell_data/u $comp.h5 | grep -q CHUNKED"
  # lz4 alone hardly shrinks the solver's doubles: a run of u, v, p (the
  # all-zero w and T of a 2-D isothermal run made it look smaller) can come out larger.
  [ $comp = lz4 ] ||
    check "$comp: the file is smaller ($(stat -c %s $comp.h5) vs $(stat -c %s full.h5) bytes)" \
      "[ $(stat -c %s $comp.h5) -lt $(stat -c %s full.h5) ]"
  check "$comp: h5py reads every cell dataset, equal to the uncompressed run's" \
    "/usr/bin/python3 - $comp.h5 full.h5 >py.out 2>&1 <<'EOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
n = 0
for s in a['simulation']:
    if not s.startswith('step_'): continue
    def visit(name, obj):
        global n
        if isinstance(obj, h5py.Dataset) and obj.chunks is not None:
            assert np.array_equal(obj[...], b['simulation'][s][name][...]), (s, name)
            n += 1
    a['simulation'][s].visititems(visit)
assert n > 10, n
print(n, 'compressed datasets equal')
EOF"
done

# The same from the case file.
cp "$case_file" case.toml
printf '\n[output.io]\ncompression = "deflate"\ncompression_level = 6\nchunk_grids = 4\n' >>case.toml
"$rewind" run case.toml --steps 2 --output table.h5 -q >out 2>err; rc=$?
check "[output.io] compression in the case file is accepted" "[ $rc = 0 ] && h5dump -pH table.h5 | grep -q DEFLATE"

# zfp: lossy visualisation steps within the bound, exact checkpoints.
run 2 "$case_file" --output zfp.h5 --set time.end=0.2 "${sched[@]}" --monitor zfp.csv \
  --set 'output.io.visualisation_compression="zfp"' --set output.io.zfp_accuracy=1e-3 --set output.float32=false
run 1 "$case_file" --output full64.h5 --set time.end=0.2 "${sched[@]}" --monitor full64.csv --set output.float32=false
check "zfp: run" "[ -f zfp.h5 ]"
check "zfp: visualisation steps within 1e-3 of the uncompressed run (rewind diff --tol 1e-3)" \
  "'$rewind' diff zfp.h5@t=0.05 full64.h5@t=0.05 --tol 1e-3 >diff.zfp 2>&1 && '$rewind' diff zfp.h5@t=0.15 full64.h5@t=0.15 --tol 1e-3 >>diff.zfp 2>&1"
check "zfp: and not identical (lossy indeed)" "! same zfp.h5@t=0.05 full64.h5@t=0.05"
check "zfp: checkpoints exact (t = 0.1, 0.2)" \
  "'$rewind' diff zfp.h5@t=0.1 full64.h5@t=0.1 | grep -q '^identical' && '$rewind' diff zfp.h5@t=0.2 full64.h5@t=0.2 | grep -q '^identical'"
vis=$(h5ls zfp.h5/simulation | grep -o 'step_[0-9]*' | sed -n 2p)  # t = 0.05: a visualisation step
check "zfp: the bound is recorded on the dataset ($vis)" \
  "h5dump -a /simulation/$vis/cell_data/u/zfp_accuracy zfp.h5 2>&1 | grep -qF '(0): 0.001'"
check "zfp: rewind verify (zfp datasets: no row checksum; Fletcher-32 per chunk)" "'$rewind' verify zfp.h5 >verify.out 2>&1"
# Tools on a plain HDF5 read zfp through Rewind's plugin module (HDF5_PLUGIN_PATH).
plugins=$(realpath "$(dirname "$rewind")/../lib/hdf5-plugins")
check "zfp: h5dump reads it with HDF5_PLUGIN_PATH=$plugins" \
  "HDF5_PLUGIN_PATH=$plugins h5dump -d /simulation/$vis/cell_data/u -c 1,1,1,4 zfp.h5 >dump.zfp 2>&1 && grep -q 'DATA {' dump.zfp && ! grep -qi error dump.zfp"
check "zfp: and h5dump without the plugin says it cannot" "h5dump -d /simulation/$vis/cell_data/u zfp.h5 2>&1 | grep -qi 'error'"
check "zfp: Debian's h5py reads every zfp dataset within 1e-3 through the plugin" \
  "HDF5_PLUGIN_PATH=$plugins /usr/bin/python3 - zfp.h5 full64.h5 >py.zfp 2>&1 <<'EOF'
import sys, h5py, numpy as np
z, p = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
n = 0
for s in z['simulation']:
    if s.startswith('step_') and z['simulation'][s].attrs['kind'] == b'visualisation':
        for v, d in z['simulation'][s]['cell_data'].items():
            err = np.abs(d[...] - p['simulation'][s]['cell_data'][v][...]).max()
            assert 0 < err <= d.attrs['zfp_accuracy'], (s, v, err)
            n += 1
assert n >= 6, n
EOF"

# Bad values: one line naming the key, a non-zero exit, no file.
bad() {  # name, expected text, --set assignment...
  local name=$1 want=$2; shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  rm -f bad.h5
  "$rewind" run "$case_file" --steps 2 --output bad.h5 "${sets[@]}" >out 2>err; rc=$?
  check "$name: non-zero exit" "[ $rc != 0 ]"
  check "$name: one line" "[ \$(wc -l <err) = 1 ]"
  check "$name: names '$want'" "grep -qF -- \"$want\" err"
  check "$name: no file written" "[ ! -e bad.h5 ]"
}
bad "unknown compression" "output.io.compression: I/O option 'compression' must be" 'output.io.compression="zstd"'
check "unknown compression: lists the values" "grep -q 'none.*deflate.*lz4.*bitshuffle' err"
bad "zfp for checkpoints" "output.io.compression: I/O option 'compression' must be lossless" 'output.io.compression="zfp"'
bad "deflate level" "output.io.compression_level: I/O option 'compression_level' must be 1 ... 9, not 0" output.io.compression_level=0
bad "chunk of no grid" "output.io.chunk_grids: I/O option 'chunk_grids' must be at least 1" output.io.chunk_grids=0
bad "negative bound" "output.io.zfp_accuracy: I/O option 'zfp_accuracy' must be a number >= 0" output.io.zfp_accuracy=-1
bad "zfp without a bound" "output.io.visualisation_compression: I/O option 'visualisation_compression' =" \
  'output.io.visualisation_compression="zfp"'
check "zfp without a bound: says so" "grep -q 'needs zfp_accuracy > 0' err"
bad "independent transfers" "output.io.compression: I/O option 'compression' needs collective_transfer = true" \
  'output.io.compression="lz4"' output.io.collective_transfer=false
exit $fail

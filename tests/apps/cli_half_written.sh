#!/usr/bin/env bash
# A continue in place over a step that a lost node left half-written, as a user runs it
# under mpirun: the step's group reached the file, one of its datasets' headers did not
# (made here with h5py: the last committed step copied as an uncommitted one, a dataset
# header of the copy zeroed). `rewind run --restart F` exits 0 with one note naming the
# step it moved aside, the file verifies, and the continued run's last step equals the
# uninterrupted run's (numpy on the fields read with h5py).
#   cli_half_written.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
run() { "$mpiexec" -n 3 "$rewind" run "$@"; }  # one server rank, two compute ranks
run "$case_file" --output full.h5 --set time.end=0.1 --set output.checkpoint_interval=0.05 -q >full.log 2>&1
run "$case_file" --output half.h5 --set time.end=0.05 --set output.checkpoint_interval=0.05 -q >half.log 2>&1
cut=$(/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("half.h5", "r+") as f:
    sim = f["simulation"]
    last = max(int(k[5:]) for k in sim if k.startswith("step_"))
    name = f"step_{last + 1:08d}"
    f.copy(sim[f"step_{last:08d}"], sim, name)
    g = sim[name]
    g.attrs.modify("committed", np.uint8(0))
    if "step" in g.attrs:
        g.attrs.modify("step", np.array(last + 1, dtype=g.attrs["step"].dtype))
    ds = g["cell_data"][sorted(g["cell_data"])[0]]
    addr = h5py.h5o.get_info(ds.id).addr
with open("half.h5", "r+b") as raw:
    raw.seek(addr)
    raw.write(bytes(64))
print(name)
PY
)
check "a half-written step was made ($cut)" "[ -n '$cut' ]"
run --restart half.h5 --set time.end=0.1 >cont.log 2>&1
rc=$?
check "the continue over it exits 0" "[ $rc = 0 ]"
check "... with one note naming the step it moved aside" \
  "[ \$(grep -c 'was cut short before all of it reached the file; moved aside as /simulation/uncommitted_$cut' cont.log) = 1 ]"
check "the continued file verifies" "'$rewind' verify half.h5 >verify.out 2>&1"
check "its last step equals the uninterrupted run's (h5py + numpy)" "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, sys
def last(path):
    with h5py.File(path, 'r') as f:
        sim = f['simulation']
        k = max((s for s in sim if s.startswith('step_')), key=lambda s: int(s[5:]))
        g = sim[k]
        return float(g.attrs['time']), {n: g['cell_data'][n][:] for n in g['cell_data']}
(ta, a), (tb, b) = last('half.h5'), last('full.h5')
sys.exit(0 if ta == tb and a.keys() == b.keys() and all(np.array_equal(a[n], b[n]) for n in a) else 1)
PY"
exit $fail

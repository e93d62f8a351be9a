#!/usr/bin/env bash
# Checksums (format 1.4), as a user meets them under mpirun:
#  - the checksums of a step do not depend on how many ranks wrote it;
#  - `rewind verify` passes an intact file (exit 0) and names the step, dataset and grid
#    row of four bytes overwritten in the middle of a checkpoint's cell data (exit 1);
#  - a restart from the damaged step and a window of it stop with one line naming the
#    same, instead of continuing from silently corrupt data; other steps still work;
#  - a file written with checksums = false is reported as not verified and restarts;
#  - a copy one byte short opens, is said to be truncated, verifies and restarts.
#   cli_verify.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
opts=(--set time.end=0.06 --set output.checkpoint_interval=0.03 -q)
"$mpiexec" -n 4 "$rewind" run "$case_file" --output a.h5 "${opts[@]}" >a.log 2>&1 || { cat a.log; exit 1; }
"$mpiexec" -n 2 "$rewind" run "$case_file" --output b.h5 "${opts[@]}" >b.log 2>&1 || { cat b.log; exit 1; }

same_sums() {  # the checksums of every step of two files are equal (but the writer `rank`'s)
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
sa = sorted(k for k in a["simulation"] if k.startswith("step_"))
ok = sa == sorted(k for k in b["simulation"] if k.startswith("step_")) and len(sa) >= 3
for s in sa:
    x, y = a["simulation"][s]["checksums"], b["simulation"][s]["checksums"]
    names = x.attrs["datasets"]
    names = (names.decode() if isinstance(names, bytes) else names).split("\n")
    keep = [j for j, n in enumerate(names) if n != "rank"]
    ok = ok and x.attrs["datasets"] == y.attrs["datasets"] and "cell_data/u" in names
    ok = ok and np.array_equal(x[()][:, keep], y[()][:, keep])
sys.exit(0 if ok else 1)
PY
}
check "3 compute ranks and 1 write the same checksums for every step (but 'rank')" "same_sums a.h5 b.h5"
"$rewind" verify a.h5 >v0.log 2>&1
check "verify passes the intact file" "[ $? = 0 ] && grep -q 'a.h5: [0-9]* steps verified' v0.log"

# Four bytes in the middle of the last checkpoint's cell_data/u, as a failing disk or a
# stray write would leave them (HDF5 itself does not notice: the raw data has no checksum).
step=$(/usr/bin/python3 - <<'PY'
import h5py
f = h5py.File("a.h5", "r")
steps = [f["simulation"][k] for k in sorted(f["simulation"]) if k.startswith("step_")]
last = [s for s in steps if s.attrs["kind"] == b"checkpoint" or s.attrs["kind"] == "checkpoint"][-1]
d = last["cell_data/u"]
at = d.id.get_offset() + d.id.get_storage_size() // 2
print(last.attrs["step"], at)
PY
)
read -r nstep at <<<"$step"
/usr/bin/python3 -c "
f = open('a.h5', 'r+b'); f.seek($at); b = f.read(4); f.seek($at); f.write(bytes(x ^ 0x5a for x in b)); f.close()"
"$rewind" info a.h5 >info.log 2>&1
check "info still lists the damaged file" "[ $? = 0 ]"
"$rewind" verify a.h5 >v1.log 2>&1
check "verify exits 1 for the damaged file" "[ $? = 1 ]"
check "... naming the step and the dataset, with a count" \
  "grep -Eq \"^step +$nstep .* DAMAGED cell_data/u: 1 row does not match its checksum\" v1.log"
check "... and only that dataset" "[ \$(grep -c '^step.*DAMAGED' v1.log) = 1 ]"
"$rewind" verify --rows a.h5 >v1r.log 2>&1
check "--rows: the grid row" \
  "[ $? = 1 ] && grep -q \"/simulation/step_0*$nstep/cell_data/u: grid row [0-9]* does not match its checksum\" v1r.log"
"$rewind" verify a.h5@0 >v2.log 2>&1
check "an intact step still verifies" "[ $? = 0 ]"

"$mpiexec" -n 4 "$rewind" run --restart a.h5@$nstep --set time.end=0.09 --output c.h5 >r1.log 2>&1
check "a restart from the damaged step fails" "[ $? != 0 ]"
check "... with one line naming step, dataset and row" \
  "[ \$(grep -c 'cell_data/u: grid row [0-9]* does not match its checksum' r1.log) = 1 ]"
"$rewind" window a.h5@$nstep --box -9,-9,-9,9,9,9 --budget 10000000 --vars u >w1.log 2>&1
check "a window of the damaged step fails naming it" "[ $? != 0 ] && grep -q 'cell_data/u: grid row' w1.log"
"$rewind" window a.h5@0 --box -9,-9,-9,9,9,9 --budget 10000000 --vars u >w2.log 2>&1
check "a window of an intact step works" "[ $? = 0 ]"

"$mpiexec" -n 2 "$rewind" run "$case_file" --output n.h5 "${opts[@]}" --set output.io.checksums=false >n.log 2>&1
"$rewind" verify n.h5 >v3.log 2>&1
check "a file without checksums: not verified, exit 0" "[ $? = 0 ] && grep -q 'no checksums (not verified)' v3.log"
"$mpiexec" -n 2 "$rewind" run --restart n.h5 --set time.end=0.09 -q >r2.log 2>&1
check "... and it restarts" "[ $? = 0 ]"
"$rewind" verify missing.h5 >v4.log 2>&1
check "verify of a missing file: exit 2, one line" "[ $? = 2 ] && [ \$(wc -l <v4.log) = 1 ]"

# A copy one byte short (b.h5 was not damaged): opened, said to be truncated, every
# step verifies, and the last checkpoint restarts as the whole file's does.
head -c $(( $(stat -c %s b.h5) - 1 )) b.h5 >cut.h5
"$rewind" info cut.h5 >i5.log 2>&1
check "a file one byte short opens; rewind info says it is truncated" "[ $? = 0 ] && grep -q '^truncated   1 byte short of its end' i5.log"
"$rewind" verify cut.h5 >v5.log 2>&1
check "... rewind verify says so and finds every step intact (exit 0)" \
  "[ $? = 0 ] && grep -q 'cut.h5: truncated: 1 byte short' v5.log && ! grep -q CORRUPT v5.log"
"$mpiexec" -n 2 "$rewind" run --restart cut.h5 --set time.end=0.09 -o cut_more.h5 -q >r5.log 2>&1
"$mpiexec" -n 2 "$rewind" run --restart b.h5 --set time.end=0.09 -o b_more.h5 -q >r6.log 2>&1
check "... and its last checkpoint restarts, as the whole file's does, bit for bit" "[ $? = 0 ] && same cut_more.h5 b_more.h5"
exit $fail

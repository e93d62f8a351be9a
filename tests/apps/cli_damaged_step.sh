#!/usr/bin/env bash
# A damaged committed step is reported as damage, never taken for a step that is not
# there (docs/file-format.md §5), as a user meets it under mpirun:
#  - one byte flipped in the last step's `committed` attribute (located with h5py in its
#    object header): `rewind window F` (latest, t=T), `rewind run --restart F` and a
#    continue in place each refuse with one line naming the step, and leave the file as
#    it was (sha256); an earlier step named explicitly still reads, and branches;
#  - `rewind info --json` gives its time and kind as null, the text says DAMAGED;
#  - `rewind verify` names it and counts truthfully; h5py agrees that the index lists
#    it as committed and its group cannot be read;
#  - a damaged step in the middle: a continue in place refuses too (it would set it aside);
#  - verify names a damaged `rank` row as `rank` (once), not as `level_offsets`;
#  - verify waits for a step being written (the step lock), and says so past 5 s.
#   cli_damaged_step.sh REWIND SOURCE_DIR MPIEXEC
source "$(dirname "$0")/lib.sh" "$@"
case_file="$src/cases/default.toml"
"$mpiexec" -n 3 "$rewind" run "$case_file" --output a.h5 --set time.end=0.06 --set output.checkpoint_interval=0.03 \
  --set output.visualisation_interval=0.015 -q >a.log 2>&1 || { cat a.log; exit 1; }

# flip FILE STEP ATTRIBUTE: flips one bit of the value of a step group's attribute, found
# in the group's object header with h5py (independently of Rewind); prints the step.
flip() {
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys, h5py
path, which, name = sys.argv[1], sys.argv[2], sys.argv[3]
with h5py.File(path, "r") as f:
    names = sorted(k for k in f["simulation"] if k.startswith("step_"))
    g = f["simulation"][names[-1] if which == "last" else names[int(which)]]
    step = int(g.attrs["step"])
    addr = h5py.h5o.get_info(g.id).addr
with open(path, "rb") as fb:
    fb.seek(addr)
    blob = fb.read(1 << 16)
key = name.encode() + b"\0"
i, at = blob.find(key), None
while i >= 9 and at is None:
    ver, _, nsize, tsize, ssize = struct.unpack_from("<BBHHH", blob, i - 9)  # attribute message v3
    if ver == 3 and nsize == len(key):
        at = addr + i + nsize + tsize + ssize
    i = blob.find(key, i + 1)
assert at is not None, "attribute not found"
with open(path, "r+b") as fb:
    fb.seek(at)
    b = fb.read(1)[0]
    fb.seek(at)
    fb.write(bytes([b ^ 0x02]))
print(step)
PY
}
# the h5py oracle: STEP is listed as committed in /simulation/index, and its group cannot
# be read (or says it is not committed), while every other step's group reads
damaged_per_h5py() {
  /usr/bin/python3 - "$@" <<'PY'
import sys, h5py
path, step = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "r")
idx = f["simulation/index"][()]
ok = any(int(r["step"]) == step and r["committed"] == 1 for r in idx)
for k in f["simulation"]:
    if not k.startswith("step_"):
        continue
    try:
        readable = int(f["simulation"][k].attrs["committed"]) == 1
    except (OSError, KeyError):
        readable = False
    ok = ok and readable == (int(k[5:]) != step)
sys.exit(0 if ok else 1)
PY
}
cp a.h5 d.h5
D=$(flip d.h5 last committed)
C=$(/usr/bin/python3 -c "
import h5py
f = h5py.File('a.h5', 'r')
print([int(g.attrs['step']) for k, g in sorted(f['simulation'].items()) if k.startswith('step_')
       and g.attrs['kind'] in (b'checkpoint', 'checkpoint') and int(g.attrs['step']) < $D][-1])")
sum0=$(sha256sum <d.h5)
check "h5py: the index lists step $D as committed, its group cannot be read; the others can" "damaged_per_h5py d.h5 $D"
one_line_naming() {  # LOG: one line of rewind's (mpiexec adds its own) names step $D as damaged
  [ "$(grep -c "step $D is damaged" "$1")" = 1 ] && [ "$(grep -c '^rewind' "$1")" = 1 ] && ! grep -q 'HDF5' "$1"
}

box=(--box -9,-9,-9,9,9,9 --budget 1000000 --vars u)
"$rewind" window d.h5 "${box[@]}" --out w1.json >w1.log 2>&1
check "window of the latest step refuses, one line naming step $D" "[ $? != 0 ] && one_line_naming w1.log"
"$rewind" window d.h5@t=99 "${box[@]}" --out w2.json >w2.log 2>&1
check "... as does a time after the last intact step (t=99)" "[ $? != 0 ] && one_line_naming w2.log"
"$rewind" window "d.h5@#-1" "${box[@]}" --out w3.json >w3.log 2>&1
check "... and #-1" "[ $? != 0 ] && one_line_naming w3.log"
"$rewind" window d.h5@$C "${box[@]}" --out w4.json >w4.log 2>&1
"$rewind" window a.h5@$C "${box[@]}" --out w5.json >w5.log 2>&1
check "an earlier step named explicitly reads as in the intact file" \
  "grep -q 'name it (d.h5@' w1.log && cmp -s <(grep -v '\"file\"' w4.json) <(grep -v '\"file\"' w5.json)"

"$mpiexec" -n 3 "$rewind" run --restart d.h5 --set time.end=0.09 -q >r1.log 2>&1
check "run --restart (latest) refuses, one line naming step $D" "[ $? != 0 ] && one_line_naming r1.log"
check "... and branches nowhere" "! ls d.branch*.h5 >/dev/null 2>&1"
"$mpiexec" -n 3 "$rewind" run --restart d.h5@$C --set time.end=0.09 -q >r2.log 2>&1
check "a continue in place from step $C refuses, one line naming step $D" \
  "[ $? != 0 ] && one_line_naming r2.log && grep -q 'would set it aside' r2.log"
check "the file is unchanged (sha256)" "[ \"$(sha256sum <d.h5)\" = \"$sum0\" ] && damaged_per_h5py d.h5 $D"
"$mpiexec" -n 3 "$rewind" run --restart d.h5@$C --set time.end=0.09 -o br.h5 -q >r3.log 2>&1
check "a branch from step $C into a new file runs" "[ $? = 0 ]"
"$rewind" verify br.h5 >vb.log 2>&1
check "... and verifies (rewind verify, h5py)" "[ $? = 0 ] && lod_ok br.h5"
check "the damaged file is still unchanged" "[ \"$(sha256sum <d.h5)\" = \"$sum0\" ]"

"$rewind" info --json d.h5 >i.json 2>i.err
check "info --json: step $D has time, kind null, damaged true" "/usr/bin/python3 -c \"
import json, sys
s = [x for x in json.load(open('i.json'))['steps'] if x['step'] == $D]
sys.exit(0 if len(s) == 1 and s[0]['time'] is None and s[0]['kind'] is None and s[0]['damaged'] is True else 1)\""
"$rewind" info d.h5 >i.log 2>&1
check "info: the step's line says DAMAGED" "grep -Eq '^ +$D .*DAMAGED' i.log"
n=$(/usr/bin/python3 -c "import h5py; print(sum(1 for k in h5py.File('a.h5','r')['simulation'] if k.startswith('step_')))")
"$rewind" verify d.h5 >v1.log 2>&1
check "verify: exit 1, step $D DAMAGED, '1 of $n steps damaged, $((n - 1)) verified'" \
  "[ $? = 1 ] && grep -Eq '^step +$D .*DAMAGED' v1.log && grep -q ': DAMAGED: 1 of $n steps damaged, $((n - 1)) verified' v1.log"

# A damaged step in the middle: the latest checkpoint is after it, and a continue from it
# would set the damaged step aside.
cp a.h5 m.h5
M=$(flip m.h5 1 committed)
sum1=$(sha256sum <m.h5)
"$mpiexec" -n 2 "$rewind" run --restart m.h5 --set time.end=0.09 -q >r4.log 2>&1
check "a continue past a damaged middle step (step $M) refuses naming it" \
  "[ $? != 0 ] && [ \$(grep -c 'step $M is damaged' r4.log) = 1 ] && [ \"\$(sha256sum <m.h5)\" = \"$sum1\" ]"

# A `rank` row overwritten: named as `rank`, once, and the summary counts the steps read.
cp a.h5 k.h5
/usr/bin/python3 -c "
import h5py
d = h5py.File('k.h5', 'r')['simulation/step_00000000/rank']
at = d.id.get_offset()
f = open('k.h5', 'r+b'); f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 0x40]))"
"$rewind" verify k.h5 >v2.log 2>&1
check "verify: a damaged rank row is named rank, once, not level_offsets" \
  "[ $? = 1 ] && [ \$(grep -c 'DAMAGED' v2.log) = 2 ] && grep -q 'DAMAGED rank: 1 row' v2.log && ! grep -q level_offsets v2.log"
check "... and the summary says 1 of $n steps damaged, $((n - 1)) verified" \
  "grep -q ': DAMAGED: 1 of $n steps damaged, $((n - 1)) verified$' v2.log"

# verify while a step is written: the writer holds the file's step lock (an OFD lock on
# byte 2^62, docs/file-format.md §5); verify waits for it, then answers, and past 5 s says
# the file is being written (one line, exit 2) instead of reading a half-written step.
hold() {  # FILE SECONDS: holds the step lock as a writer does, in the background
  /usr/bin/python3 -c "
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack('hhqqi4x', fcntl.F_WRLCK, os.SEEK_SET, 1 << 62, 1, 0))
print('held', flush=True)
time.sleep(float(sys.argv[2]))" "$@" >hold.out &
  until grep -q held hold.out 2>/dev/null; do sleep 0.05; done
}
hold a.h5 1.5
"$rewind" verify a.h5 >v3.log 2>&1
check "verify waits for a step being written, then verifies the file (exit 0)" "[ $? = 0 ] && grep -q 'steps verified' v3.log"
wait
hold a.h5 8
"$rewind" verify a.h5 >v4.log 2>&1
check "... and past 5 s says it is being written: one line, exit 2" \
  "[ $? = 2 ] && [ \$(grep -c . v4.log) = 1 ] && grep -q 'a.h5: being written' v4.log"
wait
exit $fail

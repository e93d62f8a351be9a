#!/usr/bin/env bash
# The vorticity example hook against an independent computation: a periodic
# Taylor-Green run (2-D, then 3-D; [insitu] in the case file, every = 2 from --set)
# under `mpirun -n NP` hands every 2nd step to
# examples/insitu/vorticity_extrema.cpp and writes the same steps (float64) to the
# file; the CSV's min and max vorticity must equal, to round-off, those computed with
# h5py from the file's leaf grids (central differences across grid edges and the
# periodic wrap: what the hook reads from the halos).
#   cli_vorticity.sh REWIND SOURCE_DIR MPIEXEC HOOK NP
source "$(dirname "$0")/../apps/lib.sh" "$@"
hook=$(realpath "$4") np=$5
launch() { if [ "$np" = 1 ]; then "$rewind" "$@"; else "$mpiexec" -n "$np" "$rewind" "$@"; fi; }

for dim in 2 3; do
  # The shipped Taylor-Green case, small, with an [insitu] section in the file (the
  # steps between calls come from --set, the 3-D domain too).
  if [ $dim = 2 ]; then  # a 2-D run solves (and writes) no w
    shape=(--set tree.depth=2 --set 'tree.s=[8,8,1]' --set 'output.variables=["u","v"]')
  else
    shape=(--set tree.depth=1 --set 'tree.r=[2,2,2]' --set 'tree.s=[8,8,8]' --set 'domain.periodic=[true,true,true]'
           --set 'output.variables=["u","v","w"]'
           --set 'domain.hi=[6.283185307179586,6.283185307179586,6.283185307179586]')
  fi
  cp "$src/cases/taylor-green.toml" tg$dim.toml
  printf '\n[insitu]\nlibrary = "%s"\nevery = 1\nargs = "vort%s.csv"\n' "$hook" $dim >>tg$dim.toml
  run=(run tg$dim.toml "${shape[@]}" --set solver.tolerance=1e-8 --set monitor.progress=0 --set insitu.every=2
       --set output.visualisation_every=2 --set output.float32=false)
  launch "${run[@]}" --output tg$dim.h5 --steps 6 >run$dim.out 2>&1
  rc=$?
  check "$dim-D, np $np: the run with the hook succeeds" "[ $rc = 0 ] && ! grep -q 'insitu      error' run$dim.out"
  check "$dim-D, np $np: the run reports 4 steps handed over" "grep -q 'insitu      .*: 4 steps handed over, every 2' run$dim.out"
  /usr/bin/python3 - tg$dim.h5 vort$dim.csv $dim >check$dim.out 2>&1 <<'PY'
import sys, h5py, numpy as np
path, csv, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [l.split(",") for l in open(csv) if l[0].isdigit()]
got = {int(r[0]): (float(r[1]), float(r[2]), float(r[3])) for r in rows}
assert sorted(got) == [0, 2, 4, 6], f"CSV steps {sorted(got)}, expected 0 2 4 6"
with h5py.File(path, "r") as f:
    dom = f["common"].attrs["domain"]
    sx, sy, sz = (int(v) for v in f["common"].attrs["block_cells"])
    for step, (t, lo, hi) in got.items():
        g = f[f"simulation/step_{step:08d}"]
        assert abs(g.attrs["time"] - t) <= 1e-15 * max(1.0, abs(t)), f"step {step}: time {t} vs {g.attrs['time']}"
        leaf = (g["child_rows"][:] < 0).all(axis=1)
        box, lev = g["bounding_box"][:][leaf], g["level"][:][leaf]
        assert len(set(lev)) == 1, "the test expects a uniform tree"
        names = "uv" if dim == 2 else "uvw"
        fields = {n: g["cell_data/" + n][:][leaf] for n in names}
        assert all(a.dtype == np.float64 for a in fields.values())
        h = [(box[0][2 * a + 1] - box[0][2 * a]) / (sx, sy, sz)[a] for a in range(3)]
        n = [int(round((dom[2 * a + 1] - dom[2 * a]) / h[a])) for a in range(3)]
        glob = {k: np.full((n[2], n[1], n[0]), np.nan) for k in names}
        for q, b in enumerate(box):
            i0, j0, k0 = (int(round((b[2 * a] - dom[2 * a]) / h[a])) for a in range(3))
            for k in names:
                glob[k][k0:k0 + sz, j0:j0 + sy, i0:i0 + sx] = fields[k][q]
        assert not any(np.isnan(a).any() for a in glob.values()), "leaves do not tile the domain"
        d = lambda q, ax, hh: (np.roll(q, -1, axis=ax) - np.roll(q, 1, axis=ax)) / (2.0 * hh)  # periodic wrap
        u, v, w = glob["u"], glob["v"], glob.get("w")
        oz = d(v, 2, h[0]) - d(u, 1, h[1])
        if dim == 2:
            om = oz
        else:
            ox = d(w, 1, h[1]) - d(v, 0, h[2])
            oy = d(u, 0, h[2]) - d(w, 2, h[0])
            om = np.sqrt(ox * ox + oy * oy + oz * oz)
        want = (om.min(), om.max())
        for name, a, b in (("min", lo, want[0]), ("max", hi, want[1])):
            assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), f"step {step}: {name} {a!r} from the hook, {b!r} from the file"
        assert want[1] - want[0] > 0.5, f"step {step}: a flat field ({want}) proves nothing"
        print(f"step {step}: min {lo:.17g} max {hi:.17g} match")
PY
  check "$dim-D, np $np: CSV extrema equal the file's vorticity at steps 0 2 4 6" "[ $? = 0 ]"
done
[ $fail = 0 ] || { cat run*.out check*.out; }
exit $fail

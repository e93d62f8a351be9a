#!/usr/bin/env bash
# The Catalyst hook (insitu/catalyst) running the shipped script
# (insitu/catalyst/scripts/extract_vtpd.py, a GUI-style "script-version: 2.0" Catalyst
# script) under `mpirun -n NP`: a 2-D run hands steps 0, 2, 4 to Catalyst; each must
# leave datasets/input_00000N.vtpd whose images, less their ghost (halo) cells, hold
# exactly the run's leaf cells, with finite u, v, p equal to the file's (zero-copy
# must hand over the live arrays, not stale or shifted ones); no other step may be there.
# With STRATEGY = dedicated the hook runs on the I/O rank (the last of NP), Catalyst's
# interpreter with it, and sees the same. The run's log goes to a file under a colour
# terminal's TERM: VTK's logger must write it plain (no ANSI escape byte).
#   cli_catalyst.sh REWIND SOURCE_DIR MPIEXEC CATALYST_HOOK NP [STRATEGY]
source "$(dirname "$0")/../apps/lib.sh" "$@"
hook=$(realpath "$4") np=$5 strategy=${6:-collective}
launch() { if [ "$np" = 1 ]; then "$rewind" "$@"; else "$mpiexec" -n "$np" "$rewind" "$@"; fi; }
script="$src/insitu/catalyst/scripts/extract_vtpd.py"

TERM=xterm-256color launch run "$src/cases/taylor-green.toml" --output cat.h5 --steps 4 --set tree.depth=1 --set 'tree.s=[8,8,1]' \
  --set monitor.progress=0 --set output.visualisation_every=2 --set output.float32=false \
  --set "output.io.strategy=\"$strategy\"" --set insitu.library="$hook" --set insitu.every=2 --set "insitu.args=\"$script\"" >run.out 2>&1
rc=$?
check "np $np: the run with the Catalyst hook succeeds, no hook error" "[ $rc = 0 ] && ! grep -q 'insitu      error' run.out"
check "np $np: the log in a file is plain text (TERM=xterm-256color, no ESC byte)" "! grep -q \$'\\x1b' run.out"
check "np $np: the script ran at steps 0, 2, 4 (its catalyst_execute line)" \
  "[ \"\$(grep -o 'catalyst    step [0-9]*' run.out | tr '\n' ' ')\" = 'catalyst    step 0 catalyst    step 2 catalyst    step 4 ' ]"
check "np $np: extracts for steps 0, 2, 4 and no others" \
  "[ \"\$(cd datasets 2>/dev/null && ls *.vtpd | tr '\n' ' ')\" = 'input_000000.vtpd input_000002.vtpd input_000004.vtpd ' ]"
/usr/bin/python3 - cat.h5 >check.out 2>&1 <<'PY'
import sys, glob, h5py, numpy as np
from vtkmodules.vtkIOXML import vtkXMLPartitionedDataSetReader
from vtkmodules.util.numpy_support import vtk_to_numpy
with h5py.File(sys.argv[1], "r") as f:
    for step in (0, 2, 4):
        g = f[f"simulation/step_{step:08d}"]
        leaf = (g["child_rows"][:] < 0).all(axis=1)
        want = {n: np.sort(g["cell_data/" + n][:][leaf].ravel()) for n in ("u", "v", "p")}
        r = vtkXMLPartitionedDataSetReader()
        r.SetFileName(f"datasets/input_{step:06d}.vtpd")
        r.Update()
        pds = r.GetOutput()
        got = {n: [] for n in want}
        images = 0
        for i in range(pds.GetNumberOfPartitions()):
            im = pds.GetPartition(i)
            if im is None or im.GetNumberOfCells() == 0:
                continue
            images += 1
            cd = im.GetCellData()
            ghost = vtk_to_numpy(cd.GetArray("vtkGhostType"))
            assert im.GetNumberOfCells() == 10 * 10, f"an image of {im.GetNumberOfCells()} cells, not 10 x 10 (8 x 8 + halo)"
            assert (ghost == 0).sum() == 64, "not 64 interior cells"
            for n in got:
                a = vtk_to_numpy(cd.GetArray(n))[ghost == 0]
                assert np.isfinite(a).all(), f"step {step}: non-finite {n}"
                got[n].append(a)
            vel = vtk_to_numpy(cd.GetArray("velocity"))[ghost == 0]
            assert np.array_equal(vel[:, 0], got["u"][-1]) and np.array_equal(vel[:, 1], got["v"][-1]), "velocity != (u, v)"
        assert images == leaf.sum() == 4, f"step {step}: {images} images, {leaf.sum()} leaf grids"
        for n in want:
            a = np.sort(np.concatenate(got[n]))
            assert a.size == want[n].size == 256, f"step {step}: {a.size} {n} values, expected 256"
            assert np.array_equal(a, want[n]), f"step {step}: {n} differs from the file's"
        print(f"step {step}: {images} images, 256 interior cells, u v p equal to the file's")
PY
check "np $np: each extract holds the 4 leaf grids' 256 interior cells, finite, equal to the file's u, v, p" "[ $? = 0 ]"
[ $fail = 0 ] || cat run.out check.out
exit $fail

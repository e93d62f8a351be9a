# The plugin's level-of-detail cut (MaximumLevel) of a run file against what its leaves
# imply (expected.py: tests/support/lod_oracle.py, h5py + numpy): every level from the
# root down to the leaves shows the sum of u the leaves imply, to round-off.
#   pvpython level_cut.py PLUGIN FILE EXPECTED.json
import json, math, os, sys
from paraview.simple import LoadPlugin
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pv_util import images  # noqa: E402

plugin, path, expected = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
LoadPlugin(plugin, remote=False, ns=globals())
reader = RewindRunFile(FileName=path)  # noqa: F821 (defined by the plugin)
times = list(reader.TimestepValues)
ok = True
for level, want in enumerate(expected["lod_u_sums"]):
    reader.MaximumLevel = level
    reader.UpdatePipeline(times[-1])
    mb = reader.GetClientSideObject().GetOutputDataObject(0)
    total = 0.0
    for _, img in images(mb):
        u = img.GetCellData().GetArray("u")
        total += sum(u.GetValue(i) for i in range(u.GetNumberOfTuples()))
    good = math.isclose(total, want, rel_tol=1e-9, abs_tol=1e-9)
    ok = ok and good
    print(f"{'ok  ' if good else 'FAIL'} MaximumLevel {level}: sum of u {total:.12g}, its leaves imply {want:.12g}")
sys.exit(0 if ok else 1)

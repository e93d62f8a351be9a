# Stock ParaView (pvpython, no Rewind plugin) opens the VTKHDF views of compressed runs:
# every cell value of u at a visualisation step equals the uncompressed run's (lossless
# filters) or is within the zfp bound. Usage: pvpython views_compressed.py BOUND NAME...
# (NAME.views/NAME.hdf.series; the first NAME is the uncompressed reference.)
import sys
from paraview.simple import OpenDataFile

bound, names = float(sys.argv[1]), sys.argv[2:]


def values(name):
    reader = OpenDataFile(f"{name}.views/{name}.hdf.series")
    times = list(reader.TimestepValues)
    reader.UpdatePipeline(times[1])  # a visualisation step (step 0 and the last are checkpoints)
    amr = reader.GetClientSideObject().GetOutputDataObject(0)
    out = []
    it = amr.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        a = it.GetCurrentDataObject().GetCellData().GetArray("u")
        out += [a.GetValue(i) for i in range(a.GetNumberOfTuples())] if a else []
        it.GoToNextItem()
    return out


ref = values(names[0])
assert ref, "no values in the uncompressed views"
ok = True
for name in names[1:]:
    got = values(name)
    err = max(abs(x - y) for x, y in zip(got, ref)) if len(got) == len(ref) else float("inf")
    limit = bound if name.startswith("zfp") else 0.0
    good = err <= limit and (err > 0 or limit == 0)
    ok = ok and good
    print(f"{'ok  ' if good else 'FAIL'} {name}: {len(got)} values, max |u - u_none| = {err} (allowed {limit})", flush=True)
sys.exit(0 if ok else 1)

# Loads the Rewind ParaView plugin, opens a run file, and compares what it shows with
# expected.json (computed from the file with h5py).
import json, math, sys
from paraview.simple import LoadPlugin, UpdatePipeline

plugin, path, expected = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
LoadPlugin(plugin, remote=False, ns=globals())
reader = RewindRunFile(FileName=path)  # noqa: F821 (defined by the plugin)

times = list(reader.TimestepValues)
assert times == expected["times"], (times, expected["times"])

def shown(max_level):
    reader.MaximumLevel = max_level
    reader.UpdatePipeline(times[-1])
    mb = reader.GetClientSideObject().GetOutputDataObject(0)
    counts, total = [], 0.0
    for l in range(mb.GetNumberOfBlocks()):
        pieces = mb.GetBlock(l)
        counts.append(pieces.GetNumberOfPieces())
        for p in range(pieces.GetNumberOfPieces()):
            img = pieces.GetPiece(p)
            assert img.GetNumberOfCells() == expected["cells_per_grid"], img.GetNumberOfCells()
            u = img.GetCellData().GetArray("u")
            assert img.GetCellData().GetArray("cell_type") is not None, "no cell_type array"
            total += sum(u.GetValue(i) for i in range(u.GetNumberOfTuples()))
    return counts, total

counts, total = shown(-1)
print("leaves per level", counts, "sum u", total)
assert counts == expected["leaves_per_level"], (counts, expected["leaves_per_level"])
assert math.isclose(total, expected["leaf_u_sum"], rel_tol=1e-12, abs_tol=1e-9), (total, expected["leaf_u_sum"])

counts, total = shown(1)
print("level-of-detail 1:", counts, "sum u", total)
assert sum(counts) == expected["lod1_grids"], (counts, expected["lod1_grids"])
assert math.isclose(total, expected["lod1_u_sum"], rel_tol=1e-12, abs_tol=1e-9), (total, expected["lod1_u_sum"])
print("OK")

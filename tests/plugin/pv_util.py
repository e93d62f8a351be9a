# Helpers of the plugin tests (run inside pvpython): the output of a Rewind source as the
# window dump tests/collector/check_window.py compares with the file, value by value.
import json


def images(mb):
    """(level, vtkImageData) of every piece, in block (level) order."""
    out = []
    for level in range(mb.GetNumberOfBlocks()):
        pieces = mb.GetBlock(level)
        for p in range(pieces.GetNumberOfPieces()):
            out.append((level, pieces.GetPiece(p)))
    return out


def field(data, name, component=None):
    a = data.GetFieldData().GetAbstractArray(name)
    assert a is not None, f"no field data {name}"
    if component is None:
        return a.GetValue(0)
    return [a.GetComponent(0, c) for c in range(a.GetNumberOfComponents())]


def window_of(mb, variables):
    """The output as a `rewind window --out X.json` dump (check_window.py's input)."""
    w = {"step": int(field(mb, "rewind_step")), "time": field(mb, "rewind_time"),
         "level": int(field(mb, "rewind_level")), "stride": int(field(mb, "rewind_stride")),
         "file": field(mb, "rewind_file"), "variables": list(variables), "pieces": [],
         "values": [[] for _ in variables], "cell_type": []}
    for level, img in images(mb):
        nx, ny, nz = (max(d - 1, 1) for d in img.GetDimensions())  # a 2-D case: planes
        w["pieces"].append({"row": int(field(img, "rewind_row")), "uid": int(field(img, "rewind_uid")),
                            "level": int(field(img, "rewind_level")),
                            "first": [int(x) for x in field(img, "rewind_first", True)],
                            "count": [nx, ny, nz], "stride": int(field(img, "rewind_stride"))})
        assert w["pieces"][-1]["level"] == level, "piece in the block of another level"
        cd = img.GetCellData()
        for i, v in enumerate(variables):
            a = cd.GetArray(v)
            assert a is not None, f"no cell array {v}"
            w["values"][i] += [a.GetValue(j) for j in range(a.GetNumberOfTuples())]
        t = cd.GetArray("cell_type")
        if t is not None:
            w["cell_type"] += [t.GetValue(j) for j in range(t.GetNumberOfTuples())]
    w["cells"] = sum(p["count"][0] * p["count"][1] * p["count"][2] for p in w["pieces"])
    lod = mb.GetFieldData().GetAbstractArray("rewind_lod")
    w["lod"] = lod.GetValue(0) if lod is not None else "uniform"
    w["ranges"] = {}  # the colour ranges the window carries (field data rewind_range_<var>)
    for v in variables:
        r = mb.GetFieldData().GetArray("rewind_range_" + v)
        if r is not None:
            w["ranges"][v] = [r.GetValue(0), r.GetValue(1)]
    return w


def dump(mb, variables, path):
    w = window_of(mb, variables)
    with open(path, "w") as f:
        json.dump(w, f)
    return w

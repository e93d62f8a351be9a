"""Drives python/rewind/client.py against a running `rewind serve`: writes the window as
the JSON dump check_window.py reads, and checks the client's errors.

usage: python_client_check.py SRC_DIR PORT TOKEN OUT.json [FILE.h5]
With FILE.h5 (the file served), the window's ranges (revision 1.11) are checked against
its cells with h5py + numpy: min / max over the non-solid cells of the grids shown.
"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1] + "/python")
from rewind.client import HEADER, Client, CollectorError, InvalidArgument, _window, decode  # noqa: E402

port, token, out = int(sys.argv[2]), sys.argv[3], sys.argv[4]
with Client("127.0.0.1", port, token=token, timeout=10) as c:
    assert c.server["protocol"] == 1
    assert c.server["codec"] == "none", c.server  # loopback: uncompressed first
    info = c.info()
    assert [v["name"] for v in info["variables"]][:2] == ["u", "v"], info["variables"]
    assert len(c.steps()) >= 2
    w = c.window(((0, 0, 0), (2.2, 0.41, 1)), 3000, ["p", "u"], time="latest")
    assert w.values["p"].dtype.str == "<f8" and w.values["p"].size == w.cells
    assert sum(a.size for a in w.piece_arrays("u")) == w.cells
    if len(sys.argv) > 5:  # 1.11: each variable's range over the shown grids' non-solid cells
        import h5py
        import numpy as np
        with h5py.File(sys.argv[5], "r") as h5:
            s = h5["simulation/step_%08d" % w.step]
            rows = sorted({p["row"] for p in w.pieces})
            fluid = s["cell_type"][()][rows] != 1
            want = {v: (float(s["cell_data/" + v][()][rows][fluid].min()), float(s["cell_data/" + v][()][rows][fluid].max()))
                    for v in w.variables}
        assert sorted(w.ranges) == sorted(want) and all(np.allclose(w.ranges[v], want[v], rtol=0, atol=0) for v in want), \
            (w.ranges, want)
    with open(out, "w") as f:
        json.dump({"step": w.step, "time": w.time, "level": w.level, "stride": w.stride, "cells": w.cells,
                   "pieces": w.pieces, "variables": w.variables,
                   "values": [w.values[v].tolist() for v in w.variables], "cell_type": w.cell_type.tolist(),
                   "ranges": {k: [x if x == x else None for x in r] for k, r in w.ranges.items()}}, f)
    # Revision 1.7: the pieces came as a binary table (the default); a client asking for
    # the JSON list gets the same pieces and values (the dump above is checked against
    # the file with h5py by check_window.py).
    assert c.server.get("piece_table") is True and w.table is not None and len(w) == len(w.table)
    with Client("127.0.0.1", port, token=token, timeout=10, piece_table=False) as listed:
        assert "piece_table" not in listed.server
        wl = listed.window(((0, 0, 0), (2.2, 0.41, 1)), 3000, ["p", "u"], time="latest")
        assert wl.table is None and wl.pieces == w.pieces, (wl.pieces[:1], w.pieces[:1])
        assert all((wl.values[v] == w.values[v]).all() for v in ("p", "u"))
        assert [p.values["u"].shape for p in wl] == [p.values["u"].shape for p in w]
    # No variables named: the step's own (a visualisation step of the default case: u, v, p).
    vis = next(s for s in c.steps() if s["kind"] == "visualisation")
    wv = c.window(((0, 0, 0), (2.2, 0.41, 0)), 3000, time=str(vis["step"]))
    assert wv.variables == ["u", "v", "p"], wv.variables
    for bad, code in ((dict(box=((1, 0, 0), (0, 1, 1)), budget=5), "bad_argument"),
                      (dict(box=((0, 0, 0), (1, 1, 1)), budget=5, variables=["rho"]), "unknown_variable"),
                      (dict(box=((0, 0, 0), (1, 1, 1)), budget=5, time="77"), "no_such_step"),
                      (dict(box=((0, 0, 0), (1, 1, 1)), budget=5, time="t=99"), "no_such_step")):
        try:
            c.window(**bad)
            raise SystemExit(f"accepted {bad}")
        except CollectorError as e:
            assert e.code == code, (e.code, code)
    # An offline server steers nothing: not announced, and refused by the server itself.
    assert not c.offers("status")
    try:
        c._call("set_request", {"values": {"physics.nu": 0.1}})
        raise SystemExit("rewind serve accepted set")
    except CollectorError as e:
        assert e.code == "unsupported", e.code
    assert len(c.steps()) >= 2
# Both codecs deliver the same window.
box = ((0, 0, 0), (2.2, 0.41, 1))
with Client("127.0.0.1", port, token=token, timeout=10, codec="zstd") as z, \
        Client("127.0.0.1", port, token=token, timeout=10, codec="none") as n:
    assert (z.server["codec"], n.server["codec"]) == ("zstd", "none")
    wz, wn = (c.window(box, 3000, ["p", "u"], time="latest") for c in (z, n))
    assert wz.pieces == wn.pieces and wz.cells == wn.cells == w.cells
    assert all((wz.values[v] == wn.values[v]).all() for v in ("p", "u")) and (wz.cell_type == wn.cell_type).all()
    # A client that reads none too (the default away from loopback): arrays zstd would not
    # shrink come as they are (1.6), each array naming its codec; the same values.
    with Client("127.0.0.1", port, token=token, timeout=10, codec=["zstd", "none"]) as zn:
        assert zn.server["codec"] == "zstd"
        wzn = zn.window(box, 3000, ["p", "u"], time="latest")
        req = {"box": {"lo": [0, 0, 0], "hi": [2.2, 0.41, 1]}, "budget": 3000, "time": "latest", "variables": ["p", "u"]}
        codecs = [(a["name"], a["codec"]) for a in zn._call("window_request", req)[0]["arrays"]]
        # float64 fields as they are, the cell types and the piece table (1.7) packed
        assert codecs == [("pieces", "zstd"), ("p", "none"), ("u", "none"), ("cell_type", "zstd")], codecs
        assert all((wzn.values[v] == wn.values[v]).all() for v in ("p", "u")) and (wzn.cell_type == wn.cell_type).all()
    for bad in ([], ["gzip"], "gzip", ["none", 3]):
        try:
            Client("127.0.0.1", port, token=token, timeout=10, codec=bad)
            raise SystemExit(f"codec={bad!r} accepted")
        except InvalidArgument:
            pass
    # Into the previous window's arrays: the same memory, refilled.
    wn.values["u"][:] = -1
    again = n.window(box, 3000, ["p", "u"], time="latest", out=wn)
    assert again.values["u"] is wn.values["u"] and (again.values["u"] == wz.values["u"]).all()
    # By default (codec none) a window's arrays are views of one buffer, which a later
    # window reuses only once no array of it is held: held arrays keep their values.
    held = n.window(box, 3000, ["p", "u"], time="latest")
    assert held.values["p"].base is held.values["u"].base is held.cell_type.base is not None
    held.values["u"][:] = -2
    other = n.window(box, 3000, ["p", "u"], time="latest")
    assert (held.values["u"] == -2).all() and (other.values["u"] == wz.values["u"]).all()
    address = other.values["p"].ctypes.data
    del other
    assert n.window(box, 3000, ["p", "u"], time="latest").values["p"].ctypes.data == address


def frame(entries, tail):
    """A window_reply frame with these array entries and bytes after the JSON."""
    text = json.dumps({"arrays": entries}).encode()
    payload = struct.pack("<I", len(text)) + text + tail
    return HEADER.pack(b"RWCL", 1, 8, 1, 0, len(payload)), payload


# Uncompressed arrays whose sizes do not add up, and unknown codecs, are malformed.
values = struct.pack("<2d", 1.5, 2.5)
kind, _, _, arrays = decode(*frame([{"name": "p", "dtype": "f64", "raw": 16, "zbytes": 16, "codec": "none"}], values))
assert kind == "window_reply" and arrays[0].tolist() == [1.5, 2.5]
for entry, tail in (({"raw": 16, "zbytes": 8, "codec": "none"}, values[:8]),
                    ({"raw": 8, "zbytes": 16, "codec": "none"}, values),
                    ({"raw": 16, "zbytes": 16, "codec": "none"}, values[:15]),
                    ({"raw": 16, "zbytes": 16, "codec": "lz4"}, values)):
    try:
        decode(*frame([dict(entry, name="p", dtype="f64")], tail))
        raise SystemExit(f"decoded {entry}")
    except CollectorError as e:
        assert e.code == "malformed", (e.code, entry)
# Piece tables (1.7): read at the documented offsets; tables that lie are malformed.
def table_frame(records, cells, values, meta_extra=None, table_raw=None):
    table = b"".join(struct.pack("<qQii3i3i3d3d", *r) for r in records)[:table_raw]
    entries = [{"name": "pieces", "dtype": "piece", "raw": len(table), "zbytes": len(table), "codec": "none"},
               {"name": "p", "dtype": "f64", "raw": len(values), "zbytes": len(values), "codec": "none"},
               {"name": "cell_type", "dtype": "u8", "raw": 0, "zbytes": 0, "codec": "none"}]
    meta = {"step": 1, "time": 0.5, "file": "f.h5", "level": 0, "stride": 1, "box": {"lo": [0, 0, 0], "hi": [1, 1, 1]},
            "cells": cells, "variables": ["p"], "arrays": entries, **(meta_extra or {})}
    text = json.dumps(meta).encode()
    payload = struct.pack("<I", len(text)) + text + table + values
    return HEADER.pack(b"RWCL", 1, 8, 1, 0, len(payload)), payload


good = (3, 77, 0, 1, 0, 0, 0, 2, 1, 1, 0.0, 0.0, 0.0, 0.5, 1.0, 1.0)
_, _, meta, arrays = decode(*table_frame([good], 2, values))
tw = _window(meta, arrays)
assert tw.pieces == [{"row": 3, "uid": 77, "level": 0, "first": [0, 0, 0], "count": [2, 1, 1], "stride": 1,
                      "origin": [0.0, 0.0, 0.0], "spacing": [0.5, 1.0, 1.0]}], tw.pieces
assert tw[0].values["p"].tolist() == [[[1.5, 2.5]]] and len(tw) == 1
for record, cells, extra, why in (((3, 77, 0, 1, 0, 0, 0, 3, 1, 1, 0, 0, 0, .5, 1, 1), 2, None, "cells"),
                                  ((3, 77, 0, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, .5, 1, 1), 2, None, "stride 0"),
                                  ((3, 77, -1, 1, 0, 0, 0, 2, 1, 1, 0, 0, 0, .5, 1, 1), 2, None, "level"),
                                  ((3, 77, 0, 1, 0, 0, 0, 2, -1, -1, 0, 0, 0, .5, 1, 1), 2, None, "count"),
                                  ((3, 77, 0, 1, 0, 0, 0, 2, 1, 1, float("nan"), 0, 0, .5, 1, 1), 2, None, "origin"),
                                  (good, 2, {"pieces": []}, "both forms")):
    try:
        _window(*decode(*table_frame([record], cells, values, extra))[2:])
        raise SystemExit(f"accepted a piece table that lies: {why}")
    except CollectorError as e:
        assert e.code == "malformed", (e.code, why)
meta, arrays = decode(*table_frame([good], 2, values))[2:]
try:
    _window(meta, arrays[:2])
    raise SystemExit("accepted a window reply without its cell_type array")
except CollectorError as e:
    assert e.code == "malformed", e.code
try:
    decode(*table_frame([good], 2, values, table_raw=95))
    raise SystemExit("accepted a piece table of 95 bytes")
except CollectorError as e:
    assert e.code == "malformed", e.code
try:
    Client("127.0.0.1", port, token=token + "x", timeout=10)
    raise SystemExit("wrong token accepted")
except CollectorError as e:
    assert e.code == "unauthorized", e.code
print("ok python client")

"""The Python client forks a live run into two futures and steers each, as a user would
(docs/collector-protocol.md, "Futures"):

    python_futures_check.py PORT OUT_DIR

The run is paused at a step past a checkpoint. Forks it into OUT_DIR/a.h5 (inflow
changed) and OUT_DIR/b.h5 (unchanged); futures() lists both; misuse is refused with
bad_argument and changes nothing; set on b.h5 alone lists the change for b only; after a
few steps, paused, a live window of each future by file (written as OUT_DIR/wa.json and
OUT_DIR/wb.json, the `rewind window --out` layout, for check_window.py against each
file's final checkpoint); then each future is stopped by file. Prints one `ok ...` line
per check; exits non-zero on the first failure.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rewind.client import Client, CollectorError  # noqa: E402

BOX = ((0, 0, 0), (2.2, 0.41, 0))
VELOCITY = "boundary.xmin.velocity"


def refused(f, *args, words="", **kwargs):
    try:
        f(*args, **kwargs)
    except CollectorError as e:
        assert e.code == "bad_argument" and words in str(e), (e.code, str(e))
        return str(e)
    raise AssertionError(f"accepted {f.__name__}{args} {kwargs}")


def by_file(c):
    return {os.path.basename(f["file"]): f for f in c.futures()}


def dump(w, path):
    with open(path, "w") as f:
        json.dump({"step": w.step, "time": w.time, "level": w.level, "stride": w.stride, "cells": w.cells,
                   "pieces": w.pieces, "variables": w.variables, "file": w.file,
                   "values": [w.values[v].tolist() for v in w.variables], "cell_type": w.cell_type.tolist(),
                   "ranges": {k: [x if x == x else None for x in r] for k, r in w.ranges.items()}}, f)


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    a, b = os.path.join(out, "a.h5"), os.path.join(out, "b.h5")
    with Client("127.0.0.1", port, timeout=60) as c:
        paused = c.pause()
        before = c.status()
        assert len(before["futures"]) == 1 and before["futures"][0]["file"] == before["file"], before
        fork = c.branch("latest", futures=[{"values": {VELOCITY: [1.2, 0, 0]}, "output": a}, {"output": b}])
        assert [os.path.basename(f) for f in fork["files"]] == ["a.h5", "b.h5"], fork
        assert fork["file"] == fork["files"][0] and fork["step"] == paused["step"], (fork, paused)
        print(f"ok forked two futures from step {fork['step']} of {os.path.basename(fork['parent'])}")

        fs = by_file(c)
        assert sorted(fs) == ["a.h5", "b.h5"], fs
        for name, f in fs.items():
            assert f["parent"] == fork["parent"] and f["state"] == "paused" and f["step"] == fork["step"], f
        assert any(x.startswith(VELOCITY + "=") for x in fs["a.h5"]["changes"]) and fs["b.h5"]["changes"] == [], fs
        assert c.status()["futures"] == c.futures()
        print("ok futures() lists both, paused at the fork, a with its change and b with none")

        refused(c.pause, file=os.path.join(out, "nothing.h5"), words="not a future of this job")
        refused(c.set, {"physics.nu": 0.002}, file="nothing.h5", words="not a future of this job")
        refused(c.branch, "latest", futures=[{}, {}], words="name the one to fork")
        assert by_file(c) == fs, "a refused request changed the futures"
        print("ok a file no future writes, and a fork of no future named, are refused; nothing changed")

        s = c.set({"physics.nu": 0.002}, file=b)
        fs = by_file(c)
        assert "physics.nu=0.002" in fs["b.h5"]["changes"], fs["b.h5"]
        assert not any(x.startswith("physics.nu") for x in fs["a.h5"]["changes"]), fs["a.h5"]
        print(f"ok set on b.h5 alone from step {s['step']}: listed in b's changes only")

        c.resume()
        target = fork["step"] + 3
        for _ in range(1200):  # 120 s: a loaded machine
            if all(f["step"] >= target for f in c.futures()):
                break
            time.sleep(0.1)
        c.pause()
        fs = by_file(c)
        assert all(f["step"] >= target and f["state"] == "paused" for f in fs.values()), fs
        wa = c.window(BOX, 4000, ["p", "u", "v"], time="live", file=a)
        wb = c.window(BOX, 4000, ["p", "u", "v"], time="live", file=b)
        for w, name in ((wa, "a.h5"), (wb, "b.h5")):
            assert os.path.basename(w.file) == name and w.step == fs[name]["step"], (w, fs[name])
        assert (wa.values["u"] != wb.values["u"]).any(), "the windows of two futures that differ are equal"
        dump(wa, os.path.join(out, "wa.json"))
        dump(wb, os.path.join(out, "wb.json"))
        print(f"ok live windows by file: a.h5 at step {wa.step}, b.h5 at step {wb.step}, their u differ")

        c.stop(file=a)
        c.stop(file=b)
        c.resume()
        print("ok each future stopped by file")


if __name__ == "__main__":
    main()

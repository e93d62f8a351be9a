"""The Python client against a live run (`rewind run ... --listen`), as a user drives it.

    python_live_client.py PORT OUT_DIR

Pauses the run, fetches a window of the paused state and writes it as OUT_DIR/py.json
(the `rewind window --out` layout, checked against the file by check_window.py after
the run), reads the parameters, sets one, branches from the first step with a change
into OUT_DIR/eb.h5 (which stays paused, like the run was). Prints one `ok ...` line per command; exits 1 on the
first failure.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rewind.client import Client, CollectorError  # noqa: E402


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    with Client("127.0.0.1", port, timeout=60) as c:
        assert c.info()["live"], "info: a live run says live"
        paused = c.pause()
        assert paused["state"] == "paused", paused
        print(f"ok pause at step {paused['step']}")
        resumed = c.resume()
        st = c.status()  # at once: the run has not reached its next boundary yet
        assert resumed["state"] == "running" and st["state"] == "running" and st["step"] >= resumed["step"], (resumed, st)
        paused = c.pause()
        assert paused["state"] == "paused" and c.status()["state"] == "paused", paused
        print(f"ok status right after resume says running; paused again at step {paused['step']}")
        w = c.window(((0, 0, 0), (2.2, 0.41, 0)), 3000, ["p", "u"])
        assert w.step == paused["step"], f"window step {w.step} != paused step {paused['step']}"
        dump = {"step": w.step, "time": w.time, "level": w.level, "stride": w.stride, "cells": w.cells,
                "pieces": w.pieces, "variables": w.variables,
                "values": [w.values[v].tolist() for v in w.variables], "cell_type": w.cell_type.tolist(),
                "ranges": {k: [x if x == x else None for x in r] for k, r in w.ranges.items()}}
        with open(os.path.join(out, "py.json"), "w") as f:
            json.dump(dump, f)
        print(f"ok window of the paused step: {w.cells} cells on level {w.level}")
        names = {p["name"]: p for p in c.parameters()}
        assert "physics.nu" in names and "boundary.xmin.velocity" in names, sorted(names)
        print(f"ok parameters: {len(names)}")
        try:
            c.set({"physics.nu": 5.0e9})
            raise AssertionError("set outside the range was accepted")
        except CollectorError as e:
            assert e.code == "bad_argument" and "physics.nu" in str(e), e
        print("ok set outside the range: bad_argument")
        s = c.set({"physics.nu": 0.0012})
        assert s["step"] == paused["step"] + 1, s
        print(f"ok set from step {s['step']}")
        b = c.branch("#0", {"physics.nu": 0.0015}, output=os.path.join(out, "eb.h5"))
        assert b["step"] == 0 and b["file"].endswith("eb.h5"), b
        print(f"ok branch from step 0 into {os.path.basename(b['file'])}")
        st = c.status()
        assert st["file"].endswith("eb.h5") and st["parent"] and st["state"] == "paused", st
        print("ok status names the branch and its parent (still paused)")


if __name__ == "__main__":
    main()

"""A `rewind serve` of a file that a `rewind run` is still writing, followed by the
Python client while the writer runs and checked against the finished file with h5py:

  - every request succeeds while the file is being written (steps, the newest step
    listed, latest);
  - the step list grows as steps are committed (the server follows the file) and
    never loses a step;
  - after the writer has finished, steps_reply lists exactly the file's committed
    steps (h5py: step groups with committed == 1);
  - every window served during the run was of a committed step and holds exactly that
    step's values in the finished file (check_window.py), so no step being written was
    served.

usage: follow_check.py SOURCE_DIR PORT WRITER_PID FILE.h5
"""
import json
import os
import sys
import time

import h5py


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A finished child the shell has not reaped yet is a zombie: gone for us; reaped
    # between the two looks (the read fails): gone too.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def dump(w, path):
    with open(path, "w") as f:
        json.dump({"step": w.step, "time": w.time, "level": w.level, "stride": w.stride, "cells": w.cells,
                   "pieces": w.pieces, "variables": w.variables,
                   "values": [w.values[v].tolist() for v in w.variables], "cell_type": w.cell_type.tolist(),
                   "ranges": {k: [x if x == x else None for x in r] for k, r in w.ranges.items()}}, f)


def main():
    src, port, writer, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sys.path.insert(0, os.path.join(src, "python"))
    sys.path.insert(0, os.path.join(src, "tests", "collector"))
    import check_window
    from rewind import client as rc

    box, budget, variables = ((0, 0, 0), (2.2, 0.41, 1)), 2000, ["u", "p"]
    counts, errors, served, requests = [], [], {}, 0
    with rc.Client("127.0.0.1", port, timeout=30) as c:
        while alive(writer):
            try:
                requests += 1
                steps = [s["step"] for s in c.steps()]
                if counts and len(steps) < counts[-1]:
                    errors.append(f"the step list shrank from {counts[-1]} to {len(steps)}")
                counts.append(len(steps))
                for sel in (str(steps[-1]), "latest"):
                    requests += 1
                    w = c.window(box, budget, variables, time=sel)
                    served.setdefault(w.step, w)
            except (OSError, rc.CollectorError) as e:
                errors.append(str(e))
                if c.sock is None:  # a broken stream: a new session
                    c = rc.Client("127.0.0.1", port, timeout=30)
            time.sleep(0.01)
        final = [s["step"] for s in c.steps()]
        try:
            latest = c.window(box, budget, variables, time="latest").step
        except (OSError, rc.CollectorError) as e:
            latest = f"an error: {e}"
    with h5py.File(path, "r") as h5:
        sim = h5["simulation"]
        committed = sorted(int(g.attrs["step"]) for n, g in sim.items()
                           if n.startswith("step_") and int(g.attrs.get("committed", 0)) == 1)
    ok = True

    def report(good, what):
        nonlocal ok
        ok = ok and good
        print(f"{'ok  ' if good else 'FAIL'} {what}", flush=True)

    report(not errors, f"{requests} requests while the file was written, "
                       f"{len(errors)} failed{': ' + errors[0] if errors else ''}")
    report(len(set(counts)) >= 3, f"the step list grew while the writer ran: {sorted(set(counts))}")
    report(final == committed, f"after the writer: the server lists the file's {len(committed)} committed steps "
                               f"({final[:3]}...{final[-2:]} vs h5py {committed[:3]}...{committed[-2:]})")
    report(latest == committed[-1], f"after the writer: latest is the last committed step ({str(latest)[:200]})")
    bad = []
    with h5py.File(path, "r") as h5:
        for step, w in sorted(served.items()):
            dump(w, "served.json")
            try:
                check_window.check(h5, "served.json")
            except (AssertionError, KeyError) as e:
                bad.append(f"step {step}: {e}")
    report(not bad and len(served) >= 3,
           f"the {len(served)} steps served during the run hold the finished file's values, every one"
           f"{': ' + bad[0] if bad else ''}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

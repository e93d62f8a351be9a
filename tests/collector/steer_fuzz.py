"""Fuzzes the steering requests' arguments against a live run (bounded), as a client can.

    steer_fuzz.py PORT DIR [COUNT] [SECONDS] [SEED]

Sends COUNT (default 200) random requests, each meant to be refused, within SECONDS
(default 45): `set` with unknown keys, wrong types, out-of-range, huge or non-finite
values; `branch` with bad selectors and bad paths (a missing directory, an existing
file, the run's own file, a directory, /dev/null, "", a very long name, a NUL); `control`
with unknown actions; and now and then a valid pause or resume (which change nothing
the run computes). Requests go through the Python client's frame writer, bypassing its
own argument checks, so the server sees exactly these arguments. Every reply must be an
error reply (or, for pause/resume, the new state); a dropped connection (the server's
answer to a malformed frame) is reconnected. After the loop the run must answer
`status` with the same file it had, and be paused. DIR holds the files the paths point
at. Prints a summary line; exits 1 on the first request that was accepted but should
not have been, or if the run stopped answering.
"""
import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rewind_client import Client, CollectorError  # noqa: E402


def outside(r, p):
    """A number outside p's range (or not finite)."""
    lo, hi = p["min"], p["max"]
    return r.choice([lo - abs(lo) - 1.0, hi + abs(hi) + 1.0 if math.isfinite(hi * 2) else -math.inf, math.nan,
                     math.inf, -1e300])


def bad_value(r, p):
    """Something p never accepts: garbage, a non-finite or out-of-range number, the wrong shape."""
    v = outside(r, p)
    vector = p["type"] == "vector"
    return r.choice(["1", None, True, [], {}, [1, 2], [1, 2, 3, 4], "x" * r.randint(1, 5000),
                     [v, 0, 0] if vector else v, 0.5 if vector else [0.1, 0.2, 0.3]])


def bad_set(r, params):
    kind = r.randrange(4)
    if kind == 0:  # an unknown key
        return {r.choice(["physics.rho", "tree.depth", "domain.lo", "", "x" * 200, "physics.nu.x", "time.end2",
                          "output.file", "\u00e9\u00e9"]): 0.001}
    if kind == 1:  # a known key, a bad value
        p = r.choice(params)
        return {p["name"]: bad_value(r, p)}
    if kind == 2:  # too many entries, all bad
        return {f"k{i}": -1 for i in range(r.choice([65, 200]))}
    return r.choice([[], "physics.nu=1", None, 5, {}])  # not an object, or empty


def bad_branch(r, d, own):
    paths = [os.path.join(d, "no", "such", "dir", "b.h5"), os.path.join(d, "exists.txt"), own, d, "/dev/null",
             os.path.join(d, "x" * 300 + ".h5"), os.path.join(d, "nul\u0000.h5"), "/proc/b.h5",
             os.path.join(d, "exists.txt", "b.h5"), "/" + "y" * 5000]
    selectors = ["99999999", "#99999", "#-99999", "t=-1", "t=nan", "t=", "#", "abc", "live", "", "1e3", "-5",
                 "latest@x", "9" * 40, "t=1e400"]
    req = {"from": r.choice(selectors) if r.random() < 0.3 else "latest"}
    if req["from"] == "latest" or r.random() < 0.8:
        req["output"] = r.choice(paths)
    req["values"] = {}  # a branch_request always has values (may be empty)
    if r.random() < 0.1:
        req["values"] = bad_set(r, [{"name": "physics.nu", "type": "number", "min": 1e-9, "max": 10}])
    elif r.random() < 0.05:
        del req["values"]
    if r.random() < 0.1:
        req["file"] = r.choice([os.path.join(d, "other.h5"), own + "x", "", 7])
    if r.random() < 0.05:
        req["from"] = r.choice([7, None, [], {"a": 1}])
    return req


class Session:
    def __init__(self, port):
        self.port = port
        self.c = None

    def client(self):
        if self.c is None or self.c.sock is None:
            self.c = Client("127.0.0.1", self.port, timeout=60)
        return self.c

    def call(self, type_name, fields):
        try:
            return "ok", self.client()._call(type_name, fields)[0]
        except CollectorError as e:
            return e.code, str(e)
        except (OSError, ValueError) as e:  # the server closed a connection after a malformed frame
            self.c = None
            return "closed", str(e)


def main():
    port, d = int(sys.argv[1]), sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 45.0
    r = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 31)
    s = Session(port)
    before = s.client().status()
    own = before["file"]
    params = s.client().parameters()
    tally, sent, t0 = {}, 0, time.monotonic()
    while sent < count and time.monotonic() - t0 < seconds:
        kind = r.choice(["set", "set", "branch", "branch", "branch", "control"])
        if kind == "set":
            what, fields = "set_request", {"values": bad_set(r, params)}
        elif kind == "branch":
            what, fields = "branch_request", bad_branch(r, d, own)
        else:
            action = r.choice(["pause", "resume", "", "PAUSE", "stopp", "x" * 300, 3, None])
            what, fields = "control_request", {"action": action}
        code, reply = s.call(what, fields)
        sent += 1
        tally[code] = tally.get(code, 0) + 1
        if code == "ok":
            if kind == "control" and fields["action"] in ("pause", "resume"):
                if fields["action"] == "resume":
                    s.call("control_request", {"action": "pause"})
                continue
            print(f"FAIL accepted: {what} {json.dumps(fields, default=str)[:300]} -> {reply}")
            return 1
    s.call("control_request", {"action": "pause"})
    after = s.client().status()
    print(f"fuzz: {sent} requests in {time.monotonic() - t0:.1f} s; replies {dict(sorted(tally.items()))}; "
          f"status after: {after['state']} at step {after['step']} in {os.path.basename(after['file'])}")
    if after["file"] != own or after["state"] != "paused":
        print(f"FAIL the run is not where it was: before {before}, after {after}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Drives the steering methods of python/rewind/client.py against the collector test
server (a fake steerable run) and an offline one; needs no numpy.

usage: python_steer_check.py SRC_DIR LIVE_PORT TOKEN OFFLINE_PORT
"""
import sys

sys.path.insert(0, sys.argv[1] + "/python")
from rewind.client import Client, CollectorError  # noqa: E402

live, token, offline = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


def refused(code, f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except CollectorError as e:
        assert e.code == code, (e.code, code, str(e))
        return
    raise SystemExit(f"accepted {f.__name__}{args}")


with Client("127.0.0.1", live, token=token, timeout=10) as c:
    assert c.offers("set") and c.offers("window")
    s = c.status()
    assert s["state"] == "running" and s["step"] == 100 and s["ranks"] == 2 and s["file"] == "fake.h5", s
    p = c.pause()
    assert p["state"] == "paused" and p["step"] == 101, p
    assert c.status()["state"] == "paused"
    r = c.set({"physics.nu": 0.02, "boundary.xmin.velocity": (2, 0, 0)})
    assert r["step"] == 102 and r["values"]["physics.nu"] == 0.02, r
    params = {q["name"]: q for q in c.parameters()}
    assert params["physics.nu"]["value"] == 0.02 and params["physics.nu"]["type"] == "number"
    assert params["boundary.xmin.velocity"]["value"] == [2, 0, 0] and params["boundary.xmin.velocity"]["type"] == "vector"
    assert params["physics.nu"]["min"] == 1e-9 and params["physics.nu"]["unit"] == "m^2/s"
    refused("bad_argument", c.set, {"physics.nu": -1})
    refused("bad_argument", c.set, {})
    refused("bad_argument", c.control, "sleep")
    refused("no_such_step", c.branch, "99")
    try:
        c.set({"physics.nu": float("nan")})
        raise SystemExit("NaN sent")
    except ValueError:
        pass
    b = c.branch("t=0.05", {"physics.nu": 0.5}, output="fast.h5")
    assert b == {"file": "fast.h5", "parent": "fake.h5", "step": 5, "time": 0.05}, b
    assert c.resume()["state"] == "running"
    assert c.stop()["state"] == "stopping"
    refused("conflict", c.set, {"physics.nu": 0.5})
    assert c.status()["state"] == "stopping"  # the session survived every error
    assert "numpy" not in sys.modules, "steering imported numpy"

with Client("127.0.0.1", offline, timeout=10) as c:
    assert not c.offers("status") and c.server["capabilities"] == ["info", "steps", "window"]
    refused("unsupported", c.status)  # refused before sending
    for name, fields in (("status_request", {}), ("control_request", {"action": "pause"}),
                         ("set_request", {"values": {"physics.nu": 1.0}})):
        refused("unsupported", c._call, name, fields)  # sent anyway: the server says so
    assert len(c.steps()) == 3  # the session goes on
print("ok python steering client")

"""Drives the steering methods of python/rewind/client.py against the collector test
server (a fake steerable run) and an offline one, and again as the ParaView plugin ships
them (client.py, steering.py and windows.py alone, as rewind_client,
rewind_client_steering and rewind_client_windows);
needs no numpy.

usage: python_steer_check.py SRC_DIR LIVE_PORT TOKEN OFFLINE_PORT
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1] + "/python")
from rewind.client import Client, CollectorError, InvalidArgument  # noqa: E402

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
    assert b == {"file": "fast.h5", "parent": "fake.h5", "step": 5, "time": 0.05, "files": ["fast.h5"]}, b
    # Revision 1.8 arguments: futures and file (the fake run, like a 1.7 server, lists no futures).
    assert c.status()["futures"] == [] and c.futures() == []
    f = c.branch("latest", futures=[{"values": {"physics.nu": 0.5}, "output": "f1.h5"}, {}])
    assert f["files"] == [f["file"]], f  # a reply without files (1.7): just file
    assert c.pause(file="f1.h5")["state"] == "paused" and c.set({"physics.nu": 0.3}, file="f1.h5")["step"] > 0
    for bad in ({"values": {"physics.nu": 0.5}, "futures": [{}]}, {"output": "x.h5", "futures": [{}]},
                {"futures": []}, {"futures": {"values": {}}}, {"futures": [{"value": {}}]},
                {"futures": [{"values": {"physics.nu": float("inf")}}]}, {"futures": [{"values": [1]}]}):
        try:
            c.branch("latest", **bad)
            raise SystemExit(f"branch accepted {bad}")
        except InvalidArgument:
            pass
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

# As the ParaView plugin ships it: the three files alone, under their plugin names, with
# nothing of the package on the path.
alone = tempfile.mkdtemp()
try:
    shutil.copy(sys.argv[1] + "/python/rewind/client.py", alone + "/rewind_client.py")
    shutil.copy(sys.argv[1] + "/python/rewind/steering.py", alone + "/rewind_client_steering.py")
    shutil.copy(sys.argv[1] + "/python/rewind/windows.py", alone + "/rewind_client_windows.py")
    script = """
import sys
import rewind_client as rc
assert "rewind" not in sys.modules, "the plugin's client imported the package"
with rc.Client("127.0.0.1", int(sys.argv[1]), token=sys.argv[2], timeout=10) as c:
    assert c.status()["state"] in ("running", "stopping") and c.futures() == []
    r = c.branch("latest", futures=[{"output": "g.h5"}])
    assert r["files"] == [r["file"]], r
    try:
        c.branch("latest", {"a": 1}, futures=[{}])
        raise SystemExit("accepted values beside futures")
    except rc.InvalidArgument:
        pass
"""
    env = dict(os.environ, PYTHONPATH=alone)
    r = subprocess.run([sys.executable, "-c", script, str(live), token], cwd=alone, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
finally:
    shutil.rmtree(alone)
print("ok python steering client")

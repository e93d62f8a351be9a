# The Python client's default window call against a Python raw loopback TCP pump of the
# same bytes (sent by a thread from a buffer of real bytes, received with recv_into into a
# buffer written before the timer: the C++ bench's RawTcp in Python), interleaved in the
# same rounds, the run paused; stops the run at the end.
#   python3 bench/live/python_tp.py PYTHON_DIR PORT ROUNDS
# PORT: the collector of a live run started as bench/live/run.sh starts it
# (mpirun -np 4 rewind run cases/cavity-3d.toml ... --listen 127.0.0.1:0).
# See bench/live/HISTORY.md, §2 "Live windows by default".
import sys, time, socket, threading, statistics as st
import numpy as np
sys.path.insert(0, sys.argv[1])
from rewind.client import Client
port, rounds = int(sys.argv[2]), int(sys.argv[3])
c = Client("127.0.0.1", port)
c.control("pause")
box = ((0, 0, 0), (1, 1, 0.5))
w = c.window(box, 2**20, ["u", "v", "w", "p"])
nbytes = sum(w.values[v].nbytes for v in w.variables) + w.cell_type.nbytes
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
# Not bytes(nbytes): its untouched pages all read as the kernel's one zero page, which
# stays in the caches (a peer that fast moves no real data); nor a fresh np.empty per
# round, whose page faults a client reusing its buffers does not pay.
src = np.full(nbytes, 0x5a, np.uint8).tobytes()
out = np.zeros(nbytes, np.uint8)
def serve():
    s, _ = ls.accept(); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while s.recv(8): s.sendall(src)
threading.Thread(target=serve, daemon=True).start()
r = socket.create_connection(ls.getsockname()); r.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def raw():
    v = memoryview(out); r.sendall(b"x" * 8)
    while len(v): v = v[r.recv_into(v):]
raw()
ratios = []
for i in range(rounds):
    t = time.perf_counter(); c.window(box, 2**20, ["u", "v", "w", "p"]); tl = time.perf_counter() - t
    t = time.perf_counter(); raw(); tr = time.perf_counter() - t
    ratios.append(tr / tl); print(f"round {i}: window {1e3*tl:.1f} ms raw {1e3*tr:.1f} ms ratio {100*tr/tl:.0f} %")
print(f"{nbytes/1e6:.1f} MB; median python default / raw python TCP = {100*st.median(ratios):.0f} % ({', '.join(f'{100*x:.0f}' for x in ratios)})")
c.control("stop")

"""Hostile clients against a collector (`rewind serve` or `rewind run --listen`) on
127.0.0.1, the way docs/collector-protocol.md "Limits and what a client may hold" says
they are bounded; prints one line of figures per attack and fails (exit 1) if a bound
does not hold.

Attacks (--attack, repeatable):
  idle:N        N connections that send nothing (before any hello: pending)
  hello:N       N connections that send a hello, then nothing (idle sessions)
  trickle:N     N connections that send a hello and one byte of a request, then nothing
  slow:N        N clients that ask for the largest window (whole domain, every
                variable, budget 2^28, codec none) and never read the reply
  slowz:N       the same with codec zstd (the server compresses, and holds both)

During each attack a good client (connect, hello, info, a window of --good-budget cells
of one variable) must be answered within --max-latency seconds; the server's resident
memory (VmRSS of the process listening on the port, from /proc) is sampled every 50 ms:
its peak during the attack must stay within --max-during MiB of the baseline (default:
the reply memory, plus one largest reply being built and one being replaced, plus 64
MiB), and 2 s after the attackers have gone within --max-after MiB. The baseline is
taken after one good largest window, so the server's own reusable buffers are in it. A
good client asking for the largest window too is timed and reported, not checked.

usage: attack.py SOURCE_DIR PORT [--token-file F] [--time latest|live] --attack KIND:N ...
"""
import argparse
import json
import os
import socket
import sys
import threading
import time


def listening_pid(port):
    """The pid of the process whose socket listens on 127.0.0.1/0.0.0.0:port."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    raise SystemExit(f"no process listens on port {port}")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class Sampler(threading.Thread):
    """Peak VmRSS of `pid` while running."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, rss_mib(pid), True

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss_mib(self.pid))
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.join()
        return self.peak


def attackers(rc, kind, n, port, token, info, when):
    d = info["domain"]
    window = rc.encode("window_request", 2, {"box": {"lo": d["lo"], "hi": d["hi"]}, "budget": 1 << 28, "time": when,
                                             "variables": [v["name"] for v in info["variables"]]})
    socks = []
    for i in range(n):
        s = socket.socket()
        if kind.startswith("slow"):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        if kind != "idle":
            s.sendall(rc.encode("hello", 1, {"protocol": rc.PROTOCOL_VERSION, "token": token, "client": f"{kind}{i}",
                                             "codecs": ["zstd" if kind == "slowz" else "none"]}))
        if kind.startswith("slow"):
            s.sendall(window)
        elif kind == "trickle":
            s.sendall(window[:1])
        socks.append(s)
    return socks


def good_client(rc, port, token, info, budget, when):
    """Seconds to connect, say hello, get info and a window; or the error."""
    t0 = time.time()
    try:
        with rc.Client("127.0.0.1", port, token=token or None, timeout=30) as c:
            c.info()
            d = info["domain"]
            w = c.window((d["lo"], d["hi"]), budget, variables=[info["variables"][0]["name"]], time=when)
            assert w.cells > 0
        return time.time() - t0, ""
    except (OSError, rc.CollectorError) as e:
        return time.time() - t0, str(e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("port", type=int)
    ap.add_argument("--token-file", default=None)
    ap.add_argument("--time", default="latest")
    ap.add_argument("--attack", action="append", required=True)
    ap.add_argument("--good-budget", type=int, default=20000)
    ap.add_argument("--settle", type=float, default=3.0, help="seconds between the attack and the good client")
    ap.add_argument("--max-latency", type=float, default=1.0)
    ap.add_argument("--reply-memory", type=float, default=256.0, help="the server's reply memory, MiB")
    ap.add_argument("--max-during", type=float, default=None,
                    help="MiB over the baseline; default: reply memory + 2 largest replies + 64")
    ap.add_argument("--max-after", type=float, default=96.0, help="MiB over the baseline, 2 s after")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.src, "python"))
    from rewind import client as rc

    token = rc.resolve_token(None, a.token_file)
    pid = listening_pid(a.port)
    with rc.Client("127.0.0.1", a.port, token=token or None, timeout=60) as c:
        info = c.info()
        d = info["domain"]
        largest = c.window((d["lo"], d["hi"]), 1 << 28, time=a.time)  # once: warm buffers
    reply_mib = largest.cells * (8 * len(info["variables"]) + 1) / 2**20
    if a.max_during is None:
        a.max_during = a.reply_memory + 2 * reply_mib + 64
    print(f"{a.label}: the largest window is {reply_mib:.1f} MiB", flush=True)
    time.sleep(1.0)
    ok = True
    for spec in a.attack:
        kind, n = spec.split(":")
        base = rss_mib(pid)
        sampler = Sampler(pid)
        sampler.start()
        socks = attackers(rc, kind, int(n), a.port, token, info, a.time)
        time.sleep(a.settle)
        tries = [good_client(rc, a.port, token, info, a.good_budget, a.time) for _ in range(3)]
        latency = (max(t for t, _ in tries), next((e for _, e in tries if e), ""))
        large = good_client(rc, a.port, token, info, 1 << 28, a.time)  # as large as theirs: reported
        during = sampler.stop()
        for s in socks:
            s.close()
        time.sleep(2.0)
        after = rss_mib(pid)
        row = {"server": a.label, "attack": spec, "baseline_mib": round(base, 1), "peak_during_mib": round(during, 1),
               "after_mib": round(after, 1), "good_client_s": round(latency[0], 3), "good_client_error": latency[1],
               "good_largest_s": round(large[0], 3), "good_largest_error": large[1]}
        print(json.dumps(row), flush=True)
        held = latency[1] == "" and latency[0] <= a.max_latency and during - base <= a.max_during \
            and after - base <= a.max_after
        print(f"{'ok  ' if held else 'FAIL'} {a.label} {spec}: good client {latency[0]:.3f} s {latency[1]!r}, "
              f"resident {base:.0f} MiB -> peak {during:.0f} -> after {after:.0f} (bounds: {a.max_latency} s, "
              f"+{a.max_during:.0f}, +{a.max_after:.0f} MiB)", flush=True)
        ok = ok and held
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

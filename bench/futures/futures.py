#!/usr/bin/python3
"""Several futures from one step: fork start, throughput together against one
after another, memory per future. Each measurement is a live job started the way users
start one (mpirun -np P rewind run CASE --listen 127.0.0.1:0), steered the way users
steer it (`rewind steer RUN.h5 branch --from latest --future ... --future ...`), and
watched through the Python client's status. Prints one `#`-free record line per job
(key=value) and, at the end, the tables (medians over rounds). docs/benchmarks.md, "Futures"; bench/futures/HISTORY.md.

  futures.py fork BUILD DATA --case demo|cavity3d|cavity3d-256|cavity3d-320 [--rounds R] [--ks 1,2,4] [--np P]
  futures.py throughput BUILD DATA --case demo [--rounds R] [--k K] [--steps N] [--np P]

P processes (default: 2 + the largest K, the neighbourhood server, the collector and one
compute rank per future: a fork of more futures than compute ranks is refused).
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SRC, "python"))
from rewind import client as rc  # noqa: E402

# The cases (file, --set, steps before the fork): the demo's (cases/default.toml, 352 x 64
# cells, the README's case) and the 3-D lid-driven cavity of cases/cavity-3d.toml at
# 128^3 = 2 097 152 leaf cells (73 MiB of checkpoint), 256^3 = 16 777 216 (730 MiB) and
# 320^3.
CASES = {
    "demo": ("cases/default.toml", [], 20),
    "cavity3d": ("cases/cavity-3d.toml", ["tree.depth=3"], 2),
    "cavity3d-256": ("cases/cavity-3d.toml", ["tree.depth=4"], 1),
    # 320^3 = 32 768 000 (d-grids of 20^3): 1.2 GiB of checkpoint; K = 1 only in 23 GiB of
    # memory (the parent's solver and the future's, ~8 GiB each).
    "cavity3d-320": ("cases/cavity-3d.toml", ["tree.depth=4", "tree.s=[20, 20, 20]"], 1),
}
ROLES = {0: "nbserver", 1: "collector"}  # world ranks; the others compute


def velocity(i):  # the futures' changes: one inflow (or lid) speed each
    return 1.0 + 0.1 * i


class Job:
    """A live job writing DATA/NAME.h5, its processes and its collector."""

    def __init__(self, a, name, steps, pause_at_end=False):
        case, sets, self.warm = CASES[a.case]
        self.a, self.file = a, os.path.join(a.data, name + ".h5")
        for f in os.listdir(a.data):  # the futures' files of the previous job: a branch never overwrites
            if re.fullmatch(r"[ft]\d+\.(h5|monitor\.csv)", f):
                os.remove(os.path.join(a.data, f))
        self.face = "xmin" if a.case == "demo" else "ymax"
        cmd = ["mpirun", "-np", str(a.np), a.rewind, "run", os.path.join(SRC, case), "-o", self.file, "--force",
               "--steps", str(steps), "--listen", "127.0.0.1:0", "--set", "output.checkpoint_interval=0",
               "--set", "output.visualisation_interval=0", "--set", "monitor.interval=1000000"]
        for s in sets:
            cmd += ["--set", s]
        if pause_at_end:  # the futures wait at their step limit: the job stays to be asked
            cmd.append("--pause-at-end")
        self.log = open(os.path.join(a.data, name + ".log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(600):
            if os.path.exists(self.file + ".contact"):
                try:
                    self.client = rc.connect(self.file, timeout=600)
                    return
                except (rc.CollectorError, OSError, ValueError):
                    pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"the job ended before it listened: see {self.log.name}")
            time.sleep(0.1)
        raise RuntimeError("no contact file after 60 s")

    def futures(self):
        st = self.client.status()
        return st.get("futures") or [{"file": st["file"], "step": st["step"], "state": st["state"]}]

    def wait(self, done, what, timeout=1800, poll=0.005):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            f = self.futures()
            if done(f):
                return time.monotonic()
            time.sleep(poll)
        raise RuntimeError(f"timed out waiting for {what}")

    def steer(self, *args):
        r = subprocess.run([self.a.rewind, "steer", self.file, *args], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"rewind steer {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def ranks(self):
        """{world rank: pid} of the job's processes."""
        out = {}
        for pid in subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout.split():
            try:
                env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                out[int(next(e for e in env if e.startswith(b"OMPI_COMM_WORLD_RANK=")).split(b"=")[1])] = int(pid)
            except (OSError, StopIteration):
                continue
        return out

    def memory(self):
        """{role: (VmRSS, VmHWM) in MiB} of the job's processes, by their world rank."""
        out = {}
        for rank, pid in self.ranks().items():
            try:
                kv = dict(re.findall(r"^(Vm\w+):\s+(\d+) kB", open(f"/proc/{pid}/status").read(), re.M))
            except OSError:
                continue
            out[ROLES.get(rank, f"compute{rank - 2}")] = (int(kv["VmRSS"]) / 1024, int(kv["VmHWM"]) / 1024)
        return out

    def compute_cpu(self):
        """CPU seconds (user + system) the compute ranks have used so far."""
        total = 0
        for rank, pid in self.ranks().items():
            if rank not in ROLES:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def fork(self, k):
        """Paused after the warm-up steps: forks K futures (timed from the command to every
        future's first step). Returns the record and the branch step."""
        self.wait(lambda f: f[0]["step"] >= self.warm, "the warm-up steps")
        self.client.pause()
        before = self.memory()
        args = ["branch", "--from", "latest"]
        for i in range(k):
            args += ["--future", f"boundary.{self.face}.velocity=[{velocity(i)}, 0, 0]",
                     "--output", os.path.join(self.a.data, f"f{i}.h5")]
        t0 = time.monotonic()
        late = 0
        try:
            step = int(re.search(r"from step (\d+)", self.steer(*args)).group(1))
            t1 = time.monotonic()
        except RuntimeError as e:  # past the collector's steer_timeout (20 s): the fork goes on
            if "no answer from the run within" not in str(e):
                raise
            late = 1
            t1 = self.wait(lambda f: len(f) == k, "the futures after a late reply", poll=0.05)
            step = self.futures()[0]["step"]
        self.client.resume()
        t2 = self.wait(lambda f: len(f) == k and all(x["step"] > step for x in f), "every future's first step")
        rec = {"k": k, "step": step, "reply_s": t1 - t0, "first_steps_s": t2 - t0, "steer_timed_out": late}
        after = self.memory()
        for role in before:
            rec[f"rss_{role}_MiB"] = round(before[role][0], 1)
            rec[f"rss_after_{role}_MiB"] = round(after.get(role, (0, 0))[0], 1)
            rec[f"hwm_after_{role}_MiB"] = round(after.get(role, (0, 0))[1], 1)
        return rec, t2

    def close(self, timeout=600):
        try:
            self.client.stop()
        except (rc.CollectorError, OSError):
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)
        self.log.close()
        text = open(self.log.name).read()
        m = re.search(r"^fork .*computed ([\d.e+-]+) s .*made ([\d.e+-]+) s, .*restored ([\d.e+-]+) s, "
                      r"first boundaries written ([\d.e+-]+) s", text, re.M)
        keys = ["job_first_steps_s", "job_made_s", "job_read_s", "job_written_s"]
        return {key: float(v) for key, v in zip(keys, m.groups())} if m else {}


def read_once(file, step):
    """Seconds to read the step's cell data once with h5py (the page cache warm: read twice)."""
    import h5py
    best = None
    for _ in range(2):
        t0 = time.monotonic()
        with h5py.File(file, "r") as f:
            nbytes = sum(v[()].nbytes for v in f[f"simulation/step_{step:08d}/cell_data"].values())
        best = time.monotonic() - t0
    return best, nbytes


def fork_bench(a):
    ks = [int(k) for k in a.ks.split(",")]
    rows = []
    for r in range(a.rounds):
        for k in ks[r % len(ks):] + ks[:r % len(ks)]:  # rotated: interleaved rounds
            job = Job(a, "parent", 1000000)
            rec, _ = job.fork(k)
            rec.update(job.close())
            rec["h5py_read_s"], rec["checkpoint_MiB"] = read_once(job.file, rec["step"])
            rec["checkpoint_MiB"] /= 2**20
            rec["round"] = r
            rec["load"] = os.getloadavg()[0]
            print(" ".join(f"{key}={v:.4g}" if isinstance(v, float) else f"{key}={v}" for key, v in rec.items()),
                  flush=True)
            rows.append(rec)
    print(f"\ncase {a.case}, {a.np} processes, {a.rounds} rounds (medians; the range in brackets)")
    keys = ["reply_s", "first_steps_s", "job_made_s", "job_read_s", "job_written_s", "job_first_steps_s", "h5py_read_s"]
    keys += sorted({key for rec in rows for key in rec if key.startswith(("rss", "hwm"))})
    for k in ks:
        print(f"K={k}")
        for key in keys:
            v = [rec[key] for rec in rows if rec["k"] == k and key in rec]
            if v:
                print(f"  {key:28s} {statistics.median(v):10.4g}  [{min(v):.4g} .. {max(v):.4g}]")
    print(f"checkpoint {rows[0]['checkpoint_MiB']:.1f} MiB; started (made + read + written) / h5py read, median:")
    for k in ks:
        r = [(rec["job_made_s"] + rec["job_read_s"] + rec["job_written_s"]) / rec["h5py_read_s"]
             for rec in rows if rec["k"] == k and "job_made_s" in rec]
        print(f"  K={k}: {statistics.median(r):.3g}" if r else f"  K={k}: no fork line (run with -q?)")


def futures_time(a, k, first):
    """Seconds from resume to every one of K futures (inflow speeds velocity(first..)) at
    the step limit (--steps N past the branch point), and the compute ranks' CPU seconds
    meanwhile."""
    job = Job(a, "parent", a.steps, pause_at_end=True)
    job.wait(lambda f: f[0]["step"] >= job.warm, "the warm-up steps")
    job.client.pause()
    args = ["branch", "--from", "latest"]
    for i in range(first, first + k):
        args += ["--future", f"boundary.{job.face}.velocity=[{velocity(i)}, 0, 0]",
                 "--output", os.path.join(a.data, f"t{i}.h5")]
    step = int(re.search(r"from step (\d+)", job.steer(*args)).group(1))
    c0, t0 = job.compute_cpu(), time.monotonic()
    job.client.resume()
    t1 = job.wait(lambda f: len(f) == k and all(x["step"] >= step + a.steps for x in f), "the step limit", poll=0.002)
    c1 = job.compute_cpu()  # the futures now write their final checkpoints: not counted
    job.close()
    return t1 - t0, c1 - c0


def throughput_bench(a):
    wall, cpu = [], []
    for r in range(a.rounds):
        order = ["together", "alone"] if r % 2 == 0 else ["alone", "together"]
        t = {}
        for how in order:
            runs = [futures_time(a, a.k, 0)] if how == "together" else [futures_time(a, 1, i) for i in range(a.k)]
            t[how] = [sum(x[0] for x in runs), sum(x[1] for x in runs)]
        wall.append(t["together"][0] / t["alone"][0])
        cpu.append(t["together"][1] / t["alone"][1])
        print(f"round={r} k={a.k} steps={a.steps} together_s={t['together'][0]:.4g} alone_sum_s={t['alone'][0]:.4g} "
              f"ratio={wall[-1]:.4f} together_cpu_s={t['together'][1]:.4g} alone_cpu_sum_s={t['alone'][1]:.4g} "
              f"cpu_ratio={cpu[-1]:.4f} load={os.getloadavg()[0]:.1f}", flush=True)
    print(f"\ncase {a.case}, {a.np} processes, K={a.k}, {a.steps} steps each, {a.rounds} rounds: together / one after "
          "another (median of the per-round ratios, range in brackets)")
    for name, v in (("wall", wall), ("compute ranks' CPU", cpu)):
        print(f"  {name:20s} {statistics.median(v):.4f} [{min(v):.4f} .. {max(v):.4f}]")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["fork", "throughput"])
    p.add_argument("build")
    p.add_argument("data")
    p.add_argument("--case", choices=sorted(CASES), default="demo")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ks", default="1,2,4")
    p.add_argument("--k", type=int, default=2)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--np", type=int, default=0)
    a = p.parse_args()
    if a.np <= 0:
        a.np = 2 + max(max(int(k) for k in a.ks.split(",")) if a.mode == "fork" else a.k, 1)
    a.rewind = os.environ.get("REWIND") or os.path.join(os.path.abspath(a.build), "apps", "rewind")
    os.makedirs(a.data, exist_ok=True)
    a.data = os.path.abspath(a.data)
    (fork_bench if a.mode == "fork" else throughput_bench)(a)


if __name__ == "__main__":
    main()

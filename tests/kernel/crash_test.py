#!/usr/bin/env python3
"""Fault injection: SIGKILL a kernel writer at random moments (>= 20 times) and check
that every committed step stays readable, bit-exact and restartable, and that the
reader never modifies the file. Even rounds write halo'd arrays (packed through the
linear buffer), odd rounds halo-free ones (zero-copy MPI-IO from the arrays). Rounds
alternate in pairs between the collective strategy (2 ranks) and dedicated I/O ranks
(3 ranks: 2 compute ranks hand their steps to the third), and any process may die.
Usage: crash_test.py HELPER [ROUNDS]"""
import hashlib, os, random, signal, subprocess, sys, tempfile, time

helper = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
rng = random.Random(int(os.environ.get("REWIND_CRASH_SEED", time.time())))
work = tempfile.mkdtemp(prefix="rewind_crash_")
stats = {"rounds": 0, "with_uncommitted": 0, "unreadable_before_first_commit": 0, "committed_total": 0}
mid_step = {"collective": 0, "dedicated": 0}  # rounds whose kill left a step half-written

def digest(p):
    if not os.path.exists(p):
        return None
    h = hashlib.sha256()
    with open(p, "rb") as f:  # in pieces: one read of the whole file cost seconds of page faults
        for piece in iter(lambda: f.read(1 << 24), b""):
            h.update(piece)
    return h.hexdigest()

failures = 0
for i in range(rounds):
    d = os.path.join(work, str(i)); os.mkdir(d)
    h5, log = os.path.join(d, "run.h5"), os.path.join(d, "log")
    halo = "1" if i % 2 == 0 else "0"
    strategy = "dedicated" if (i // 2) % 2 == 1 else "collective"
    n = 3 if strategy == "dedicated" else 2
    p = subprocess.Popen(["mpiexec", "-n", str(n), "--oversubscribe", helper, "write", h5, log, d, halo, strategy],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    pids, t0 = [], time.time()
    while len(pids) < n and time.time() - t0 < 20:
        pids = [int(open(os.path.join(d, f)).read()) for f in os.listdir(d) if f.startswith("pid.")
                and open(os.path.join(d, f)).read().strip()]
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 1.0))
    victims = rng.choice([pids] + [[q] for q in pids])  # every rank, or one of them
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL); p.wait()
    before = digest(h5)
    v = subprocess.run([helper, "verify", h5, log, halo], env=env, capture_output=True, text=True, timeout=60)
    after = digest(h5)
    out = v.stdout.strip()
    ok = v.returncode == 0 and before == after
    print(f"round {i:2d} ({strategy}, halo {halo}): killed {len(victims)} of {n} rank(s): {out}" + ("" if before == after else " FILE CHANGED BY READER"))
    if not ok:
        failures += 1
        print(v.stderr)
    stats["rounds"] += 1
    if "uncommitted=0" not in out and out.startswith("ok"):
        stats["with_uncommitted"] += 1
        mid_step[strategy] += 1
    if out.startswith("unreadable"):
        stats["unreadable_before_first_commit"] += 1
    if out.startswith("ok"):
        stats["committed_total"] += int(out.split("committed=")[1].split()[0])
print(stats, mid_step)
subprocess.run(["rm", "-rf", work])
# The test must have exercised the interesting case: kills that left a step half-written.
# (Per strategy it is rarer — about 1 round in 10 for dedicated here — so the count is
# printed, not required.)
if stats["with_uncommitted"] == 0:
    print("FAIL: no round killed the writer mid-step")
    failures += 1
sys.exit(1 if failures else 0)

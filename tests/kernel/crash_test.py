#!/usr/bin/env python3
"""Fault injection: SIGKILL a kernel writer at random moments (>= 20 times) and at the
crash protocol's points, and check that every committed step stays readable, bit-exact and
restartable, that the reader never modifies the file, and that the run then continues in
the same file (Writer::append, as `rewind run --restart` does) with a step that reads
back bit-exactly. Even rounds write halo'd arrays (packed through the linear buffer), odd
rounds halo-free ones (zero-copy MPI-IO from the arrays). Rounds alternate in pairs
between the collective strategy (2 ranks) and dedicated I/O ranks (3 ranks: 2 compute
ranks hand their steps to the third), and any process may die.

Random kills land mid-step only now and then (a step's group reaches the file in the
flush before its commit): the protocol rounds kill every writing rank at a named point of
step K (its data flushed, not committed; committed, the index not yet written), so the
half-written step is exercised on every run.
Usage: crash_test.py HELPER [ROUNDS]"""
import hashlib, os, random, signal, subprocess, sys, tempfile, time

helper = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
rng = random.Random(int(os.environ.get("REWIND_CRASH_SEED", time.time())))
work = tempfile.mkdtemp(prefix="rewind_crash_")
stats = {"rounds": 0, "with_uncommitted": 0, "unreadable_before_first_commit": 0, "committed_total": 0}
mid_step = {"collective": 0, "dedicated": 0}  # random rounds whose kill left a step half-written

def digest(p):
    if not os.path.exists(p):
        return None
    h = hashlib.sha256()
    with open(p, "rb") as f:  # in pieces: one read of the whole file cost seconds of page faults
        for piece in iter(lambda: f.read(1 << 24), b""):
            h.update(piece)
    return h.hexdigest()

def count(out, key):
    return int(out.split(key + "=")[1].split()[0])

def verify(h5, log, halo):
    """The helper's verdict on the file, and whether reading it changed it."""
    before = digest(h5)
    v = subprocess.run([helper, "verify", h5, log, halo], env=env, capture_output=True, text=True, timeout=60)
    return v, before == digest(h5)

def run_round(i, strategy, halo, die_at=None):
    """One writer killed; returns (the verifier's line, the round's line, [problems])."""
    d = os.path.join(work, str(i)); os.mkdir(d)
    h5, log = os.path.join(d, "run.h5"), os.path.join(d, "log")
    n = 3 if strategy == "dedicated" else 2
    cmd = ["mpiexec", "-n", str(n), "--oversubscribe", helper, "write", h5, log, d, halo, strategy]
    p = subprocess.Popen(cmd + ([die_at] if die_at else []), env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    victims = []
    if die_at is None:
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
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL); p.wait()
    how = f"died at {die_at}" if die_at else f"killed {len(victims)} of {n} rank(s)"
    v, unchanged = verify(h5, log, halo)
    out, problems = v.stdout.strip(), []
    if v.returncode != 0:
        problems.append(f"verify: {out} {v.stderr.strip()}")
    if not unchanged:
        problems.append("FILE CHANGED BY READER")
    line = f"round {i:2d} ({strategy}, halo {halo}): {how}: {out}"
    if out.startswith("ok") and v.returncode == 0 and count(out, "committed") > 0:
        # Continue the run in the same file: the half-written step goes, the next is written.
        # (Killed before its first commit, a run has nothing to continue from: it restarts.)
        a = subprocess.run(["mpiexec", "-n", "2", "--oversubscribe", helper, "append", h5, log, halo], env=env,
                           capture_output=True, text=True, timeout=120)
        v2, _ = verify(h5, log, halo)
        after = v2.stdout.strip()
        line += f"; continued: {after}"
        if a.returncode != 0 or a.stdout.strip():
            problems.append(f"append failed: {a.stdout.strip()} {a.stderr.strip()[-600:]}")
        elif v2.returncode != 0 or not after.startswith("ok"):
            problems.append(f"after the continue: {after} {v2.stderr.strip()}")
        elif count(after, "uncommitted") != 0 or count(after, "committed") != count(out, "committed") + 1:
            problems.append(f"the continue left {after}, expected the committed steps of before and one more")
    return out, line, problems

failures = 0

for i in range(rounds):
    halo = "1" if i % 2 == 0 else "0"
    strategy = "dedicated" if (i // 2) % 2 == 1 else "collective"
    out, line, problems = run_round(i, strategy, halo)
    print(line)
    for q in problems:
        print("  FAIL:", q)
    failures += bool(problems)
    stats["rounds"] += 1
    if out.startswith("ok") and count(out, "uncommitted") > 0:
        stats["with_uncommitted"] += 1
        mid_step[strategy] += 1
    if out.startswith("unreadable"):
        stats["unreadable_before_first_commit"] += 1
    if out.startswith("ok"):
        stats["committed_total"] += count(out, "committed")
print(stats, "random kills mid-step:", mid_step)

# The protocol's points, every writing rank at once (a node lost): after step K's data
# reached the file and before its commit, the file must hold K-1 committed steps and K
# uncommitted; after the commit's flush and before the index row, K committed.
for j, (strategy, halo, phase) in enumerate([("collective", "1", "flushed"), ("dedicated", "0", "flushed"),
                                            ("collective", "0", "marked"), ("dedicated", "1", "marked")]):
    k = rng.randint(2, 6)
    out, line, problems = run_round(rounds + j, strategy, halo, f"{phase}:{k}")
    want = (k - 1, 1) if phase == "flushed" else (k, 0)
    if not out.startswith("ok") or (count(out, "committed"), count(out, "uncommitted")) != want:
        problems.append(f"dying at {phase} of step {k} should leave committed={want[0]} uncommitted={want[1]}")
    print(line)
    for q in problems:
        print("  FAIL:", q)
    failures += bool(problems)
subprocess.run(["rm", "-rf", work])
sys.exit(1 if failures else 0)

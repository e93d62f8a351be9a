"""Tables of the live-window benchmark from run.sh's log: medians over rounds, and
medians of per-round ratios (both sides measured in the same round). A log of
`run.sh --c-example` (lines "job KIND MODE ROUND"): the C example against `rewind run`,
each job summarised, then the medians of the per-round ratios C example / rewind run."""
import re
import statistics
import sys
from collections import defaultdict


def med(v):
    return statistics.median(v) if v else float("nan")


def parse(lines):
    d = {"tp": defaultdict(dict), "codec": [], "paused": [], "phase": defaultdict(dict), "cpu": defaultdict(dict), "shots": [],
         "run": defaultdict(list)}
    mode = None
    for line in lines:
        w = line.split()
        if not w:
            continue
        if w[0] == "mode":
            mode = w[1]
        elif w[0] == "tp":
            r, who = int(w[1]), w[2]
            who = "live-zstd" if who == "live" else who  # logs before codec none: zstd
            live = who.startswith("live")
            d["tp"][who][r] = {"bytes": int(w[3]), "wire": int(w[4]) if live else None, "ms": float(w[-1])}
        elif w[0] == "codec":
            d["codec"].append({"raw": int(w[2]), "wire": int(w[3]), "enc": float(w[4]), "dec": float(w[5])})
        elif w[:2] == ["lat", "paused"]:
            d["paused"].append((float(w[3]), int(w[4])))
        elif w[0] == "phase":
            d["phase"][w[2]][int(w[1])] = {"steps": int(w[3]), "s": float(w[4]), "per": float(w[5]), "windows": int(w[6]),
                                           "wms": float(w[7])}
        elif w[0] == "cpu":
            d["cpu"][w[2]][int(w[1])] = [float(x) for x in w[3:]]
        elif w[:2] == ["lat", "running"]:
            d["shots"].append({"ms": float(w[3]), "values": int(w[4]), "step": int(w[5]), "to_line": float(w[6])})
        elif w[0] == "run":
            d["run"][mode].append(line[4:].rstrip())
    return d


def live_line(lines):
    """(windows, slowest-rank seconds, ms per window) from the run's `live:` line."""
    for l in lines:
        m = re.match(r"live:\s+(\d+) windows .*?, ([\d.]+) s in them .*?\(([\d.]+) ms per window\)", l)
        if m:
            return int(m.group(1)), float(m.group(2)), float(m.group(3))
    return None


def table(title, header, rows):
    print(f"\n## {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def job_summary(d):
    """One job's figures: median live/raw TCP throughput ratio (codec none, per round),
    live ms, value bytes; latency paused; latency running; step time idle and the
    querying / idle ratio (medians over the job's rounds)."""
    out = {}
    tp = d["tp"]
    if tp.get("live-none"):
        live, raw = tp["live-none"], tp["raw"]
        out["tp"] = med([raw[r]["ms"] / live[r]["ms"] for r in live if r in raw])
        out["live_ms"] = med([live[r]["ms"] for r in live])
        out["bytes"] = next(iter(live.values()))["bytes"]
        out["mbs"] = out["bytes"] / 1e3 / out["live_ms"]
    if d["paused"]:
        out["paused_ms"] = med([p[0] for p in d["paused"]])
        out["values"] = d["paused"][0][1]
    if d["shots"]:
        out["running_ms"] = med([s["ms"] for s in d["shots"]])
        out["values"] = d["shots"][0]["values"]
        # Beyond the wait for the boundary (as main(): the `live:` line's copy, if any, is
        # done before `rewind run` prints the step's line; the C example prints it first).
        run_live = live_line(d["run"].get("running", []))
        copy_ms = run_live[2] if run_live else 0.0
        out["beyond_ms"] = med([s["ms"] - max(0.0, s["to_line"] - copy_ms) for s in d["shots"] if s["to_line"] >= 0])
    ph = d["phase"]
    rs = sorted(r for r in ph["idle"] if r in ph["query"] and ph["idle"][r]["per"] > 0)
    if rs:
        out["step_ms"] = med([ph["idle"][r]["per"] for r in rs])
        out["cost"] = med([ph["query"][r]["per"] / ph["idle"][r]["per"] for r in rs])
        # The step time a window adds (the solvers' steps differ: this, not the ratio, compares).
        out["added_ms"] = med([(ph["query"][r]["per"] - ph["idle"][r]["per"]) * ph["query"][r]["steps"] /
                               max(1, ph["query"][r]["windows"]) for r in rs])
    return out


def compare(lines):
    """The C example against `rewind run`: per job, then per-round ratios."""
    jobs, key = defaultdict(list), None
    for line in lines:
        w = line.split()
        if w[:1] == ["job"]:
            key = (w[1], int(w[3]))
            jobs[key].append("mode " + w[2] + "\n")
        elif key and not line.startswith("#"):
            jobs[key].append(line)
    s = {k: job_summary(parse(v)) for k, v in jobs.items()}
    rounds = sorted({r for _, r in s})
    names = {"heat-c": "C example (heat.c)", "rewind-run": "rewind run"}
    figures = [("tp", "live / raw TCP, codec none", "{:.0%}"), ("mbs", "live value MB/s", "{:.0f}"),
               ("paused_ms", "latency paused ms", "{:.1f}"), ("running_ms", "latency running ms", "{:.1f}"),
               ("beyond_ms", "running: latency − wait for the boundary ms", "{:.1f}"),
               ("step_ms", "idle step ms", "{:.1f}"), ("cost", "querying / idle step", "{:.3f}"),
               ("added_ms", "step time added per window ms", "{:.1f}")]
    rows = []
    for r in rounds:
        for kind in ("rewind-run", "heat-c"):
            f = s.get((kind, r), {})
            rows.append([str(r), names[kind], f"{f.get('values', 0)}"] +
                        [fmt.format(f[k]) if k in f else "–" for k, _, fmt in figures])
    table("Each job (median over its own rounds)", ["round", "job", "values per window"] + [t for _, t, _ in figures], rows)
    rows = []
    for k, title, _ in figures[:5]:  # the steps' figures compare solvers, not live paths: below
        ratio = [s[("heat-c", r)][k] / s[("rewind-run", r)][k] for r in rounds
                 if k in s.get(("heat-c", r), {}) and k in s.get(("rewind-run", r), {})]
        if ratio:
            rows.append([title, f"**{med(ratio):.2f}**", f"{min(ratio):.2f}–{max(ratio):.2f}",
                         ", ".join(f"{x:.2f}" for x in ratio)])
    table("C example / rewind run: median of the per-round ratios", ["figure", "median", "min–max", "rounds"], rows)
    rows = []
    for k, title, fmt in figures[5:]:
        rows.append([title] + [fmt.format(med([s[(kind, r)][k] for r in rounds if k in s.get((kind, r), {})]))
                               for kind in ("rewind-run", "heat-c")])
    table("Step time with a client querying back to back (each against its own idle step; median over rounds)",
          ["figure", names["rewind-run"], names["heat-c"]], rows)
    print()


def main(path):
    lines = open(path).readlines()
    if any(line.startswith("job ") for line in lines):
        return compare(lines)
    d = parse(lines)
    MB = 1e6
    tp = d["tp"]
    kinds = [k for k in ("live-none", "live-none-kept", "live-zstd", "live-zstd-remote") if tp.get(k)]
    what = {"live-none": "codec none (the default on loopback)", "live-none-kept": "codec none, into kept arrays",
            "live-zstd": "codec zstd only", "live-zstd-remote": "zstd, then none (the default away from loopback, 1.6)"}
    if kinds:
        rounds = sorted(tp[kinds[0]])
        vb = tp[kinds[0]][rounds[0]]["bytes"]
        rms, rwms = (med([tp[k][r]["ms"] for r in tp[k]]) for k in ("raw", "rawwire"))
        print(f"# {len(rounds)} rounds; ms = median over rounds; ratios = median of the per-round ratios")
        rows = []
        for k in kinds:
            live = tp[k]
            wb = live[rounds[0]]["wire"]
            ratio = [tp["raw"][r]["ms"] / live[r]["ms"] for r in sorted(live) if r in tp["raw"]]
            ratio_w = [tp["rawwire"][r]["ms"] / live[r]["ms"] for r in sorted(live) if r in tp["rawwire"]]
            lms = med([live[r]["ms"] for r in live])
            rows.append([f"whole domain, {vb // 33} cells × u, v, w, p; {what[k]}", f"{vb / MB:.1f}",
                         f"{wb / MB:.1f} ({vb / wb:.2f}×)", f"{lms:.1f} ({min(live[r]['ms'] for r in live):.1f}–"
                         f"{max(live[r]['ms'] for r in live):.1f})", f"{vb / MB / lms * 1e3:.0f}", f"{rms:.1f}",
                         f"{vb / MB / rms * 1e3:.0f}",
                         f"{100 * med(ratio):.0f} % ({100 * min(ratio):.0f}–{100 * max(ratio):.0f}; "
                         f"rounds: {', '.join(f'{100 * x:.0f}' for x in ratio)})", f"{rwms:.1f}", f"{100 * med(ratio_w):.0f} %"])
        table("Throughput of a large window (run paused) against raw loopback TCP, same run",
              ["window", "value MB (f64 + u8 types)", "wire MB", "live ms (min–max)", "live value MB/s",
               "raw TCP ms (value bytes)", "raw TCP MB/s", "live / raw TCP (value bytes): median (min–max; rounds)",
               "raw TCP ms (zstd wire bytes)", "live / raw TCP (zstd wire bytes)"], rows)
        codec = d["codec"]
        if codec and "live-zstd" in kinds:
            enc, dec = med([c["enc"] for c in codec]), med([c["dec"] for c in codec])
            lms = med([tp["live-zstd"][r]["ms"] for r in tp["live-zstd"]])
            print(f"\nIn-process, same reply: zstd encode (the server's level) {enc:.1f} ms = "
                  f"{vb / MB / enc * 1e3:.0f} MB/s, decode {dec:.1f} ms = {vb / MB / dec * 1e3:.0f} MB/s; "
                  f"live (zstd) − encode − decode − raw TCP of the wire bytes = {lms - enc - dec - rwms:.1f} ms "
                  "(selection, MPI gather, copies, queueing)")
        if "live-none" in kinds:
            lms = med([tp["live-none"][r]["ms"] for r in tp["live-none"]])
            print(f"live (none) − raw TCP of the value bytes = {lms - rms:.1f} ms (selection, MPI gather, JSON, "
                  "the client's arrays, queueing)")
    paused = d["paused"]
    shots = d["shots"]
    phase = d["phase"]
    idle_per = [phase["idle"][r]["per"] for r in phase["idle"]]
    step_ms = med(idle_per)
    run_live = live_line(d["run"].get("running", []))
    copy_ms = run_live[2] if run_live else 0.0  # a run without the `live:` line (older build): no correction
    if paused or shots:
        rows = []
        if paused:
            ms = [p[0] for p in paused]
            rows.append(["paused (no step to wait for)", f"{paused[0][1]}", str(len(ms)), f"{med(ms):.1f}", f"{max(ms):.1f}",
                         "0", f"{med(ms):.1f} / {max(ms):.1f}"])
        if shots:
            ms = [s["ms"] for s in shots]
            # Wait for the boundary ≈ request → the step's progress line, less the copy the
            # compute ranks do at that boundary before printing it.
            path = [s["ms"] - max(0.0, s["to_line"] - copy_ms) for s in shots if s["to_line"] >= 0]
            wait = [max(0.0, s["to_line"] - copy_ms) for s in shots if s["to_line"] >= 0]
            rows.append([f"running, sent at random moments (step {step_ms:.0f} ms)", f"{shots[0]['values']}", str(len(ms)),
                         f"{med(ms):.1f}", f"{max(ms):.1f}", f"{med(wait):.1f} / {max(wait):.1f}",
                         f"{med(path):.1f} / {max(path):.1f}"])
            over = sum(1 for p in path if p > 100)
            print(f"\n# running: {over} of {len(path)} windows took more than 100 ms beyond their wait for the boundary")
        table("Latency of a 10^6-value window (whole domain, p, budget 2^20)",
              ["when", "values", "n", "median ms", "max ms", "wait for the boundary ms (median / max)",
               "latency − wait ms (median / max)"], rows)
    if phase["idle"]:
        rs = sorted(r for r in phase["idle"] if r in phase["query"])
        ratio = [phase["query"][r]["per"] / phase["idle"][r]["per"] for r in rs]
        qper = med([phase["query"][r]["per"] for r in rs])
        per_step = [phase["query"][r]["windows"] / max(1, phase["query"][r]["steps"]) for r in rs]
        table("Step time with no client and with a client querying back to back (alternating phases, one run)",
              ["round", "idle ms/step (steps)", "querying ms/step (steps)", "windows per step", "median window ms",
               "querying / idle"],
              [[str(r), f"{phase['idle'][r]['per']:.1f} ({phase['idle'][r]['steps']})",
                f"{phase['query'][r]['per']:.1f} ({phase['query'][r]['steps']})", f"{per_step[i]:.2f}",
                f"{phase['query'][r]['wms']:.1f}", f"{ratio[i]:.3f}"] for i, r in enumerate(rs)])
        print(f"\nMedian step: idle {step_ms:.1f} ms, querying {qper:.1f} ms; querying / idle = {med(ratio):.3f} "
              f"(median of the per-round ratios; rounds {min(ratio):.2f}–{max(ratio):.2f}).")
        if run_live:
            print(f"Copy cost on the compute ranks (`live:` line of that run): {run_live[0]} windows, {run_live[1]:.2f} s on "
                  f"the slowest rank, {copy_ms:.2f} ms per window = {copy_ms * med(per_step):.2f} ms per step at "
                  f"{med(per_step):.2f} windows per step, {100 * copy_ms * med(per_step) / step_ms:.2f} % of the idle step.")
    cpu = d["cpu"]
    if cpu["idle"] and cpu["query"]:
        n = len(next(iter(cpu["idle"].values())))
        names = ["nbserver (rank 0)", "collector (rank 1)"] + [f"compute rank {k}" for k in range(n - 3)] + ["client (bench)"]

        def per_step(kind, i):
            return med([cpu[kind][r][i] / max(1, phase[kind][r]["steps"]) for r in cpu[kind] if r in phase[kind]])

        table("CPU time per step by process (user + system, /proc; median over rounds)",
              ["process", "idle ms/step", "querying ms/step", "difference"],
              [[names[i], f"{per_step('idle', i):.1f}", f"{per_step('query', i):.1f}",
                f"{per_step('query', i) - per_step('idle', i):+.1f}"] for i in range(n)])
    for mode, lines in d["run"].items():
        for l in lines:
            if l.startswith(("done:", "live:", "rewind run:")):
                print(f"\n{mode} run: {l}", end="")
    print()


if __name__ == "__main__":
    main(sys.argv[1])

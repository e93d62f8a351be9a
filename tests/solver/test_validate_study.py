"""bench/solver/validate.py's grid-convergence study and its 2D-3 reading (`ramp`) against
monitor tables made up from known error laws: f(h) = f_exact + C h^p, so the observed
order and the Richardson value are known in closed form (the oracle), and the verdicts
follow from the reference intervals."""
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

VALIDATE = Path(__file__).resolve().parents[2] / "bench" / "solver" / "validate.py"
HEADER = "step,time,dt,kinetic_energy,max_velocity,max_divergence,pressure_cycles,pressure_residual,cd,cl,cl_z,dp,strouhal,u_ref"


def write_monitor(path, rows):
    """rows: (time, cd, cl, dp), in the monitor CSV's layout (comment line first)."""
    lines = ["# case: synthetic", HEADER]
    for n, (t, cd, cl, dp) in enumerate(rows):
        lines.append(f"{n},{t!r},1e-3,0,0,0,1,0,{cd!r},{cl!r},0,{dp!r},nan,1")
    path.write_text("\n".join(lines) + "\n")


def run(*args):
    r = subprocess.run([sys.executable, str(VALIDATE), "study", *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return {m.group(1): m.group(2).split() for m in re.finditer(r"^\s*(\w+)\s+(.*)$", r.stdout, re.M)}, r.stdout


def test_steady_orders_and_limits(tmp_path):
    files = []
    for n, h in enumerate([1.0, 0.5, 0.25]):
        f = tmp_path / f"g{n}.csv"
        # c_d second order to 5.58 (inside), c_l first order to 0.0125 (outside),
        # dp moving away as h shrinks (no order can be read).
        write_monitor(f, [(0.0, 9.0, 0.0, 0.0), (1.0, 5.58 + 0.08 * h * h, 0.0125 + 0.004 * h, 0.1174 + 0.001 / h)])
        files.append(f)
    rows, out = run(*files, "--steady")
    cd, cl, dp = rows["cd"], rows["cl"], rows["dp"]
    assert float(cd[3]) == pytest.approx(2.0, abs=1e-6) and float(cd[4]) == pytest.approx(5.58, abs=1e-5)
    assert cd[-1] == "inside"
    # GCI of the fine grid: 1.25 |f1 - f2| / |f1| / (r^p - 1), in per cent.
    f1, f2 = 5.58 + 0.08 / 16, 5.58 + 0.08 / 4
    assert float(cd[5].rstrip("%")) == pytest.approx(100 * 1.25 * (f2 - f1) / f1 / 3, abs=6e-4)
    assert float(cl[3]) == pytest.approx(1.0, abs=1e-6) and float(cl[4]) == pytest.approx(0.0125, abs=1e-5)
    assert cl[-1] == "OUTSIDE"
    assert " ".join(dp[-4:]) == "diverging: the differences grow"


def test_periodic_amplitude_order(tmp_path):
    files = []
    for n, h in enumerate([1.0, 0.5, 0.25]):
        f = tmp_path / f"g{n}.csv"
        A = 1.0 - 0.2 * h ** 1.5  # lift amplitude converging at order 1.5 to 1.0
        T = 1.0 / 3.0              # St = D / (U T) = 0.3 with D = 0.1, U = 1
        rows = []
        for i in range(4001):
            t = 2.0 * i / 4000
            rows.append((t, 3.23 + 0.01 * math.cos(4 * math.pi * t / T), A * math.sin(2 * math.pi * t / T + 0.1), 2.5))
        write_monitor(f, rows)
        files.append(f)
    rows, _ = run(*files)
    cl = rows["cl_max"]
    assert float(cl[3]) == pytest.approx(1.5, abs=0.02)
    assert float(cl[4]) == pytest.approx(1.0, abs=2e-4)
    assert cl[-1] == "inside"
    assert " ".join(rows["st"][-3:]) == "no monotone convergence"  # the same period on every grid


def test_steady_window_mean(tmp_path):
    # A steady run whose lift keeps an oscillation: the window's mean is the value, the
    # restart-style first row (dt = 0, no force yet) is not part of it.
    f = tmp_path / "osc.csv"
    rows = [(6.0 + 4.0 * i / 800, 5.58, 0.0107 + 0.0003 * math.sin(2 * math.pi * i / 100), 0.1174) for i in range(801)]
    write_monitor(f, rows)
    text = f.read_text().splitlines()
    text[2] = text[2].replace(",1e-3,", ",0,").replace(f",{0.0107!r},", ",0.0,")  # the dt = 0 row
    f.write_text("\n".join(text) + "\n")
    r = subprocess.run([sys.executable, str(VALIDATE), "cylinder", str(f), "--steady", "--window", "4"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cl = re.search(r"^\s*cl = ([0-9.]+)\s.*inside$", r.stdout, re.M)
    assert cl and float(cl.group(1)) == pytest.approx(0.0107, abs=2e-6), r.stdout


def test_careless_input(tmp_path):
    # One line naming what is wrong and a non-zero exit, no traceback.
    ok = tmp_path / "ok.csv"
    write_monitor(ok, [(0.0, 0.0, 0.0, 0.0), (1.0, 5.58, 0.0107, 0.1174)])
    bad = tmp_path / "bad.csv"
    bad.write_text("time,something\n1,2\n")
    for args, word in (([ok, ok, tmp_path / "missing.csv"], "missing.csv"), ([ok, ok, bad], "not a rewind monitor"),
                       ([ok, ok, ok, "--ratio", "1"], "--ratio")):
        r = subprocess.run([sys.executable, str(VALIDATE), "study", *map(str, args), "--steady"], capture_output=True, text=True)
        assert r.returncode != 0 and "Traceback" not in r.stderr and word in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) <= 2, r.stderr  # argparse adds its usage line


def settling(A_inf, c, q, T=1.0 / 3.0, t_end=3.0):
    """A shedding run approaching its limit cycle geometrically: the lift amplitude at time
    t is A_inf - c q^(t / T), so the per-period maxima close in by the ratio q a period and
    Aitken's delta-squared of any three of them is A_inf (the oracle)."""
    rows = []
    for i in range(12001):
        t = t_end * i / 12000
        A = A_inf - c * q ** (t / T)
        rows.append((t, 3.2 + 0.5 * (A - A_inf) + 0.01 * math.cos(4 * math.pi * t / T),
                     A * math.sin(2 * math.pi * t / T + 0.1), 2.5))
    return rows


def test_settle_limit_of_an_approaching_cycle(tmp_path):
    f = tmp_path / "approach.csv"
    write_monitor(f, settling(0.97, 0.1, 0.55, t_end=2.0))
    r = subprocess.run([sys.executable, str(VALIDATE), "cylinder", str(f), "--settle"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cl = re.search(r"^cl_max = ([0-9.]+)", r.stdout, re.M)
    assert float(cl.group(1)) == pytest.approx(0.97, abs=2e-4), r.stdout   # the limit, not the last maximum
    assert re.search(r"^cl_max per period: .*Aitken, ratio 0\.5[4-6]", r.stdout, re.M), r.stdout
    cd = re.search(r"^cd_max = ([0-9.]+)", r.stdout, re.M)
    assert float(cd.group(1)) == pytest.approx(3.21, abs=5e-4), r.stdout
    # Without --settle the last periods' maximum is reported: still short of the limit.
    r = subprocess.run([sys.executable, str(VALIDATE), "cylinder", str(f)], capture_output=True, text=True)
    assert float(re.search(r"^cl_max = ([0-9.]+)", r.stdout, re.M).group(1)) < 0.97 - 1e-3


def test_settle_study_of_three_approaching_runs(tmp_path):
    files = []
    for n, h in enumerate([1.0, 0.5, 0.25]):
        f = tmp_path / f"s{n}.csv"
        write_monitor(f, settling(1.0 - 0.08 * h * h, 0.04, 0.5))  # limits converge at order 2 to 1.0
        files.append(f)
    rows, out = run(*files, "--settle")
    cl = rows["cl_max"]
    assert float(cl[3]) == pytest.approx(2.0, abs=0.05), out
    assert float(cl[4]) == pytest.approx(1.0, abs=5e-4), out


def test_maxima_between_samples(tmp_path):
    # A monitor that samples the lift 20 times a period, the crest 0.1 rad from the
    # nearest sample: the largest sample is 0.5 % short of the amplitude (a coarse run's
    # every-fifth-step monitor loses up to 0.15 %); the reported maxima are the
    # amplitude itself.
    f = tmp_path / "coarse.csv"
    T = 1.0 / 3.0
    rows = [(t, 3.23 + 0.01 * math.cos(4 * math.pi * t / T + 0.3), 0.98 * math.sin(2 * math.pi * t / T + 0.1), 2.5)
            for t in (T / 20 * i for i in range(161))]
    write_monitor(f, rows)
    assert max(row[2] for row in rows) < 0.98 - 2e-3  # what the largest sample alone would say
    for extra in ([], ["--settle"]):
        r = subprocess.run([sys.executable, str(VALIDATE), "cylinder", str(f), *extra], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        cl = float(re.search(r"^cl_max = ([0-9.]+)", r.stdout, re.M).group(1))
        cd = float(re.search(r"^cd_max = ([0-9.]+)", r.stdout, re.M).group(1))
        assert cl == pytest.approx(0.98, abs=3e-4) and cd == pytest.approx(3.24, abs=1e-4), r.stdout


def ramp_table(path, dt, t_end=8.0):
    """A 2D-3 run whose maxima and dp(8) carry an error C dt^2: c_d and c_l are parabolas
    around their crests (the reading's parabola recovers a crest between samples exactly),
    so the dt -> 0 values are the ones below and the observed order is 2."""
    cd_max, cl_max, dp8 = 2.9509 + 20 * dt ** 2, 0.478 + 1000 * dt ** 2, -0.1116 + 30 * dt ** 2
    rows = []
    for i in range(int(round(t_end / dt)) + 1):
        t = i * dt
        rows.append((t, cd_max - 0.5 * (t - 3.93625) ** 2, cl_max - 2.0 * (t - 5.693125) ** 2, dp8 + 0.01 * (t - 8.0)))
    write_monitor(path, rows)


def test_ramp_orders_and_limits(tmp_path):
    files = []
    for dt in (0.01, 0.005, 0.0025):
        files.append(tmp_path / f"s{dt}.csv")
        ramp_table(files[-1], dt)
    r = subprocess.run([sys.executable, str(VALIDATE), "ramp", *map(str, files)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = {m.group(1): m.group(2).split() for m in re.finditer(r"^\s*(cd_max|cl_max|dp8)\s+(.*)$", r.stdout, re.M)}
    for key, exact in (("cd_max", 2.9509), ("cl_max", 0.478), ("dp8", -0.1116)):
        assert float(rows[key][0]) == pytest.approx(exact, abs=2e-5), r.stdout
        assert float(rows[key][1]) == pytest.approx(2.0, abs=0.01), r.stdout
        assert rows[key][-1] == "inside"
    # the coarsest run alone: its lift maximum 0.578, outside [0.47, 0.49], at the crest's time
    one = subprocess.run([sys.executable, str(VALIDATE), "ramp", str(files[0])], capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    assert "c_l max 0.57800 (t 5.690)" in one.stdout
    assert re.search(r"^\s*cl_max\s+0\.57800\s+-.*OUTSIDE$", one.stdout, re.M), one.stdout


def test_ramp_needs_t8_and_three_runs(tmp_path):
    short = tmp_path / "short.csv"
    ramp_table(short, 0.01, t_end=7.0)
    r = subprocess.run([sys.executable, str(VALIDATE), "ramp", str(short)], capture_output=True, text=True)
    assert r.returncode == 2 and "no row at t = 8" in r.stderr and r.stdout == ""
    two = subprocess.run([sys.executable, str(VALIDATE), "ramp", str(short), str(short)], capture_output=True, text=True)
    assert two.returncode == 2 and "three whose time step halves" in two.stderr


def test_ramp_without_an_order_says_so(tmp_path):
    # three runs whose differences grow (given finest first): no dt -> 0 value; the last run's is shown, and why
    files = []
    for n, dt in enumerate((0.01, 0.005, 0.0025)):
        files.append(tmp_path / f"s{n}.csv")
        ramp_table(files[-1], dt)
    files[0], files[2] = files[2], files[0]
    r = subprocess.run([sys.executable, str(VALIDATE), "ramp", *map(str, files)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("cl_max"))
    assert line.split()[1] == "0.57800" and line.split()[2] == "-", line
    assert line.endswith("OUTSIDE, the last run's: diverging: the differences grow"), line

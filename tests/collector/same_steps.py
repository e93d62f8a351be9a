"""Does a future of a fork compute exactly what its branch alone computes? An h5py oracle.

For every committed step of A (the future) and B (the solo branch: `rewind run --restart
PARENT@STEP --set ...`, perhaps on another rank count): the same step numbers, times,
kinds and dt, and every array of the step group (cell_data, cell_type, ...) equal byte for
byte grid by grid, the grids matched by their UID (a file written on another rank count
may order its rows differently). Also: A's lineage names PARENT, the branch step and the
changes given (--changes, ';'-separated key=value).

usage: same_steps.py A.h5 B.h5 --parent P.h5 --step N [--changes 'k=v;k=v'] [--subset] [--after M]
(--subset: A ended early -- stopped or forked -- so its steps need only be among B's;
 --common: either may have ended first -- the steps both reach must be the same steps;
 --after M: only the steps after M of each (a code that writes its branch point first, a
 restart alone does not; a solo continued in a copy of the parent holds the parent's too))
Exit 0 if equal, 1 with one line per difference (at most 5), 2 on bad input.
"""
import argparse
import sys

import h5py
import numpy as np


def steps(f):
    sim = f["simulation"]
    out = {}
    for name in sim:
        if not name.startswith("step_"):
            continue
        g = sim[name]
        if not bool(g.attrs.get("committed", True)):
            continue
        out[int(g.attrs["step"])] = g
    return out


def arrays(g):
    out = {}

    def visit(name, obj):
        # `rank` says which rank wrote a row: how it was written, not what.
        if isinstance(obj, h5py.Dataset) and obj.ndim >= 1 and name not in ("uid", "checksums", "rank") and \
                not name.startswith("statistics"):
            out[name] = obj
    g.visititems(visit)
    return out


def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return [text(x) for x in v]
    return str(v)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--parent", required=True)
    p.add_argument("--step", type=int, required=True)
    p.add_argument("--changes", default="")
    p.add_argument("--subset", action="store_true")
    p.add_argument("--common", action="store_true")
    p.add_argument("--after", type=int, default=None)
    o = p.parse_args()
    problems = []
    with h5py.File(o.a, "r") as fa, h5py.File(o.b, "r") as fb:
        lin = fa["common/lineage"]
        parent = text(lin.attrs.get("parent_file", b""))
        if parent.split("/")[-1] != o.parent.split("/")[-1]:
            problems.append(f"{o.a}: lineage parent {parent!r}, expected {o.parent}")
        if int(lin.attrs.get("parent_step", -1)) != o.step:
            problems.append(f"{o.a}: lineage parent_step {lin.attrs.get('parent_step')}, expected {o.step}")
        recorded = " ".join(text(x) for x in lin["changes"][()]) if "changes" in lin else ""
        for kv in filter(None, (c.strip() for c in o.changes.split(";"))):
            if kv.replace(" ", "") not in recorded.replace(" ", ""):
                problems.append(f"{o.a}: lineage changes {recorded!r} lack {kv!r}")
        sa, sb = steps(fa), steps(fb)
        if o.after is not None:
            sa = {s: g for s, g in sa.items() if s > o.after}
            sb = {s: g for s, g in sb.items() if s > o.after}
        # --subset: A's last step may be one B did not write (where A forked or stopped).
        if o.common:
            reach = min(max(sa, default=0), max(sb, default=0))
            if {s for s in sa if s < reach} != {s for s in sb if s < reach}:
                problems.append(f"steps before {reach} differ: {sorted(sa)} vs {sorted(sb)}")
        elif (not set(sorted(sa)[:-1]) <= set(sb)) if o.subset else sorted(sa) != sorted(sb):
            problems.append(f"steps differ: {sorted(sa)} vs {sorted(sb)}")
        if len(set(sa) & set(sb)) < 2:
            problems.append(f"{o.a}: {len(set(sa) & set(sb))} steps in common with {o.b}: too few to compare")
        for s in sorted(set(sa) & set(sb)):
            ga, gb = sa[s], sb[s]
            for attr in ("time", "kind", "dt"):
                if attr in ga.attrs and text(ga.attrs[attr]) != text(gb.attrs.get(attr)):
                    problems.append(f"step {s}: attribute {attr} {ga.attrs[attr]!r} vs {gb.attrs.get(attr)!r}")
            ua, ub = ga["uid"][()], gb["uid"][()]
            if sorted(ua.tolist()) != sorted(ub.tolist()):
                problems.append(f"step {s}: the grids' UIDs differ")
                continue
            order_a, order_b = np.argsort(ua, kind="stable"), np.argsort(ub, kind="stable")
            da, db = arrays(ga), arrays(gb)
            if sorted(da) != sorted(db):
                problems.append(f"step {s}: datasets {sorted(da)} vs {sorted(db)}")
            for name in sorted(set(da) & set(db)):
                x, y = da[name][()], db[name][()]
                if x.dtype != y.dtype or x.shape != y.shape:
                    problems.append(f"step {s}: {name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
                    continue
                if x.shape[0] == len(ua):  # one row per grid: match by UID
                    x, y = x[order_a], y[order_b]
                if x.tobytes() != y.tobytes():
                    problems.append(f"step {s}: {name} differs")
    for line in problems[:5]:
        print(line)
    if not problems:
        print(f"{o.a} = {o.b}: {len(sa)} steps, bit for bit")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""Checks that a live window and a file's window (both `rewind window --out X.json`) are
the same answer: the same rule (`lod`), step, grids (uid, level, first, count, stride),
values and cell types (none in a file: every cell fluid) -- the pieces' rows aside (-1 for a live window). With --mixed, the
pieces must span more than one level (an adaptive window that refined somewhere), with
--in-part some grid must be shown in part (several pieces of one grid: the octant walk,
format 1.10's shares, RWLV 9's), and with --budget N hold at most N cells.

usage: check_same_window.py LIVE.json FILE.json [--mixed] [--in-part] [--budget N]
"""
import json
import sys


def main():
    args = sys.argv[1:]
    live, file = (json.load(open(f)) for f in args[:2])
    key = lambda w: [(p["uid"], p["level"], p["first"], p["count"], p["stride"]) for p in w["pieces"]]
    assert live.get("lod") == file.get("lod"), f"rules differ: {live.get('lod')} / {file.get('lod')}"
    assert live["step"] == file["step"], f"steps differ: {live['step']} / {file['step']}"
    assert key(live) == key(file), "the selections differ"
    assert live["values"] == file["values"], "the values differ"
    # A code that writes no cell types: the file's window has none, the live state's says
    # every cell is fluid (0).
    live_types = live["cell_type"] or [0] * live["cells"]
    file_types = file["cell_type"] or [0] * file["cells"]
    assert live_types == file_types, "the cell types differ"
    levels = sorted({p["level"] for p in live["pieces"]})
    if "--mixed" in args:
        assert len(levels) > 1, f"one level only: {levels}"
    if "--in-part" in args:
        uids = [p["uid"] for p in live["pieces"]]
        assert len(set(uids)) < len(uids), "no grid shown in part (every grid one piece)"
    if "--budget" in args:
        budget = int(args[args.index("--budget") + 1])
        assert live["cells"] <= budget, f"{live['cells']} cells, budget {budget}"
    print(f"same: {live.get('lod')}, step {live['step']}, {len(live['pieces'])} pieces of "
          f"{len({p['uid'] for p in live['pieces']})} grids on levels {levels}, "
          f"{live['cells']} cells")


if __name__ == "__main__":
    main()

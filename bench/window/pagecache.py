"""Drop files from the page cache without root (fsync + POSIX_FADV_DONTNEED), for the
cold rounds of the sliding-window benchmark. `rewind_bench_window evict FILE` does the
same and checks it with mincore (run.sh prints that check once)."""
import os


def evict(*paths):
    """Evicts every file given; a directory means every file below it."""
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                evict(*(os.path.join(root, n) for n in names))
            continue
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def parse_plan(path):
    """The `plan` lines of rewind_bench_window: {(stem, budget): {...}}."""
    plan = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0] != "plan":
                continue
            plan[(w[1], int(w[2]))] = {
                "leaf": tuple(int(x) for x in w[3:6]),
                "level": int(w[6]), "stride": int(w[7]), "values": int(w[8]),
                "counts": tuple(int(x) for x in w[9:12]),
                "zoom_level": int(w[13]), "zoom_values": int(w[14]),
                "zoom_counts": tuple(int(x) for x in w[15:18]),
                "finer": float(w[19]),
            }
    return plan

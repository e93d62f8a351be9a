"""Rewind from Python: read Rewind run files, and talk to a Rewind collector.

    import rewind
    run = rewind.open("cylinder.h5")        # lazy: reads /common and the step index
    run.steps                               # committed steps: step, time, dt, kind, committed, ...
    u = run[-1]["u"]                        # the last step's leaf grids of u (a rewind.Field)
    u.values, u.x, u.y, u.bbox, u.level     # numpy arrays (n_grids, sz, sy, sx), centres, boxes
    s = run.at("t=2")                       # the step in force at t = 2 (also run.at(2.0))
    w = run.window(((0, 0, 0), (1, 0.41, 0)), budget=20_000, variables=["p"])
    img = w.image("p")                      # a window on one level as one array
    run.lineage, run.timeline()             # a branch's parent, its history through its parents
    run.timelines()                         # {path: Timeline}: this file's and every branch's below it

    with rewind.connect("127.0.0.1:7400") as c:   # `rewind serve` or `rewind run --listen`
                                                  # (or "run.h5": the live job writing it)
        c.status(); c.pause(); c.set({"physics.nu": 2e-3}); c.resume()
        c.branch("latest", futures=[{"values": {"physics.nu": 2e-3}}, {}]); c.futures()   # a fork
        w = c.window(((0, 0, 0), (1, 0.41, 0)), 20_000, ["p"])

The file reader (rewind.open, RunFile, Step, ...) needs numpy and h5py and is imported on
first use; the client needs only the standard library (numpy for windows, zstandard for
zstd-compressed windows). Errors: rewind.RewindError and its subclasses (rewind.errors).
File format: docs/file-format.md; protocol: docs/collector-protocol.md.
"""
from .client import Client, connect, read_contact, read_token_file, resolve_token
from .errors import (CollectorError, FileError, InvalidArgument, LineageError, NoSuchFile, NoSuchStep,
                     RewindError, UnknownVariable)
from .windows import Image, Piece, Window

__version__ = "0.1.0"

# The reader's names, imported from rewind.reader when first used (it needs h5py and numpy).
_FILE_NAMES = ("open", "RunFile", "Step", "StepInfo", "Grids", "Field", "Topology", "Lineage", "Timeline")


def __getattr__(name):
    if name in _FILE_NAMES:
        from . import reader
        return getattr(reader, name)
    raise AttributeError(f"module 'rewind' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_FILE_NAMES))


__all__ = ["Client", "Image", "Piece", "Window", "connect", "read_contact", "read_token_file", "resolve_token", "CollectorError",
           "FileError", "InvalidArgument", "LineageError", "NoSuchFile", "NoSuchStep", "RewindError",
           "UnknownVariable", *_FILE_NAMES]

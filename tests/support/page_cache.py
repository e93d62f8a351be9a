"""What of a Rewind file is in the page cache, and dropping it from there.

For tests that restart from a file the way it is after a while on a real machine: not in
memory, so a restart reads it from the disk. Independent of Rewind: h5py finds where a
step's cell datasets lie in the file (contiguous layout, docs/file-format.md §3) and
mincore(2) says which of those pages are resident.

usage:
  page_cache.py evict FILE             fsync FILE, then drop its pages from the cache
  page_cache.py checkpoint FILE        the step number of the last committed checkpoint
  page_cache.py cached FILE [STEP]     the fraction (0..1) of the pages of that step's
                                       fields (default: the last committed checkpoint)
                                       that are in the cache
  page_cache.py direct_ok DIR          exit 0 if DIR's file system takes O_DIRECT reads
Exit 2 with one line on bad input.
"""
import ctypes
import ctypes.util
import mmap
import os
import sys

import h5py

FIELD_GROUPS = ("cell_data", "previous_cell_data", "temp_cell_data")


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # dirty pages cannot be dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def last_checkpoint(path):
    with h5py.File(path, "r") as h5:
        index = h5["/simulation/index"][:]
        steps = [int(r["step"]) for r in index if int(r["committed"]) == 1 and int(r["kind"]) == 1]
        if not steps:
            raise ValueError(f"{path}: no committed checkpoint step")
        return max(steps)


def field_extents(path, step):
    """(offset, bytes) of every field dataset of the step."""
    with h5py.File(path, "r") as h5:
        g = h5[f"/simulation/step_{step:08d}"]
        out = []
        for name in FIELD_GROUPS:
            for ds in (g[name].values() if name in g else []):
                offset = ds.id.get_offset()
                if offset is None:
                    raise ValueError(f"{path}: {ds.name} is not contiguous")
                out.append((offset, ds.id.get_storage_size()))
        return out


def resident_fraction(path, extents):
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    page = mmap.PAGESIZE
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
        try:
            pages = (size + page - 1) // page
            vec = ctypes.create_string_buffer(pages)
            if libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), f"mincore {path}")
            resident = total = 0
            for offset, nbytes in extents:
                for p in range(offset // page, (offset + nbytes - 1) // page + 1):
                    total += 1
                    resident += vec.raw[p] & 1
            return resident / total if total else 0.0
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def direct_ok(folder):
    probe = os.path.join(folder, ".o_direct_probe")
    try:
        with open(probe, "wb") as f:
            f.write(b"\0" * 4096)
        fd = os.open(probe, os.O_RDONLY | os.O_DIRECT)
        try:
            buf = mmap.mmap(-1, 4096)  # page aligned
            return os.readv(fd, [buf]) == 4096
        finally:
            os.close(fd)
    except OSError:
        return False
    finally:
        if os.path.exists(probe):
            os.remove(probe)


def main(argv):
    if len(argv) not in (3, 4) or argv[1] not in ("evict", "checkpoint", "cached", "direct_ok"):
        print(__doc__.strip().splitlines()[0], "— see usage in", argv[0], file=sys.stderr)
        return 2
    cmd, arg = argv[1], argv[2]
    try:
        if cmd == "evict":
            evict(arg)
        elif cmd == "checkpoint":
            print(last_checkpoint(arg))
        elif cmd == "cached":
            step = int(argv[3]) if len(argv) == 4 else last_checkpoint(arg)
            print(f"{resident_fraction(arg, field_extents(arg, step)):.3f}")
        else:
            return 0 if direct_ok(arg) else 1
    except (OSError, ValueError, KeyError) as e:
        print(f"page_cache.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

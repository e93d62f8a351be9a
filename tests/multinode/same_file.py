"""Are two Rewind files the same, bit for bit? An h5py oracle (no Rewind code).

Every group, dataset and attribute of REF is in FILE and the other way round; every
dataset's values (decompressed: h5py applies the filters) and every attribute are equal
byte for byte (NaN equals NaN: the bytes are compared), with the same HDF5 type and
shape, and a chunked dataset has the same chunks and filter. One thing may differ: the
case file stored in /common/case_file (and its xxh3 attribute) records the [output.io]
table of the run that wrote the file -- how it wrote, not what -- so the two case files
must be equal once that table is removed (parsed with tomllib).

usage: same_file.py REF.h5 FILE.h5 [FILE.h5 ...]
Exit 0 when every FILE equals REF, 1 with one line per difference (at most 5 per file),
2 on bad input.
"""
import sys
import tomllib

import h5py
import numpy as np

HOW_IT_WROTE = {"/common/case_file"}  # and its attributes


def walk(h5):
    """{path: object} of every group and dataset under the root, the root included."""
    out = {"/": h5}
    h5.visititems(lambda name, obj: out.__setitem__("/" + name, obj))
    return out


def case_without_io(ds):
    text = ds[()]
    text = text[0] if isinstance(text, np.ndarray) else text
    case = tomllib.loads(text.decode() if isinstance(text, bytes) else text)
    case.get("output", {}).pop("io", None)
    return case


def same_value(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def differences(ref, other):
    a, b = walk(ref), walk(other)
    for path in sorted(set(a) ^ set(b)):
        yield f"{path}: only in {'the reference' if path in a else 'the file'}"
    for path in sorted(set(a) & set(b)):
        x, y = a[path], b[path]
        if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
            yield f"{path}: a dataset in one file, a group in the other"
            continue
        how = path in HOW_IT_WROTE
        if set(x.attrs) != set(y.attrs):
            yield f"{path}: attributes {sorted(set(x.attrs) ^ set(y.attrs))} in one file only"
        for name in set(x.attrs) & set(y.attrs):
            if not (how and name == "xxh3") and not same_value(x.attrs[name], y.attrs[name]):
                yield f"{path}@{name}: differs"
        if not isinstance(x, h5py.Dataset):
            continue
        if x.chunks != y.chunks or x.compression != y.compression:
            yield f"{path}: stored differently (chunks {x.chunks} vs {y.chunks}, filter {x.compression} vs {y.compression})"
        if how:
            if case_without_io(x) != case_without_io(y):
                yield f"{path}: the case files differ beyond [output.io]"
        elif not same_value(x[()], y[()]):
            yield f"{path}: values differ"


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    bad = 0
    try:
        with h5py.File(sys.argv[1], "r") as ref:
            for name in sys.argv[2:]:
                with h5py.File(name, "r") as f:
                    found = list(differences(ref, f))
                for d in found[:5]:
                    print(f"{name}: {d}")
                bad += len(found) > 0
    except OSError as e:
        print(f"same_file.py: {e}", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

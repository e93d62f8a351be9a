"""rewind.grids: what a step of a run file holds, read with h5py: its tree (Topology; row
by row for a window's walk, _StepRows), a set of its grids with their coordinates (Grids)
and a variable's cells on them (Field). Made by rewind.reader's Step; reads go through
its RunFile.
"""
import numpy as np

from .errors import FileError


class Topology:
    """The tree of one step, one entry per row (row 0 the root, rows level-major): uid,
    level, parent_row, child_rows (n, nc; -1 = none), bbox (n, 6: [xmin, xmax, ymin,
    ymax, zmin, zmax]), level_offsets (rows [off[l], off[l+1]) are level l), is_leaf."""

    def __init__(self, run, step):
        g = f"/simulation/step_{step.number:08d}"
        read = {n: run._read(run._dataset(step, n)) for n in
                ("uid", "level", "parent_row", "child_rows", "bounding_box", "level_offsets")}
        self.uid, self.level, self.parent_row = read["uid"], read["level"], read["parent_row"]
        self.child_rows, self.bbox, self.level_offsets = read["child_rows"], read["bounding_box"], read["level_offsets"]
        n = step.n_grids
        bad = None
        if any(len(a) != n for a in (self.uid, self.level, self.parent_row, self.child_rows, self.bbox)):
            bad = "topology datasets do not have one row per grid"
        elif self.child_rows.shape[1:] != (run.max_children,) or self.bbox.shape[1:] != (6,):
            bad = "child_rows or bounding_box has the wrong width"
        elif len(self.level_offsets) != step.n_levels + 1 or (n and (self.level_offsets[0] != 0
                                                                      or self.level_offsets[-1] != n)):
            bad = "level_offsets does not cover all rows"
        elif n and (self.child_rows.min() < -1 or self.child_rows.max() >= n or self.parent_row.min() < -1
                    or self.parent_row.max() >= n):
            bad = "parent_row or child_rows out of range"
        if bad:
            raise FileError(f"{run.path}: {g}: {bad} (damaged file?)")
        self.is_leaf = np.all(self.child_rows < 0, axis=1)


class _StepRows:
    """The topology of one step read row by row as a window's walk reaches it (a row
    source for selection.select_rows: level, bounding_box and child_rows of the rows
    asked for, as h5py hyperslabs), so a cold window reads only the rows it visits, as
    `rewind window` does (window::StepRows). rows_read counts the rows read. With
    `detail` (a cell_data variable whose statistics the step stores), it also answers
    the adaptive walk's details (column 2 of statistics/<detail>) of the rows it asks."""

    def __init__(self, run, step, detail=None, shares=None):
        self.run, self.n, self.where = run, step.n_grids, f"/simulation/step_{step.number:08d}"
        self.max_children = run.max_children
        self.has_shares = shares is not None
        self._shares = run._dataset(step, f"shares/{shares}") if shares is not None else None
        if self._shares is not None and self._shares.shape != (self.n, run.max_children):
            self._bad(f"shares/{shares} does not have one row of {run.max_children} values per grid")
        self.rows_read = 0
        self._d = [run._dataset(step, name) for name in ("level", "bounding_box", "child_rows")]
        self.has_detail = detail is not None
        self._detail = run._dataset(step, f"statistics/{detail}") if detail is not None else None
        if self._detail is not None and self._detail.shape != (self.n, 3):
            self._bad(f"statistics/{detail} does not have one row of 3 values per grid")
        if any(d.shape[:1] != (self.n,) for d in self._d):
            self._bad("topology datasets do not have one row per grid")
        if self._d[1].shape[1:] != (6,) or self._d[2].shape[1:] != (run.max_children,):
            self._bad("child_rows or bounding_box has the wrong width")

    def _bad(self, what):
        raise FileError(f"{self.run.path}: {self.where}: {what} (damaged file?)")

    def read(self, rows):
        self.rows_read += len(rows)
        level, bbox, child_rows = (self.run._read(d, rows, gap=64) for d in self._d)
        if len(child_rows) and (child_rows.min() < -1 or child_rows.max() >= self.n):
            self._bad("parent_row or child_rows out of range")
        return level, bbox, child_rows

    def detail(self, rows):
        return self.run._read(self._detail, rows, gap=64)[:, 2]

    def shares(self, rows):
        return self.run._read(self._shares, rows, gap=64)


class Grids:
    """A set of grids (rows) of one step: rows, uid, level, bbox (n, 6), origin and
    spacing (n, 3: the lower corner and one cell's size), cell centres x (n, sx), y (n,
    sy), z (n, sz); grids["u"] reads their cells of u (a Field), grids.cell_type theirs."""

    def __init__(self, step, rows):
        t = step.topology
        self.step, self.rows = step, rows
        self.uid, self.level, self.bbox = t.uid[rows], t.level[rows], t.bbox[rows]
        cells = np.array(step.run.block_cells, dtype=float)
        self.origin = self.bbox[:, 0::2]
        self.spacing = (self.bbox[:, 1::2] - self.bbox[:, 0::2]) / cells
        self.x, self.y, self.z = (self.origin[:, a, None] + self.spacing[:, a, None] * (np.arange(int(cells[a])) + 0.5)
                                  for a in range(3))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, name):
        s = self.step
        values = s.run._read(s.run._dataset(s, s._check_variable(name)), self.rows)
        return Field(name, values, self)

    @property
    def cell_type(self):
        """uint8 (n, sz, sy, sx): 0 fluid, 1 solid, 2 interface; None if the step stores none."""
        s = self.step
        return s.run._read(s.run._dataset(s, "cell_type"), self.rows) if "cell_type" in s._group else None

    def __repr__(self):
        levels = sorted(set(self.level.tolist()))
        return f"<rewind.Grids {len(self)} grids of step {self.step.number} on levels {levels}>"


class Field:
    """A variable's cells on a set of grids, the way xarray would hold them:
    values (n_grids, sz, sy, sx) as stored (float32 in a float32 step), dims ("grid",
    "z", "y", "x"), coords {"x": (n, sx), "y": (n, sy), "z": (n, sz) cell centres,
    "uid", "level", "row"}; also bbox, origin, spacing, unit, step (number) and time.
    numpy.asarray(field) is field.values; field[i] is grid i's (sz, sy, sx) array."""

    dims = ("grid", "z", "y", "x")

    def __init__(self, name, values, grids):
        self.name, self.values, self.grids = name, values, grids
        step = grids.step
        self.unit = step.run.units.get(name.rpartition("/")[2], "")
        self.step, self.time = step.number, step.time
        self.uid, self.level, self.row, self.bbox = grids.uid, grids.level, grids.rows, grids.bbox
        self.origin, self.spacing, self.x, self.y, self.z = grids.origin, grids.spacing, grids.x, grids.y, grids.z
        self.coords = {"x": self.x, "y": self.y, "z": self.z, "uid": self.uid, "level": self.level, "row": self.row}

    shape = property(lambda self: self.values.shape)
    dtype = property(lambda self: self.values.dtype)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, i):
        return self.values[i]

    def __array__(self, dtype=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __repr__(self):
        return (f"<rewind.Field {self.name} [{self.unit}] of step {self.step} (t={self.time:.6g}): "
                f"{self.values.shape} {self.values.dtype}, levels {sorted(set(self.level.tolist()))}>")

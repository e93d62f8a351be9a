"""rewind.windows: a sliding window's cells (Window, Piece, Image), the same whether it
comes from a collector (rewind.Client.window) or from a file (rewind.open(path).window).
Needs numpy, imported when a window is made.

Shipped alone beside rewind_client.py in the ParaView plugin, as rewind_client_windows
(as client.py is as rewind_client): it imports nothing of the package but its errors.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    import numpy as np

try:
    from .errors import InvalidArgument
except ImportError:  # alone, as the ParaView plugin's rewind_client_windows (imported by rewind_client)
    from rewind_client import InvalidArgument


class Window:
    """A sliding window: the cells of one step inside a box, within a budget of cells,
    from a collector (Client.window) or from a file (rewind.open(path).window(...)).

    step, time, file    the step answered
    level, stride       the level of detail chosen (L*; pieces of coarser leaves that fill
                        gaps say their own level) and 1, or the level-0 stride k >= 2
    box                 {"lo": [x, y, z], "hi": [x, y, z]}: what the returned cells cover
    cells               values per variable (the sum over the pieces)
    lod                 the rule that answered: "uniform", or "adaptive" (revision 1.10:
                        pieces on several levels, refined where the flow changes)
    variables           names, the order of `values`
    ranges              (revision 1.11) {name: (min, max)} over the statistics rows of the
                        grids shown (their non-solid cells; NaN where none): what the
                        ParaView plugin colours by; since 1.13 a live state's too, from the
                        grids its compute ranks hold; {} when the server sent none (a step
                        without statistics, an older server, a file window)
    values[name]        float64 array of `cells` values: piece after piece, x fastest
    cell_type           uint8 array like a variable (empty if the step stores none)
    pieces              the protocol's piece dicts: row, uid, level, first, count
                        ([nx, ny, nz]), stride, origin, spacing (made on first use
                        when the pieces came as a table, revision 1.7)
    table               the pieces as a numpy structured array (fields as above) when
                        they came as one, else None
    w[i], iter(w)       the pieces as rewind.Piece objects: numpy values shaped
                        (nz, ny, nx) with their cell-centre coordinates
    image(name)         the pieces stitched into one array (a window on one level)
    """

    def __init__(self, meta: dict[str, Any], arrays: list[np.ndarray], table: np.ndarray | None = None):
        self.meta = meta
        for k in ("step", "time", "file", "level", "stride", "box", "cells", "variables"):
            setattr(self, k, meta[k])
        self.lod = meta.get("lod", "uniform")  # absent (uniform, or a 1.9 server)
        self.ranges = {name: tuple(float("nan") if x is None else float(x) for x in r)
                       for name, r in (meta.get("ranges") or {}).items()}  # absent: none known
        self.table = table
        self._pieces = meta["pieces"] if table is None else None
        self.values = {name: arrays[i] for i, name in enumerate(self.variables)}
        self.cell_type = arrays[len(self.variables)]

    @property
    def pieces(self) -> list[dict[str, Any]]:
        if self._pieces is None:  # from the table, once: ints and floats as the JSON list gives them
            self._pieces = [{"row": int(r["row"]), "uid": int(r["uid"]), "level": int(r["level"]),
                             "first": r["first"].tolist(), "count": r["count"].tolist(), "stride": int(r["stride"]),
                             "origin": r["origin"].tolist(), "spacing": r["spacing"].tolist()} for r in self.table]
        return self._pieces

    def __repr__(self):
        return (f"<rewind.Window step {self.step} (t={self.time:.6g}) of {self.file}: level {self.level}, "
                f"{len(self.pieces)} pieces, {self.cells} cells, variables {', '.join(self.variables)}>")

    def _offsets(self):
        if self.table is not None:
            import numpy as np
            c = self.table["count"].astype(np.int64)
            return [0] + np.cumsum(c[:, 0] * c[:, 1] * c[:, 2]).tolist()
        off = [0]
        for p in self.pieces:
            nx, ny, nz = p["count"]
            off.append(off[-1] + nx * ny * nz)
        return off

    def piece_arrays(self, name: str) -> list[np.ndarray]:
        """The values of variable `name` split into pieces, each shaped (nz, ny, nx)."""
        off = self._offsets()
        return [self.values[name][off[i]:off[i + 1]].reshape(p["count"][::-1]) for i, p in enumerate(self.pieces)]

    def __len__(self) -> int:
        return len(self.table) if self.table is not None else len(self._pieces)

    def __getitem__(self, i: int) -> Piece:
        """Piece i (a rewind.Piece; negative counts from the end)."""
        i = range(len(self.pieces))[i]
        p = self.pieces[i]
        off = self._offsets()
        shape = tuple(p["count"][::-1])
        values = {v: self.values[v][off[i]:off[i + 1]].reshape(shape) for v in self.variables}
        types = self.cell_type[off[i]:off[i + 1]].reshape(shape) if len(self.cell_type) else None
        return Piece(p, values, types)

    def __iter__(self) -> Iterator[Piece]:
        return (self[i] for i in range(len(self.pieces)))

    def image(self, name: str, resample: bool = False) -> Image:
        """The pieces of variable `name` as one Image: an array (nz, ny, nx) on the
        window's lattice, NaN where no piece has a cell (outside the covered cells).
        The pieces must share one level and stride (a uniform window: raises
        InvalidArgument naming the levels otherwise) unless resample=True, which puts
        every piece on the finest spacing of the window, a coarse cell repeated over the
        fine cells it covers (copied, never interpolated)."""
        import numpy as np
        pieces = list(self)
        if not pieces:
            raise InvalidArgument(f"window of step {self.step} of {self.file} has no cells to stitch")
        fine = np.array([p.spacing for p in pieces]).min(axis=0)
        levels = sorted({p.level for p in pieces})
        if not resample and len(levels) > 1:
            raise InvalidArgument(f"window of step {self.step} of {self.file} has pieces on levels "
                                  f"{', '.join(map(str, levels))}: image(name, resample=True) puts them on the "
                                  f"finest, or take the pieces one by one")
        lo = np.array([p.origin for p in pieces]).min(axis=0)
        placed, shape = [], np.zeros(3, dtype=np.int64)
        for p in pieces:
            factor = np.rint(p.spacing / fine).astype(np.int64)
            start = np.rint((p.origin - lo) / fine).astype(np.int64)
            v = p.values[name]
            for axis, f in zip((2, 1, 0), factor):  # x, y, z factors onto (z, y, x) axes
                v = np.repeat(v, f, axis=axis) if f > 1 else v
            placed.append((start, v))
            shape = np.maximum(shape, start + np.array(v.shape[::-1]))
        out = np.full(tuple(shape[::-1]), np.nan)
        for (i, j, k), v in placed:
            out[k:k + v.shape[0], j:j + v.shape[1], i:i + v.shape[2]] = v
        return Image(name, out, lo, fine, pieces[0].cell * fine / pieces[0].spacing)


class Piece:
    """One grid's cells in a Window. values[name] and cell_type are numpy arrays shaped
    (nz, ny, nx) (x fastest in memory); cell (k, j, i) is grid cell first + stride*(i, j, k)
    and spans origin + spacing*(i, j, k) to that + cell (cell = spacing / stride).
    x, y, z: the cell-centre coordinates along each axis (1-D arrays of nx, ny, nz)."""

    def __init__(self, meta: dict[str, Any], values: dict[str, np.ndarray], cell_type: np.ndarray | None):
        import numpy as np
        self.row, self.uid, self.level, self.stride = meta["row"], meta["uid"], meta["level"], meta["stride"]
        self.first, self.count = tuple(meta["first"]), tuple(meta["count"])
        self.origin = np.array(meta["origin"], dtype=float)
        self.spacing = np.array(meta["spacing"], dtype=float)
        self.cell = self.spacing / self.stride
        self.values, self.cell_type = values, cell_type
        self.x, self.y, self.z = (self.origin[a] + self.spacing[a] * np.arange(self.count[a]) + 0.5 * self.cell[a]
                                  for a in range(3))

    def __repr__(self):
        return (f"<rewind.Piece row {self.row} level {self.level}: {self.count[0]}x{self.count[1]}x{self.count[2]} "
                f"cells from {tuple(self.origin)}, spacing {tuple(self.spacing)}>")


class Image:
    """A window stitched onto one lattice (Window.image): values (nz, ny, nx), NaN where
    no cell; sample (k, j, i) spans origin + spacing*(i, j, k) to that + cell. x, y, z:
    cell-centre coordinates (1-D); extent: (x0, x1, y0, y1) for matplotlib's imshow."""

    def __init__(self, name: str, values: np.ndarray, origin: np.ndarray, spacing: np.ndarray, cell: np.ndarray):
        import numpy as np
        self.name, self.values, self.origin, self.spacing, self.cell = name, values, origin, spacing, cell
        nz, ny, nx = values.shape
        self.x, self.y, self.z = (origin[a] + spacing[a] * np.arange(n) + 0.5 * cell[a] for a, n in enumerate((nx, ny, nz)))
        self.extent = (origin[0], origin[0] + nx * spacing[0], origin[1], origin[1] + ny * spacing[1])

    def __array__(self, dtype: Any = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)

    def __repr__(self):
        return f"<rewind.Image {self.name} {self.values.shape} from {tuple(self.origin)}, spacing {tuple(self.spacing)}>"

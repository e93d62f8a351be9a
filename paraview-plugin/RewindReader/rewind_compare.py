"""Comparing the futures of a live Rewind job side by side.

Shipped inside the Rewind ParaView plugin, beside rewind_steering; the steering dock's
*Compare* button calls panel_compare() and, while *Follow* is on, panel_follow().

    import rewind_compare
    c = rewind_compare.compare(live)     # or compare(host=..., port=..., token_file=...)
    c.files, c.views, c.sources          # one render view and one live source per future
    c.range                              # the colour range fitted to every future's data
    c.update()                           # each future's current state, the range refitted

compare() lays out, in a new layout tab, one render view per running future of the job
(a Rewind Live Source per future: File = the future's file, Time "live"), labelled with
the future's file and changes, stacked for a domain wider than tall, else side by side. The views' cameras are linked (move one, the others
follow); every view colours by the same array through ParaView's one colour map for that
array, whose range is fitted to all futures' current data (not to one view's) and stays
so: ParaView's own per-view rescaling is switched off for it, update() refits it.
"""
import math
import os

import numpy as np
from paraview import simple
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkDataSetAttributes

import rewind_steering

#: A future in one of these states is still computing: compare() shows it.
LIVE_STATES = ("running", "paused")
#: Taken over from a given live source by each future's own source.
_SOURCE_SETTINGS = ("Host", "PortNumber", "Token", "TokenFile", "ContactFile", "Timeout", "Budget")

#: The comparison the dock made last (panel_follow() updates it).
last = None


class Comparison:
    """The views compare() made: `files`, `sources` and `views` (one per future, in the
    job's order), `layout`, `array` (coloured by), `lut` (its colour map, shared by every
    view) and `range` ((min, max) over all futures' data, None before any data)."""

    def __init__(self, files, sources, views, layout, array):
        self.files, self.sources, self.views, self.layout, self.array = files, sources, views, layout, array
        self.lut = simple.GetColorTransferFunction(array)
        self.range, self.ranges = None, []

    def fit_range(self):
        """Fits the shared colour map to the range of `array` over every future's data as
        shown (solid cells are hidden: not counted); `ranges` holds each future's."""
        self.ranges = [_shown_range(source, self.array) for source in self.sources]
        known = [r for r in self.ranges if r is not None]
        if not known:
            return self.range
        lo, hi = min(r[0] for r in known), max(r[1] for r in known)
        self.lut.AutomaticRescaleRangeMode = "Never"  # ParaView would refit it to one view
        self.lut.RescaleTransferFunction(lo, hi)
        simple.GetOpacityTransferFunction(self.array).RescaleTransferFunction(lo, hi)
        self.range = (lo, hi)
        return self.range

    def update(self):
        """Each future's current state: its live source fetches again, the shared range is
        refitted to all of them, every view is rendered."""
        for source in self.sources:
            source.SMProxy.InvokeCommand("Refresh")
            source.UpdatePipeline()
        self.fit_range()
        for view in self.views:
            simple.Render(view)


def _shown_range(source, array):
    """(min, max) of `array` (a vector: its magnitude) over the cells a view draws: ParaView's
    data information counts the hidden (solid) cells too. From the data in this process
    (the GUI's and pvpython's built-in server); with a remote server, whose data stays
    there, from the data information. None when the source has no such values."""
    data = source.GetClientSideObject().GetOutputDataObject(0)
    if data is None or not data.IsA("vtkCompositeDataSet") or data.GetNumberOfCells() == 0:
        info = source.CellData.GetArray(array)
        return tuple(info.GetRange(0 if info.GetNumberOfComponents() == 1 else -1)) if info else None
    lo, hi = math.inf, -math.inf
    it = data.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        cells = it.GetCurrentDataObject().GetCellData()
        values, ghosts = cells.GetArray(array), cells.GetArray(vtkDataSetAttributes.GhostArrayName())
        if values is not None and values.GetNumberOfTuples() > 0:
            v = vtk_to_numpy(values)
            v = v if v.ndim == 1 else np.linalg.norm(v, axis=1)
            if ghosts is not None:
                v = v[(vtk_to_numpy(ghosts) & vtkDataSetAttributes.HIDDENCELL) == 0]
            if v.size:
                lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
        it.GoToNextItem()
    return (lo, hi) if lo <= hi else None


def _make_live_source(**settings):
    make = getattr(simple, "RewindLiveSource", None)
    if make is None:  # the plugin was loaded into another namespace: LoadPlugin(..., ns=globals())
        simple._add_functions(vars(simple))
        make = simple.RewindLiveSource
    return make(**settings)


def _label(future):
    changes = "; ".join(future.get("changes") or []) or "unchanged"
    return f"{os.path.basename(future['file'])}: {changes}"


def _future_source(future, settings):
    source = _make_live_source(File=future["file"], Time="live", **settings)
    simple.RenameSource(os.path.basename(future["file"]), source)
    source.UpdatePipeline()
    return source


def _show_future(future, source, array, layout, cell):
    """`source` (of `future`) in a new render view placed in `cell` of `layout`."""
    view = simple.CreateView("RenderView")
    layout.AssignView(cell, view)
    display = simple.Show(source, view)
    simple.ColorBy(display, ("CELLS", array))
    display.SetScalarBarVisibility(view, True)
    title = simple.Text(Text=_label(future))
    simple.Show(title, view, WindowLocation="Upper Center", FontSize=14)
    return view


def _cells(layout, n, wide):
    """Splits `layout` into n cells of equal size, stacked for a domain wider than tall
    (a channel), else side by side; their indices."""
    split = layout.SplitVertical if wide else layout.SplitHorizontal
    cells, cell = [], 0
    for k in range(n, 1, -1):
        first = split(cell, 1.0 / k)
        cells.append(first)
        cell = first + 1
    return cells + [cell]


def compare(source=None, array="velocity_magnitude", files=None, host="127.0.0.1", port=7400,
            token=None, token_file=None, layout_name="Rewind futures"):
    """Lays out one render view per running future of the job (or per file of `files`),
    cameras linked, one colour scale for `array` fitted to all; returns the Comparison.
    The job: that of `source` (a Rewind Live Source, whose connection settings and Budget
    each future's source takes over) or host/port/token/token_file. Raises ValueError when
    no future is running, rewind_steering.CollectorError / OSError when the collector
    refuses or cannot be reached."""
    global last
    with rewind_steering.Steering(source, host=host, port=port, token=token, token_file=token_file) as steer:
        futures = steer.futures()
    wanted = [f for f in futures if f["state"] in LIVE_STATES and (files is None or f["file"] in files)]
    if not wanted:
        raise ValueError("no running future to compare (Fork first; finished futures are shown from their files)")
    if source is not None:
        settings = {k: source.GetPropertyValue(k) for k in _SOURCE_SETTINGS}
    else:
        settings = {"Host": host, "PortNumber": int(port), "Token": token or "", "TokenFile": token_file or ""}
    sources = [_future_source(f, settings) for f in wanted]
    x0, x1, y0, y1, _, _ = sources[0].GetDataInformation().GetBounds()
    layout = simple.CreateLayout(layout_name)
    cells = _cells(layout, len(wanted), wide=x1 - x0 > y1 - y0)
    views = [_show_future(f, s, array, layout, cell) for f, s, cell in zip(wanted, sources, cells)]
    for i, view in enumerate(views[1:], 1):
        simple.AddCameraLink(views[0], view, f"{layout_name} camera {i}")
    last = Comparison([f["file"] for f in wanted], sources, views, layout, array)
    last.update()
    simple.ResetCamera(views[0])  # the linked views follow when it renders
    simple.Render(views[0])
    simple.SetActiveView(views[0])
    return last


def panel_compare(host, port, token, token_file):
    """The dock's Compare: compare() of the job at host:port; one line for the dock
    (an error starts with "error: "), worded as the dock's other errors."""
    try:
        c = compare(host=host, port=port, token=token or None, token_file=token_file or None)
    except rewind_steering.CollectorError as e:
        return f"error: the Rewind collector at {host}:{port} answered {e}"
    except OSError as e:
        return f"error: cannot reach the Rewind collector at {host}:{port} ({e.strerror or e})"
    except Exception as e:  # noqa: BLE001 -- the dock shows it as one line, never a traceback
        return f"error: {e}"
    names = ", ".join(os.path.basename(f) for f in c.files)
    lo, hi = c.range if c.range else (math.nan, math.nan)
    return f"comparing {len(c.files)} futures: {names} ({c.array} {lo:.4g} to {hi:.4g})"


def panel_follow():
    """The dock's Follow tick while a comparison is shown: update() it. "" or "error: ..."."""
    if last is None:
        return ""
    try:
        last.update()
    except Exception as e:  # noqa: BLE001 -- see panel_compare
        return f"error: {e}"
    return ""

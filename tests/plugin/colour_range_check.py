# Checks what colour_range.py saw in the paraview GUI (colour.json) against the run
# files read with h5py + numpy (not Rewind's reader): the colour map's range is the
# min / max of u over the non-solid cells (cell_type != 1) of the grids shown, at each
# step shown; a locked range stays; a file without statistics has no range arrays and
# is coloured by ParaView's range of the data.
# Prints "yes WHAT" / "no WHAT" per check, details indented.
#   colour_range_check.py COLOUR.json RUN.h5
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_checks import check, load_seen, say  # noqa: E402

seen = load_seen(sys.argv[1])
h5 = h5py.File(sys.argv[2], "r")



def oracle(stage, var="u"):
    """min, max of `var` over the non-solid cells of the rows shown, from the file."""
    s = h5["simulation/step_%08d" % stage["step"]]
    rows = sorted(set(stage["rows"]))
    values = s["cell_data/" + var][()][rows]
    types = s["cell_type"][()][rows]
    fluid = values[types != 1]
    return [float(fluid.min()), float(fluid.max())]


def close(a, b):
    return np.allclose(a, b, rtol=1e-12, atol=1e-12)


def levels(stage):
    s = h5["simulation/step_%08d" % stage["step"]]
    return sorted(set(int(x) for x in s["level"][()][stage["rows"]]))


first, later = seen.get("first"), seen.get("later")
check("a coarse window of parents (level 2, below the leaves) is shown",
      lambda: (levels(first) == [2] and int(h5["simulation/step_%08d" % first["step"]]["level"][()].max()) > 2,
               levels(first)))
check("the box cuts the grids: ParaView's range of the drawn cells is not the grids' (so the range below is the statistics')",
      lambda: (not close(first["data"], oracle(first)), (first["data"], oracle(first))))
check("rewind_range_u on the output is the grids' range of u (h5py)",
      lambda: (close(first["field"], oracle(first)), (first["field"], oracle(first))))
check("coloured by u, the colour map's range is the min / max of u over the shown grids' non-solid cells (h5py)",
      lambda: (first["colour"][-1] == "u" and close(first["lut"], oracle(first)), (first["lut"], oracle(first))))
check("at a later step the range follows: that step's grids' range (h5py), not the first step's",
      lambda: (later["step"] > first["step"] and close(later["lut"], oracle(later)) and not close(later["lut"], first["lut"]),
               (first["step"], later["step"], later["lut"], oracle(later))))
check("a range the user locked (rescale mode Never) stays when the step changes",
      lambda: (seen["locked"]["step"] == first["step"] and close(seen["locked"]["lut"], [-5.0, 5.0]), seen["locked"]))
check("velocity_magnitude (no statistics of a magnitude): ParaView's range of the data",
      lambda: (seen["magnitude"]["field"] is None and close(seen["magnitude"]["lut"], seen["magnitude"]["data"]),
               seen["magnitude"]))
check("a file without statistics opens coloured by velocity_magnitude, with no rewind_range_ arrays",
      lambda: (seen["plain_shown"]["colour"][-1] == "velocity_magnitude" and seen["plain_shown"]["ranges_on_output"] == []
               and seen["plain"]["ranges_on_output"] == [], seen.get("plain_shown")))
check("without statistics, coloured by u: ParaView's range of the data at the step shown",
      lambda: (seen["plain"]["step"] > seen["plain_shown"]["step"] and close(seen["plain"]["lut"], seen["plain"]["data"]),
               seen.get("plain")))

# The box (BoxPosition, BoxSize) of a source in a saved ParaView state against the domain
# of a run file (h5py): exit 0 when the box is the domain.
#   state_box.py STATE.pvsm PROXY_TYPE RUN.h5
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

state, kind, run = sys.argv[1:4]
with h5py.File(run, "r") as f:
    d = f["common"].attrs["domain"]
want = {"BoxPosition": [d[0], d[2], d[4]], "BoxSize": [d[1] - d[0], d[3] - d[2], d[5] - d[4]]}
proxy = next(p for p in ET.parse(state).iter("Proxy") if p.get("group") == "sources" and p.get("type") == kind)
got = {p.get("name"): [float(e.get("value")) for e in p.iter("Element")] for p in proxy.iter("Property")
       if p.get("name") in want}
print("box", got, "domain", want)
sys.exit(0 if all(np.allclose(got[k], want[k]) for k in want) else 1)

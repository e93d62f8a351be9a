# pvpython installed_plugin.py PLUGIN FILE: loads the installed Rewind plugin, opens FILE
# with its reader, prints "times t0 t1 ..." (repr of each) and the grids the last step shows.
import sys

from paraview.simple import LoadPlugin

plugin, path = sys.argv[1], sys.argv[2]
LoadPlugin(plugin, remote=False, ns=globals())
reader = RewindRunFile(FileName=path)  # noqa: F821 (defined by the plugin)
times = list(reader.TimestepValues)
print("times " + " ".join(repr(float(t)) for t in times))
reader.UpdatePipeline(times[-1])
mb = reader.GetClientSideObject().GetOutputDataObject(0)
print("blocks", mb.GetNumberOfBlocks())

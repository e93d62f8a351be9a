# script-version: 2.0
# A Catalyst script in the form ParaView 5.11's GUI exports (File > Save Catalyst
# State, "script-version: 2.0"), trimmed to what Rewind's adaptor needs. Rewind's
# Catalyst hook (insitu/catalyst) publishes each step it is given as the channel
# 'input': a vtkPartitionedDataSet, one vtkImageData per leaf grid of a rank, the cell
# arrays u, v, w, p, T, velocity and cell_type (halo cells marked as ghost cells).
#
# This script writes the grids of every step it sees as a partitioned-dataset extract,
# datasets/input_NNNNNN.vtpd (one .vti per grid), beside the run, and prints a line
# per step on the first rank. Replace the pipeline by one made in the GUI: open a
# Rewind step (the ParaView plugin, or the run's .hdf view), build filters on it, and
# export with the source named 'input'.

from paraview.simple import *
from paraview import catalyst

# ----------------------------------------------------------------
# setup the data processing pipelines
# ----------------------------------------------------------------

# create a new 'PVTrivialProducer': the simulation's channel
input = PVTrivialProducer(registrationName='input')

# ----------------------------------------------------------------
# setup extractors
# ----------------------------------------------------------------

# create extractor
vTPD1 = CreateExtractor('VTPD', input, registrationName='VTPD1')
# trace defaults for the extractor.
vTPD1.Trigger = 'TimeStep'

# init the 'VTPD' selected for 'Writer'
vTPD1.Writer.FileName = 'input_{timestep:06d}.vtpd'

# ----------------------------------------------------------------
# setup catalyst options
# ----------------------------------------------------------------

options = catalyst.Options()
options.GlobalTrigger = 'TimeStep'
options.ExtractsOutputDirectory = 'datasets'


def catalyst_execute(info):
    from paraview import print_info
    print_info("catalyst    step %d t = %g: extract written", info.timestep, info.time)


# ------------------------------------------------------------------------------
if __name__ == '__main__':
    from paraview.simple import SaveExtractsUsingCatalystOptions
    # Code for non in-situ environments; if executing in post-processing
    # i.e. non-Catalyst mode, let's generate extracts using Catalyst options
    SaveExtractsUsingCatalystOptions(options)

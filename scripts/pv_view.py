"""Shared by the render scripts (pvpython): a view per image, and a camera looking
straight down on the x-y plane."""
from paraview.simple import CreateView


def timed_view(width, height, time, white=False):
    """A new render view at `time`. Set before anything is shown, the pipeline then
    updates to exactly that step (re-timing one view can leave an image a step behind)."""
    view = CreateView("RenderView")
    view.ViewSize = [width, height]
    view.ViewTime = time
    view.OrientationAxesVisibility = 0
    if white:
        view.Background = [1, 1, 1]
        if view.GetProperty("UseColorPaletteForBackground") is not None:
            view.UseColorPaletteForBackground = 0
    return view


def look_down(view, bounds, width, height, below=0):
    """Parallel projection onto the x-y plane of `bounds`: the domain fits the image
    with a small margin, `below` pixels at the bottom left free (for a colour bar)."""
    b = bounds
    above = height - below
    scale = 0.51 * max((b[1] - b[0]) * height / width, (b[3] - b[2]) * height / above)
    cx = 0.5 * (b[0] + b[1])
    cy = 0.5 * (b[2] + b[3]) - below / height * scale
    view.CameraParallelProjection = 1
    view.CameraFocalPoint = [cx, cy, b[5]]
    view.CameraPosition = [cx, cy, b[5] + 10.0]
    view.CameraViewUp = [0, 1, 0]
    view.CameraParallelScale = scale

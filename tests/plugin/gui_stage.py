# Inside the paraview GUI (a test's --script, which puts this folder on sys.path): what
# the script saw goes into `out`; each stage (a function decorated with @stage, run at
# once) records its own error there, so one failing stage does not hide the others'.
import traceback

out = {"errors": {}}


def stage(f):
    try:
        f()
    except Exception:
        out["errors"][f.__name__] = traceback.format_exc(limit=2)
    return f

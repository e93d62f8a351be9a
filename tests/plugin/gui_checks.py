# The checks of what a GUI script saw (its JSON, gui_stage.py's `out`): each prints
# "yes WHAT" / "no WHAT", details indented; the script's failed stages are printed first.
import json


def load_seen(path):
    """The GUI script's `out`, its failed stages printed."""
    seen = json.load(open(path))
    for name, error in seen.get("errors", {}).items():
        print("    the GUI script's stage", name, "failed:", error.strip().splitlines()[-1])
    return seen


def say(ok, what, detail=None):
    print(("yes " if ok else "no ") + what)
    if detail is not None and not ok:
        print("   ", detail)


def check(what, test):
    """say(*test()) for a test returning (ok, detail); an exception (something the GUI
    script could not see) fails the check."""
    try:
        ok, detail = test()
    except Exception as e:
        ok, detail = False, "%s: %s" % (type(e).__name__, e)
    say(ok, what, detail)

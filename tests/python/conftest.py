"""The command-line options of the Python tests (pytest), defaults from a build in build/:
    --rewind PATH        the rewind executable (test_package.py)
    --mpiexec PATH       mpiexec, for test_package.py's live run on 3 ranks
    --window-cases PATH  tests/window's window_adaptive_cases (test_adaptive.py)
"""
import os

BUILD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")


def pytest_addoption(parser):
    parser.addoption("--rewind", default=os.path.join(BUILD, "apps", "rewind"), help="the rewind executable")
    parser.addoption("--mpiexec", default="mpiexec", help="mpiexec, for the live run on 3 ranks")
    parser.addoption("--window-cases", default=os.path.join(BUILD, "tests", "window", "window_adaptive_cases"),
                     help="tests/window's window_adaptive_cases executable")

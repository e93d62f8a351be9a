"""The exceptions of the rewind package: every error it raises on purpose is a
RewindError, with one line naming the file, the step or the server and what is wrong.

    RewindError
    ├── FileError          a file that cannot be opened or read as a Rewind file
    │   └── NoSuchFile     ... because it does not exist (also a FileNotFoundError)
    ├── NoSuchStep         no committed step matches (also a LookupError)
    ├── UnknownVariable    the step does not store that variable (also a KeyError)
    ├── LineageError       a branch's parent is missing or unreadable, or a cycle
    ├── InvalidArgument    a bad box, budget, selector, token file, ... (also a ValueError)
    └── CollectorError     an error reply from a collector, or a broken frame (.code)

The extra base classes let code written against the built-in exceptions keep working
(`except KeyError`, `except ValueError`), and `except rewind.RewindError` catches all.
"""


class RewindError(Exception):
    """Base of every error the rewind package raises on purpose."""


class FileError(RewindError):
    """A file that cannot be opened or read as a Rewind file (not HDF5, another format,
    a newer major version, a dataset that is missing or damaged or needs an HDF5 filter
    that is not installed)."""


class NoSuchFile(FileError, FileNotFoundError):
    """The file does not exist."""

    __str__ = Exception.__str__


class NoSuchStep(RewindError, LookupError):
    """No committed step matches the selector, number, position or time."""


class UnknownVariable(RewindError, KeyError):
    """The step does not store the variable asked for."""

    __str__ = Exception.__str__  # KeyError would quote the message


class LineageError(RewindError):
    """A branch's parent cannot be found or read, or the chain of parents is a cycle."""


class InvalidArgument(RewindError, ValueError):
    """An argument the package refuses: a box with NaN or lo > hi, a negative budget, a
    malformed token file, a codec it does not know, ..."""


class CollectorError(RewindError):
    """An error reply from a collector (`rewind serve`, `rewind run --listen`), or a
    protocol violation; `.code` is the protocol's code name ("bad_argument",
    "no_such_step", "unauthorized", "unsupported", "malformed", ...)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code

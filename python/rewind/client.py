"""rewind.client: the Python client of the Rewind collector (docs/collector-protocol.md,
version 1, revision 1.14) -- `rewind serve` of files, or `rewind run --listen` of a job.

    import rewind
    with rewind.connect("127.0.0.1:7400") as c:          # or rewind.Client("127.0.0.1", 7400)
        print(c.info()["variables"])
        w = c.window(box=((0, 0, 0), (1, 1, 0)), budget=100_000, variables=["p"], time="latest")
        for piece in w:                   # rewind.Piece: .values["p"] (nz, ny, nx), .x, .y, .z
            ...
        img = w.image("p")                # one array when the window is on one level

A window is the same rewind.Window whether it comes from a collector or from a file
(`rewind.open(path).window(...)`): see rewind.windows.

Steering the collector of a running `rewind run` (plain dicts and lists, no numpy):

        c.status()                        # {"state": "running", "step": 120, "time": 1.2, ...}
        c.pause(); c.resume(); c.stop()   # or c.control("pause"): {"state", "step", "time"}
        c.parameters()                    # [{"name": "physics.nu", "type": "number", "min", "max", ...}]
        c.set({"physics.nu": 2e-3, "boundary.xmin.velocity": [1.5, 0, 0]})   # {"step", "time", "values"}
        c.branch("t=2", {"boundary.xmin.velocity": [2, 0, 0]}, output="fast.h5")  # {"file", "parent", "step", "time"}
        c.branch("latest", futures=[{"values": {"physics.nu": 2e-3}, "output": "a.h5"}, {"output": "b.h5"}])
        c.futures(); c.pause(file="b.h5"); c.window(box, 20_000, file="a.h5")   # one future of several

(rewind.steering has these methods, the futures of revision 1.8 included.)

Arrays travel as they are (codec "none") or zstd-compressed, as negotiated in the hello:
by default the client asks for "none" first when the server's address is loopback (no
CPU spent compressing float64 fields that hardly compress), "zstd" first otherwise;
Client(..., codec="none" | "zstd") insists on one. Either way the values are read from
the socket straight into numpy arrays (c.window(..., out=w) refills the arrays of an
earlier window w instead of allocating new ones). Windows need numpy, and zstandard for zstd
arrays (Debian: python3-numpy python3-zstandard); the rest needs only the standard
library. Every socket call has a timeout; server errors raise
rewind.CollectorError with the protocol's code name ("bad_argument", "conflict", ...), and a
request the server does not announce in its capabilities raises "unsupported" before
anything is sent.

The token (a server started with one): Client(..., token_file="~/.rewind/token"), a file
only its owner may read (chmod 600; its first line), or the environment: REWIND_TOKEN, or
REWIND_TOKEN_FILE naming such a file -- as the rewind commands take it. token="..." works
too, but a token in a command line is visible to every user of the machine. The protocol
is not encrypted: reach a remote job through an SSH tunnel (docs/collector-protocol.md,
"Security").

This file is also shipped alone, as the module `rewind_client`, inside the ParaView
plugin (paraview-plugin/RewindReader/rewind_client.py links here), with steering.py as
`rewind_client_steering` and windows.py as `rewind_client_windows`: it imports nothing
else of the package but its errors, and defines them itself when it stands alone.
"""
from __future__ import annotations

import io
import ipaddress
import json
import math
import os
import socket
import stat
import struct
import sys
import time
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np

Box = Sequence[Sequence[float]]  # ((x0, y0, z0), (x1, y1, z1))

PROTOCOL_VERSION = 1
MAGIC = b"RWCL"
HEADER = struct.Struct("<4sHHIIQ")  # magic, version, type, request_id, reserved, length
TYPES = {"hello": 1, "hello_reply": 2, "info_request": 3, "info_reply": 4, "steps_request": 5,
         "steps_reply": 6, "window_request": 7, "window_reply": 8, "error_reply": 9, "bye": 10,
         "status_request": 11, "status_reply": 12, "control_request": 13, "control_reply": 14,
         "parameters_request": 15, "parameters_reply": 16, "set_request": 17, "set_reply": 18,
         "branch_request": 19, "branch_reply": 20}
MAX_REPLY = 1 << 30
MAX_RAW = 4 << 30
BRANCH_TIMEOUT = 660.0  # seconds; the server answers a branch within 10 minutes
# (1.7) A window's pieces as a binary table, 96 bytes per piece (docs/collector-protocol.md,
# "Piece table"); a plain list of numpy dtype fields, so that this module imports numpy
# only for windows.
PIECE_FIELDS = [("row", "<i8"), ("uid", "<u8"), ("level", "<i4"), ("stride", "<i4"), ("first", "<i4", 3),
                ("count", "<i4", 3), ("origin", "<f8", 3), ("spacing", "<f8", 3)]
DTYPES = {"f64": "<f8", "u8": "u1", "piece": PIECE_FIELDS}
WIDTHS = {"f64": 8, "u8": 1, "piece": 96}
CODECS = ("none", "zstd")


try:
    from .errors import CollectorError, InvalidArgument
except ImportError:  # alone, as the ParaView plugin's rewind_client module
    class CollectorError(Exception):
        """An error reply from the server, or a protocol violation (.code: 'malformed', ...)."""

        def __init__(self, code: str, message: str):
            super().__init__(f"{code}: {message}")
            self.code = code

    class InvalidArgument(ValueError):
        """An argument refused before anything is sent (a token file others may read, ...)."""

try:
    from .steering import SteeringMethods
except ImportError:  # alone: the ParaView plugin ships steering.py beside it as rewind_client_steering
    from rewind_client_steering import SteeringMethods

try:
    from .windows import Image, Piece, Window  # noqa: F401 - Image, Piece: rewind.client's names too
except ImportError:  # alone: the ParaView plugin ships windows.py beside it as rewind_client_windows
    from rewind_client_windows import Image, Piece, Window  # noqa: F401


MAX_TOKEN = 4096


def _read_private(path, what, access, limit, missing=None):
    """Up to `limit` bytes of the regular file `path` that only its owner may use (a token
    file, a contact file); InvalidArgument naming `what` and `path` otherwise (`missing`:
    the message for a file that does not exist)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError as e:
        raise InvalidArgument(missing or f"{what} {path} cannot be opened: {e.strerror}") from None
    except OSError as e:
        raise InvalidArgument(f"{what} {path} cannot be opened: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgument(f"{what} {path} is not a regular file")
        if st.st_mode & 0o077:
            if access is None:  # as the rewind commands say it: what group or others may do
                read, write = st.st_mode & 0o044, st.st_mode & 0o022
                access = "read and changed" if read and write else "read" if read else "changed" if write else "used"
            raise InvalidArgument(f"{what} {path} may be {access} by group or others "
                                  f"(mode {stat.S_IMODE(st.st_mode):04o}): chmod 600 {path}")
        return f.read(limit)


def read_token_file(path: str | os.PathLike) -> str:
    """The token in `path` (its first line), as `rewind --token-file` reads it: refused
    (InvalidArgument, a ValueError, naming the file, never the token) if group or others may read or write it,
    or if it is empty."""
    path = os.path.expanduser(path)
    text = _read_private(path, "token file", None, MAX_TOKEN + 2)
    token = text.split(b"\n", 1)[0].rstrip(b"\r").decode()
    if not token:
        raise InvalidArgument(f"token file {path} is empty (the token is its first line)")
    if not token.strip():
        raise InvalidArgument(f"token file {path} holds a token of white space only (its first line): put a secret in it")
    if len(token) > MAX_TOKEN:
        raise InvalidArgument(f"token file {path} holds a token longer than {MAX_TOKEN} bytes")
    return token


def resolve_token(token: str | None = None, token_file: str | os.PathLike | None = None) -> str:
    """The token to send: `token`, else the one in `token_file`, else $REWIND_TOKEN, else
    the one in the file $REWIND_TOKEN_FILE names; "" if none (the rule of the rewind
    commands' --token / --token-file)."""
    if token and token_file:
        raise InvalidArgument("give token or token_file, not both")
    if token and not token.strip():
        raise InvalidArgument("the token is white space only: give a secret")
    if token:
        return token
    if token_file:
        return read_token_file(token_file)
    env, env_file = os.environ.get("REWIND_TOKEN", ""), os.environ.get("REWIND_TOKEN_FILE", "")
    if env and not env.strip():
        raise InvalidArgument("REWIND_TOKEN is white space only: give a secret, or unset it")
    if env and env_file:
        raise InvalidArgument("both REWIND_TOKEN and REWIND_TOKEN_FILE are set; unset one")
    return read_token_file(env_file) if env_file else env



def encode(type_name, request_id, fields):
    text = json.dumps(fields).encode()
    payload = struct.pack("<I", len(text)) + text
    return HEADER.pack(MAGIC, PROTOCOL_VERSION, TYPES[type_name], request_id, 0, len(payload)) + payload


def _check_header(header, max_reply=MAX_REPLY):
    """(type name, request_id, payload length) of a frame header; raises CollectorError."""
    magic, version, type_, request_id, reserved, length = HEADER.unpack(header)
    if magic != MAGIC or reserved != 0:
        raise CollectorError("malformed", "not a collector frame")
    if version != PROTOCOL_VERSION:
        raise CollectorError("bad_version", f"server speaks protocol {version}")
    names = {v: k for k, v in TYPES.items()}
    if type_ not in names:
        raise CollectorError("unknown_type", f"type {type_}")
    if length > max_reply:
        raise CollectorError("too_large", f"reply of {length} bytes")
    return names[type_], request_id, length


def _array_specs(fields, left, max_raw):
    """The checked "arrays" entries of a payload with `left` bytes after its JSON: known
    dtype and codec, whole values, codec none sent as exactly its raw bytes, sizes adding
    up to exactly `left`, raw sizes within max_raw. Nothing is read or allocated before."""
    try:
        entries = [(a["name"], a["dtype"], a["raw"], a["zbytes"], a.get("codec", "zstd")) for a in fields.get("arrays", [])]
    except (AttributeError, KeyError, TypeError):
        raise CollectorError("malformed", "bad \"arrays\" entry") from None
    for name, dtype, raw, zbytes, codec in entries:
        if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in (raw, zbytes)):
            raise CollectorError("malformed", f"array {name}: sizes are not counts")
        if dtype not in DTYPES or raw % WIDTHS[dtype]:
            raise CollectorError("malformed", f"array {name}: bad dtype or size")
        if codec not in CODECS or (codec == "none" and zbytes != raw):
            raise CollectorError("malformed", f"array {name}: unknown codec or encoded size")
    if sum(e[3] for e in entries) != left:
        raise CollectorError("malformed", "array sizes do not match the frame")
    if sum(e[2] for e in entries) > max_raw:
        raise CollectorError("too_large", "arrays above the raw cap")
    return entries


class _Arena:
    """One buffer for a window's uncompressed arrays, read from the socket in one go and
    handed out as numpy views of it; the next window reuses it once no array of the last
    one is held any more (a view, and a view of a view, holds its buffer), so a client
    asking again and again pays no fresh pages (bench/live/HISTORY.md, §2 "Live windows by
    default")."""

    def __init__(self):
        self.buf = None

    def take(self, nbytes):
        import numpy as np
        b = self.buf
        # Held by self.buf, b and getrefcount's argument only: no window's array is alive.
        if b is not None and nbytes <= b.nbytes <= 2 * nbytes and sys.getrefcount(b) <= 3:
            return b[:nbytes]
        self.buf = b = None
        self.buf = np.empty(nbytes, np.uint8)
        return self.buf


def _read_payload(length, fill, max_raw=MAX_RAW, reuse=(), arena=None):
    """(json fields, arrays) of a payload of `length` bytes, taken by fill(memoryview),
    which fills the whole view or raises: the JSON, then each array straight into its
    numpy array (codec none) or decompressed (zstd). An uncompressed array is read into
    reuse[i] instead of a new array when that has its dtype and size; else, given an
    `arena` (_Arena), all uncompressed arrays are read into its buffer at once."""
    if length < 4:
        raise CollectorError("malformed", "truncated")
    head = bytearray(4)
    fill(memoryview(head))
    (n,) = struct.unpack("<I", head)
    if 4 + n > length:
        raise CollectorError("malformed", "JSON length exceeds the frame")
    text = bytearray(n)
    fill(memoryview(text))
    try:
        fields = json.loads(text)
    except ValueError as e:
        raise CollectorError("malformed", f"bad JSON: {e}") from None
    if not isinstance(fields, dict):
        raise CollectorError("malformed", "the JSON part is not an object")
    entries = _array_specs(fields, length - 4 - n, max_raw)
    if not entries:
        return fields, []
    import numpy as np  # only windows carry arrays
    if any(e[1] == "piece" for e in entries[1:]):
        raise CollectorError("malformed", "a piece table that is not the first array")
    if entries[0][1] == "piece" and reuse:
        reuse = (None,) + tuple(reuse)  # the table is never read into a kept array
    if arena is not None and not reuse and all(e[4] == "none" for e in entries):
        return fields, _read_views(entries, fill, arena)
    arrays = []
    for i, (name, dtype, raw, zbytes, codec) in enumerate(entries):
        dtype = np.dtype(DTYPES[dtype])
        if codec == "none":
            old = reuse[i] if i < len(reuse) else None
            fits = (old is not None and old.dtype == dtype and old.nbytes == raw and old.flags.c_contiguous
                    and old.flags.writeable)
            out = old if fits else np.empty(raw // dtype.itemsize, dtype=dtype)
            if raw:
                fill(memoryview(out.view(np.uint8)))
        else:
            import zstandard
            z = bytearray(zbytes)
            fill(memoryview(z))
            data = zstandard.ZstdDecompressor().decompress(z, max_output_size=raw) if raw else b""
            if len(data) != raw:
                raise CollectorError("malformed", f"array {name}: decompressed size differs")
            out = np.frombuffer(data, dtype=dtype)
        arrays.append(out)
    return fields, arrays


def _read_views(entries, fill, arena):
    """The uncompressed arrays `entries`, back to back in the payload: read into one
    buffer of `arena`, returned as views of it."""
    import numpy as np
    buf = arena.take(sum(e[2] for e in entries))
    if buf.nbytes:
        fill(memoryview(buf))
    arrays, at = [], 0
    for name, dtype, raw, zbytes, codec in entries:
        arrays.append(buf[at:at + raw].view(np.dtype(DTYPES[dtype])))
        at += raw
    return arrays


def _window(meta, arrays):
    """The Window of a window reply's fields and arrays: its pieces from the JSON list, or
    (1.7) from the piece table, its first array."""
    table = arrays[0] if arrays and arrays[0].dtype.names else None
    values = arrays[1:] if table is not None else arrays
    variables = meta.get("variables")
    if not isinstance(variables, list) or len(values) != len(variables) + 1:
        raise CollectorError("malformed", "window reply needs one array per variable plus cell_type")
    if table is not None:
        return Window(meta, values, table=_piece_table(meta, table))
    if "pieces" not in meta:
        raise CollectorError("malformed", "window reply without pieces")
    return Window(meta, values)


def _piece_table(meta, table):
    """The checked piece table of a window reply (docs/collector-protocol.md, "Piece
    table"): the rules the JSON list obeys, and cells = the sum of the pieces' cells."""
    import numpy as np
    if "pieces" in meta:
        raise CollectorError("malformed", "window reply with both a piece table and a list of pieces")
    count = table["count"].astype(np.int64)
    geo = np.concatenate([table["origin"].ravel(), table["spacing"].ravel()])
    if (count < 0).any() or (count > 1 << 20).any() or (table["stride"] < 1).any() or (table["level"] < 0).any() \
            or not np.isfinite(geo).all():
        raise CollectorError("malformed", "a piece of the table is out of range")
    if int((count[:, 0] * count[:, 1] * count[:, 2]).sum()) != meta.get("cells"):
        raise CollectorError("malformed", "cells does not equal the sum of the pieces' cells")
    return table


def _filler(readinto, closed_message):
    """fill(view) over readinto(view) -> bytes read (a socket's recv_into, a file's readinto)."""
    def fill(view):
        while len(view):
            k = readinto(view)
            if not k:
                raise CollectorError("malformed", closed_message)
            view = view[k:]
    return fill


def decode(header, payload, max_raw=MAX_RAW):
    """(type name, request_id, json fields, arrays) of one frame; raises CollectorError."""
    if HEADER.unpack(header)[5] != len(payload):
        raise CollectorError("malformed", "not a collector frame")
    kind, request_id, length = _check_header(header)
    fields, arrays = _read_payload(length, _filler(io.BytesIO(payload).readinto, "truncated"), max_raw)
    return kind, request_id, fields, arrays


class Client(SteeringMethods):
    """A session with a collector: info, steps, windows; steering (rewind.steering)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 7400, token: str | None = None, timeout: float = 30.0,
                 name: str = "rewind-python", codec: str | Sequence[str] | None = None,
                 token_file: str | os.PathLike | None = None, piece_table: bool = True):
        """codec: None (default) offers "none" first on a loopback address, "zstd" first
        otherwise; "none" or "zstd" offers only that one; a list offers those, most wanted
        first. self.server["codec"] says what the server chose (absent from a revision 1.1
        server: zstd). In a zstd session of a client that offered "none" too, a 1.6 server
        sends an array that zstd would not shrink as it is (each array names its codec).
        token / token_file: see resolve_token (default: the environment).
        piece_table: ask for window pieces as a binary table (revision 1.7: read as it
        lands, where the JSON list of a window of many pieces takes milliseconds to
        parse); False asks for the list, as a 1.6 client. Windows are the same either
        way, and a server before 1.7 always sends the list."""
        token = resolve_token(token, token_file)
        if codec is None:
            codecs = None
        elif isinstance(codec, str) and codec in CODECS:
            codecs = [codec]
        elif isinstance(codec, (list, tuple)) and codec and all(isinstance(x, str) and x in CODECS for x in codec):
            codecs = list(codec)
        else:
            raise InvalidArgument(f"codec {codec!r}: expected one of {', '.join(CODECS)}, a list of them, or None")
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.timeout = timeout
        self.next_id = 1
        if codecs is None:
            local = ipaddress.ip_address(self.sock.getpeername()[0]).is_loopback
            codecs = ["none", "zstd"] if local else ["zstd", "none"]
        self._fill = _filler(self.sock.recv_into, "the server closed the connection")
        self._arena = _Arena()
        hello = {"protocol": PROTOCOL_VERSION, "token": token, "client": name, "codecs": codecs}
        if piece_table:
            hello["piece_table"] = True
        self.server = self._call("hello", hello)[0]

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, type_name, fields, reuse=()):
        rid = self.next_id
        self.next_id += 1
        self.sock.sendall(encode(type_name, rid, fields))
        header = bytearray(HEADER.size)
        try:
            self._fill(memoryview(header))
            kind, reply_id, length = _check_header(header)
            reply, arrays = _read_payload(length, self._fill, reuse=reuse, arena=self._arena)
        except CollectorError:
            self.sock.close()  # the stream is at an unknown position
            self.sock = None
            raise
        if kind == "error_reply":
            raise CollectorError(reply.get("name", str(reply.get("code"))), reply.get("message", ""))
        if reply_id != rid:
            raise CollectorError("malformed", f"reply to request {reply_id}, expected {rid}")
        return reply, arrays

    def info(self) -> dict[str, Any]:
        return self._call("info_request", {})[0]

    def steps(self) -> list[dict[str, Any]]:
        return self._call("steps_request", {})[0]["steps"]

    def window(self, box: Box, budget: int, variables: Sequence[str] | None = None, time: str | float = "live",
               file: str | None = None, out: Window | None = None, lod: str = "uniform") -> Window:
        """box = ((x0, y0, z0), (x1, y1, z1)); budget: at most N cells (N values of each
        variable); variables None = every variable the step
        holds (a visualisation step: the ones written; the live state: all).
        lod: "uniform" (one level over the box) or "adaptive" (revision 1.10: refined where
        the first variable changes most; the live state too since 1.11, from details its
        compute ranks compute; a step without statistics or an older server answer with
        the uniform rule: the Window's `lod` says which answered).
        file: one of info()["files"] (default: the first file's timeline); with time
        "live", the future writing it, of a job computing several (revision 1.8).
        out: a previous Window whose arrays are refilled when their sizes match (codec
        none): asking for the same window again and again then allocates nothing; `out`
        is the caller's to give up (its arrays are the new window's).
        time "t=T" after the last step of a running job: asked again once the job has
        written a step at or after T, up to `timeout` seconds; of a file, a paused or an
        ended job: CollectorError("no_such_step") at once (docs/collector-protocol.md,
        "Times not reached yet")."""
        req = {"box": {"lo": list(map(float, box[0])), "hi": list(map(float, box[1]))}, "budget": int(budget),
               "time": time, "variables": list(variables or [])}
        if file:
            req["file"] = file
        if lod not in ("uniform", "adaptive"):
            raise InvalidArgument(f'lod "{lod}" is not "uniform" or "adaptive"')
        if lod != "uniform":
            req["lod"] = lod
        reuse = [out.values[v] for v in out.variables] + [out.cell_type] if out is not None else ()
        deadline = _clock() + self.timeout
        while True:
            try:
                return _window(*self._call("window_request", req, reuse))
            except CollectorError as e:
                if e.code != "no_such_step":
                    raise
                self._wait_to_reach(e, time, file, deadline)

    def _wait_to_reach(self, refused, time, file, deadline):
        """After `refused` (no_such_step) for `time` of `file`: raises it at once if
        waiting cannot help (not t=T, not a running job, T reached already), with how
        long it waited at `deadline`; returns once the job's steps reach T."""
        t = _time_of(time)
        if t is None or not self.offers("status") or _reached(self.steps(), file, t):
            raise refused
        start = _clock()
        while True:
            s = self.status()
            if s["state"] != "running":
                raise refused
            if _clock() + REACH_POLL > deadline:
                message = str(refused)[len(refused.code) + 2:]  # "code: message"
                raise CollectorError(refused.code, f"{message}; waited {_clock() - start:.0f} s (the client's "
                                     "timeout) for the running job to reach it") from None
            _sleep(REACH_POLL)
            if s["time"] * (1 + 1e-12) + 1e-300 >= t and _reached(self.steps(), file, t):  # the job's time first: cheap
                return

    def _steer(self, name, fields):
        """A steering request (SteeringMethods: status, control, set, branch, ...), refused
        as "unsupported" before sending when the server does not announce it."""
        if not self.offers(name):
            raise CollectorError("unsupported", f"the server does not offer {name} "
                                 f"(it offers {', '.join(self.server.get('capabilities', []))})")
        if name != "branch":
            return self._call(name + "_request", fields)[0]
        # A branch answers once its futures are restored and have written a step: that
        # grows with the state, so the server gives it 10 minutes (BRANCH_TIMEOUT here).
        timeout = self.sock.gettimeout()
        self.sock.settimeout(None if timeout is None else max(timeout, BRANCH_TIMEOUT))
        try:
            return self._call(name + "_request", fields)[0]
        finally:
            if self.sock is not None:
                self.sock.settimeout(timeout)

    def close(self) -> None:
        if self.sock is None:
            return
        try:
            self.sock.sendall(encode("bye", self.next_id, {}))
        except OSError:
            pass
        self.sock.close()
        self.sock = None


# How often a wait for a time not reached asks the job where it is (seconds).
REACH_POLL = 0.2
_clock, _sleep = time.monotonic, time.sleep


def _time_of(selector):
    """T of a "t=T" selector; None for any other selector."""
    if not isinstance(selector, str) or not selector.startswith("t="):
        return None
    try:
        t = float(selector[2:])
    except ValueError:
        return None
    return t if math.isfinite(t) else None


def _reached(steps, file, t):
    """Whether a step of `file` (None = any listed) is at or after t, with the kernel's
    tolerance (kernel::index_at_or_before)."""
    return any((not file or s["file"] == file) and t <= s["time"] * (1 + 1e-12) + 1e-300 for s in steps)


CONTACT_VERSION = 1


def read_contact(run_file: str | os.PathLike) -> dict[str, Any]:
    """The contact file of the live job writing `run_file` (RUN.h5, or RUN.h5.contact
    itself), as a dict: host, port, token ("" if none), node, pid, started
    (docs/collector-protocol.md, "Contact file"). Raises InvalidArgument (one line) if
    there is none (the run is not live, or has ended), if group or others may read or
    write it, if it is malformed or of a newer version, or if it is stale: written on
    this node by a process that is gone."""
    run_file = os.path.expanduser(str(run_file))
    path = run_file if run_file.endswith(".contact") else run_file + ".contact"
    text = _read_private(path, "contact file", "read or written", 65537,
                         missing=f"{run_file}: no contact file {path}: the run is not live (a `rewind run --listen` "
                                 "job writes it while its collector listens) or has ended")
    try:
        c = json.loads(text)
    except ValueError:
        raise InvalidArgument(f"contact file {path} is not JSON") from None
    if not isinstance(c, dict):
        raise InvalidArgument(f"contact file {path} is not a JSON object")
    kinds = {"version": int, "host": str, "port": int, "node": str, "pid": int, "started": str, "token": str,
             "boot_id": str, "pid_start": int}
    for key, kind in kinds.items():
        if key in ("token", "boot_id", "pid_start") and key not in c:
            continue
        if key not in c:
            raise InvalidArgument(f'contact file {path} has no "{key}"')
        if not isinstance(c[key], kind) or isinstance(c[key], bool):
            raise InvalidArgument(f'contact file {path} has a malformed "{key}"')
    if c["version"] > CONTACT_VERSION:
        raise InvalidArgument(f"contact file {path} has version {c['version']}, newer than this module's "
                              f"{CONTACT_VERSION}: update Rewind")
    if not c["host"] or not 0 < c["port"] < 65536:
        raise InvalidArgument(f"contact file {path} has no usable host and port")
    c.setdefault("token", "")
    if c["node"] == socket.gethostname() and c["pid"] > 0 and _process_gone(c["pid"], c.get("boot_id", ""),
                                                                            c.get("pid_start", 0)):
        raise InvalidArgument(f"contact file {path} is stale: the job that wrote it (pid {c['pid']} on "
                              f"{c['node']}, listening since {c['started']}) has ended without removing it; "
                              "remove it")
    c["path"] = path
    return c


def _process_gone(pid: int, boot_id: str = "", start: int = 0) -> bool:
    """Whether process `pid` of this node has ended, as rwd::holder::alive judges it: the
    machine has booted since `boot_id` ("" = unknown), the number is unused, a zombie's
    (ended, not yet reaped by its parent: mpirun, a shell), or another process's that
    started later than `start` (/proc/PID/stat field 22; 0 = unknown). Another user's
    running process is not gone."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            if boot_id and f.read().strip() not in ("", boot_id):
                return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 1:].split()  # the command name may hold spaces and ')'; fields[0] is field 3
    if fields and fields[0] in ("Z", "X"):
        return True
    return start > 0 and len(fields) > 19 and fields[19].isdigit() and int(fields[19]) != start


def _names_run_file(address):
    address = os.path.expanduser(str(address))
    return address.endswith(".contact") or os.path.exists(address) or os.path.exists(address + ".contact")


def connect(address: str | os.PathLike, **options: Any) -> Client:
    """A Client of the collector at "HOST:PORT" (the address `rewind serve` and
    `rewind run --listen` print; "[::1]:PORT" for IPv6), or of the live job writing the
    run file `address` ("run.h5": through its contact file run.h5.contact, see
    read_contact; where the file system is shared, from any node); options as Client's
    (token, token_file, timeout, codec, name). With a run file the token is the one
    given, else the contact file's, else the environment's."""
    if _names_run_file(address):
        c = read_contact(address)
        if not options.get("token") and not options.get("token_file") and c["token"]:
            options = dict(options, token=c["token"])
        try:
            return Client(c["host"], c["port"], **options)
        except OSError as e:  # refused, unreachable, no answer: say where the contact file points
            hint = f" ({c['path']}: the job's collector on {c['node']}, pid {c['pid']}, since {c['started']})"
            if _is_loopback(c["host"]) and c["node"] != socket.gethostname():
                hint += (f"; it listens on loopback of {c['node']} only: reach it through an SSH tunnel "
                         "(docs/cluster.md), or start the run with --listen 0.0.0.0:PORT and a token")
            raise ConnectionError(f"cannot connect to {c['host']}:{c['port']}: {e.strerror or e}{hint}") from None
    host, sep, port = str(address).rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgument(f"collector address {address!r}: expected HOST:PORT, or a live run's file "
                              "(with its contact file beside it)")
    return Client(host.strip("[]"), int(port), **options)


def _is_loopback(host):
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"

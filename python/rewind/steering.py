"""rewind.steering: the steering half of rewind.Client -- the requests that change or
report a running `rewind run --listen` job (docs/collector-protocol.md, "Steering",
revision 1.1, and "Futures", revision 1.8). Plain dicts and lists, no numpy:

    c.status()                        # {"state", "step", "time", ..., "futures": [...]}
    c.futures()                       # [{"file", "parent", "state", "step", "time", "steps_per_second", "changes"}]
    c.pause(); c.resume(); c.stop()   # every future; pause(file="a.h5") just that one
    c.set({"physics.nu": 2e-3}, file="a.h5")                # one future (default: every one)
    c.branch("t=2", {"boundary.xmin.velocity": [2, 0, 0]}, output="fast.h5")
    c.branch("latest", futures=[{"values": {"physics.nu": 2e-3}, "output": "a.h5"},
                                {"output": "b.h5"}])          # a fork: two futures from one step

Client inherits these; they call Client's _steer (which raises "unsupported" before
sending a request the server does not announce). Inside the ParaView plugin this file is
shipped beside rewind_client.py as rewind_client_steering.py and takes the errors from it.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

Values = dict[str, Union[float, Sequence[float]]]  # {name: number or [x, y, z]}

try:
    from .errors import InvalidArgument
except ImportError:  # alone, as the ParaView plugin's rewind_client_steering (imported by rewind_client)
    from rewind_client import InvalidArgument


def _values(values):
    """{name: float or [x, y, z]} as the protocol wants it (finite numbers; JSON has no NaN)."""
    if not isinstance(values, dict):
        raise InvalidArgument(f"values: expected a dict of name: number or [x, y, z], got {values!r}")
    out = {}
    for name, v in values.items():
        x = [float(v)] if isinstance(v, (int, float)) and not isinstance(v, bool) else [float(c) for c in v]
        if len(x) not in (1, 3) or not all(math.isfinite(c) for c in x):
            raise InvalidArgument(f"{name}: expected a finite number or 3 finite numbers, got {v!r}")
        out[name] = x[0] if isinstance(v, (int, float)) else x
    return out


def _future(spec):
    """One entry of a fork's `futures`: {"values": {...}, "output": "a.h5"}, both optional."""
    if not isinstance(spec, dict) or set(spec) - {"values", "output"}:
        raise InvalidArgument(f'a future is a dict of "values" and "output" (both optional), got {spec!r}')
    out = {"values": _values(spec.get("values") or {})}
    if spec.get("output"):
        out["output"] = str(spec["output"])
    return out


class SteeringMethods:
    """status, futures, control (pause, resume, stop), parameters, set and branch of a
    Client. `file` names one future of a job computing several (the file it writes;
    None = every future); a server before revision 1.8 knows no futures."""

    def offers(self, capability: str) -> bool:
        """True if the server announced `capability` ("window", "status", "set", ...)."""
        return capability in self.server.get("capabilities", [])

    def status(self) -> dict[str, Any]:
        """{"state": "running" | "paused" | "stopping" | "finished", "step", "time",
        "steps_per_second", "file", "parent", "ranks", "clients", "futures"}: the job's
        state and its first future's file, step and time; "futures" as futures()."""
        s = self._steer("status", {})
        s.setdefault("futures", [])  # a server before 1.8 lists none
        return s

    def futures(self) -> list[dict[str, Any]]:
        """Every future of the job (revision 1.8; one for a job that never forked, ended
        ones included): a list of {"file", "parent", "state" (its own), "step", "time",
        "steps_per_second" (its own rate), "changes" (["key=value", ...]: its changes
        against the parent, then what was set on it), and since 1.12 "first_rank" and
        "ranks" (the compute ranks it computes on: a fork of K futures on at least K ranks
        gives each its own group)}. [] from a server before 1.8."""
        return self.status()["futures"]

    def control(self, action: str, file: str | None = None) -> dict[str, Any]:
        """action "pause", "resume" or "stop", applied at the next step boundary (this call
        waits for it) to the future writing `file`, or to every future: {"state", "step",
        "time"} after it took effect."""
        req = {"action": action}
        if file:
            req["file"] = file
        return self._steer("control", req)

    def pause(self, file: str | None = None) -> dict[str, Any]:
        return self.control("pause", file)

    def resume(self, file: str | None = None) -> dict[str, Any]:
        return self.control("resume", file)

    def stop(self, file: str | None = None) -> dict[str, Any]:
        return self.control("stop", file)

    def parameters(self) -> list[dict[str, Any]]:
        """The steerable parameters: a list of {"name", "type" ("number" | "vector"), "unit",
        "min", "max", "min_open", "max_open", "value", "description"}; min_open / max_open:
        that end of the range is excluded (physics.nu: (0, 10], min_open True); False from a
        server before revision 1.4, whose ranges were closed."""
        params = self._steer("parameters", {})["parameters"]
        for p in params:
            p.setdefault("min_open", False)
            p.setdefault("max_open", False)
        return params

    def set(self, values: Values, file: str | None = None) -> dict[str, Any]:
        """values: {name: number or [x, y, z]}, applied from the next step on to the future
        writing `file`, or to every future (all or none): {"step" (the first step computed
        with them), "time", "values"}."""
        req = {"values": _values(values)}
        if file:
            req["file"] = file
        return self._steer("set", req)

    def branch(self, from_: str, values: Values | None = None, file: str | None = None, output: str | None = None,
               futures: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Branches from the committed step `from_` ("latest", "N", "#i", "t=T") of `file`
        (default: the file being written; with several futures running, the future to
        fork) with `values` changed, into `output` (default: the server's choice); or
        forks it into several futures (revision 1.8), all from that step:
        futures=[{"values": {...}, "output": "a.h5"}, {"output": "b.h5"}, {}] (each entry's
        keys optional; no values: the run continued unchanged), then without values or
        output. {"file", "parent", "step", "time", "files"}: files lists every new file
        in order (just file from a server before 1.8), file is the first."""
        if futures is not None and (values or output):
            raise InvalidArgument("branch: give each future's values and output in futures, not beside them")
        if futures is not None and (isinstance(futures, (str, dict)) or not futures):
            raise InvalidArgument(f"branch: futures is a non-empty list of dicts, got {futures!r}")
        req = {"from": from_, "values": _values(values or {})}
        if file:
            req["file"] = file
        if output:
            req["output"] = output
        if futures is not None:
            req["futures"] = [_future(f) for f in futures]
        reply = self._steer("branch", req)
        reply.setdefault("files", [reply["file"]])
        return reply

"""Steering a Rewind run from pvpython, next to the Rewind Live Source.

Shipped inside the Rewind ParaView plugin: after LoadPlugin it imports in pvpython and
pvbatch. Everything the GUI's steering panel does is here; it speaks the collector
protocol with rewind_client.py (the rewind package's client, python/rewind/client.py,
shipped alone; docs/collector-protocol.md, revisions 1.1 and 1.8):

    from paraview.simple import *
    LoadPlugin(".../RewindReader.so", remote=False, ns=globals())
    import rewind_steering
    live = RewindLiveSource(PortNumber=7400)              # windows of the running job
    steer = rewind_steering.Steering(live)          # same host, port and token
    steer.status()        # {"state": "running", "step": 120, "time": 1.2, "file": ...}
    steer.pause()         # at the next step boundary; the live source shows that state
    steer.parameters()    # [{"name": "physics.nu", "type": "number", "min", "max", "value", ...}]
    steer.set({"physics.nu": 2e-3})
    steer.branch("t=1", {"boundary.xmin.velocity": [1.5, 0, 0]}, output="fast.h5")
    steer.resume(); steer.stop()
    # Futures: several from one step, computed together, each in its own file
    steer.fork("latest", [{"physics.nu": 2e-3}, {}], outputs=["a.h5", "b.h5"])
    steer.futures()       # [{"file": "a.h5", "parent", "state", "step", "time", "changes", ...}, ...]
    steer.pause(file="b.h5"); steer.set({"physics.nu": 3e-3}, file="a.h5")
    live.File = "a.h5"    # the live source shows that future (Time "live")
    import rewind_compare # one view per running future, side by side (the dock's Compare)
    rewind_compare.compare(live)

Every command that changes the run (pause, resume, stop, set, branch) then refreshes the
live source, so the next render shows the run's new state. Errors raise
rewind_client.CollectorError with the protocol's code name ("unauthorized",
"bad_argument", "conflict", "timeout", ...); OSError when the collector cannot be
reached. Every socket call has a timeout (default 30 s, above the collector's 20 s
steering deadline).
"""
import rewind_client

CollectorError = rewind_client.CollectorError


class Steering:
    """A steering session with the collector of `source` (a Rewind Live Source proxy:
    its Host and PortNumber, or the job of its ContactFile), or with host/port/token given
    directly (source=None). The token as the source takes it: Token, else TokenFile, else
    the contact file's, else the environment (REWIND_TOKEN, REWIND_TOKEN_FILE)."""

    def __init__(self, source=None, host="127.0.0.1", port=7400, token=None, timeout=30.0, token_file=None):
        if source is not None:
            host, port = source.Host, int(source.PortNumber)
            token, token_file = source.Token, source.TokenFile
            if getattr(source, "ContactFile", ""):  # the job writing a run file, as the source connects
                c = rewind_client.read_contact(source.ContactFile)
                host, port = c["host"], c["port"]
                if not token and not token_file and c["token"]:
                    token = c["token"]
        self.source = source
        self.address = (host, int(port), rewind_client.resolve_token(token or None, token_file or None))
        self.timeout = timeout
        self._client = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, name, *args, refresh=False):
        if self._client is None:
            host, port, token = self.address
            self._client = rewind_client.Client(host, port, token=token, timeout=self.timeout,
                                                name="rewind-paraview-steering")
        try:
            reply = getattr(self._client, name)(*args)
        except (OSError, CollectorError):
            self.close()  # a broken session is not reused
            raise
        if refresh:
            self.refresh()
        return reply

    def refresh(self):
        """Makes the live source fetch its window again (its Refresh button)."""
        if self.source is not None:
            self.source.SMProxy.InvokeCommand("Refresh")
            self.source.UpdatePipeline()

    def status(self):
        """The run's state: state, step, time, steps_per_second, file, parent, ranks,
        clients, futures (see futures())."""
        return self._call("status")

    def futures(self):
        """Every future of the job: [{"file", "parent", "state", "step", "time",
        "steps_per_second", "changes"}, ...] (one for a job that never forked)."""
        return self._call("futures")

    # `file` (pause, resume, stop, set): the future writing that file; None = every future.
    def pause(self, file=None):
        return self._call("pause", file, refresh=True)

    def resume(self, file=None):
        return self._call("resume", file, refresh=True)

    def stop(self, file=None):
        return self._call("stop", file)

    def parameters(self):
        """Every steerable parameter: name, type ("number" or "vector"), unit, min, max,
        value, description -- what the GUI panel builds its widgets from."""
        return self._call("parameters")

    def set(self, values, file=None):
        """Changes parameters from the next step on: {"physics.nu": 2e-3, ...}."""
        return self._call("set", dict(values), file, refresh=True)

    def branch(self, from_, values=None, file=None, output=None):
        """Branches from a committed step (a time selector: "latest", "N", "#i", "t=T") of
        `file` (default: the file being written) with `values` changed, into `output`
        (default: chosen by the run). Returns {"file", "parent", "step", "time"}."""
        return self._call("branch", from_, dict(values or {}), file, output, refresh=True)

    def fork(self, from_, changes, file=None, outputs=None):
        """Forks the run (with several futures running: the one writing `file`) at the
        committed step `from_` into len(changes) futures, computed together from then on:
        changes[i] is future i's {name: value} ({} = the run continued unchanged),
        outputs[i] its file (default: the run's choice). Returns {"files" (the futures'
        files, in order), "file", "parent", "step", "time"}."""
        outputs = list(outputs or [])
        if outputs and len(outputs) != len(changes):
            raise rewind_client.InvalidArgument(f"fork: {len(changes)} futures but {len(outputs)} outputs: one per future")
        futures = [{"values": dict(c), **({"output": outputs[i]} if outputs else {})} for i, c in enumerate(changes)]
        return self._call("branch", from_, None, file, None, futures, refresh=True)

    def close(self):
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None

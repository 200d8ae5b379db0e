"""The evaluator's side of the release server (:mod:`privbench.learners.serve`).

:class:`ReleaseServer` starts ``python -m privbench.learners.serve`` (a process
with no bench module in it; forked by the run's zygote where there is one, :mod:`privbench.bench.zygote`)
and :meth:`ReleaseServer.attach` makes a loaded
mechanism's ``release`` a call to that server, which holds its own copy of the
same saved file.  The caller's generator is sent as its state and set to the
state the server's release left it in, so the numbers are those an in-process
release would give, bit for bit.  Replies are a JSON line and raw array bytes
(never unpickled here).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from typing import Any, Callable

import numpy as np

from privbench.datasets.errors import InputError


def read_array(stream: Any, header: dict[str, Any]) -> np.ndarray:
    """The array a reply's JSON line announces: exactly ``nbytes`` raw bytes of ``dtype``, ``shape``."""
    dtype = np.dtype(header["dtype"])
    if dtype.hasobject:
        raise ValueError("object arrays are refused")
    data = stream.read(int(header["nbytes"]))
    if len(data) != int(header["nbytes"]):
        raise EOFError("short reply")
    return np.frombuffer(data, dtype=dtype).reshape(header["shape"]).copy()


def unplain(x: Any) -> Any:
    """JSON decoding hook: the arrays :func:`privbench.learners.serve.plain` tagged, as numpy arrays."""
    if isinstance(x, dict) and set(x) == {"ndarray", "dtype"}:
        dtype = np.dtype(x["dtype"])
        if dtype.hasobject:
            raise ValueError("object arrays are refused")
        return np.asarray(x["ndarray"], dtype=dtype)
    return x


def type_of(path: str) -> str:
    """The mechanism type a saved file declares (what the evaluator dispatches on, never what the object says)."""
    from privbench.learners import saved_type

    return saved_type(path)


class RemoteMechanism:
    """A third-party mechanism as the evaluator sees it: plain data from the release server, releases made there.

    The evaluator process never imports a plug-in's module (which could patch the evaluators, for its own case
    and, the process being long-lived, for later ones); this proxy holds what the server reported when it loaded
    the file: the task, budget, ``info``, ``params()`` and ``channel()``; ``type_name`` is the type the file
    declares.  ``release`` is a call to the server.
    """

    def __init__(self, type_name: str, header: dict[str, Any], channel: np.ndarray | None,
                 release: Callable[[Any, np.random.Generator], np.ndarray]) -> None:
        from privbench.datasets.tasks import Task

        self.type_name = type_name
        self.task = Task.from_dict(header["task"])
        self.budget = float(header["budget"])
        self.info = header.get("info") or {}
        self.release = release
        self.described = header
        self.claimed_channel = channel

    def channel(self) -> np.ndarray | None:
        if "channel_error" in self.described:
            raise RuntimeError(self.described["channel_error"])
        return None if self.claimed_channel is None else self.claimed_channel.copy()

    def params(self) -> dict[str, Any] | None:
        if "params_error" in self.described:
            raise RuntimeError(self.described["params_error"])
        p = self.described.get("params")
        return None if p is None else json.loads(json.dumps(p), object_hook=unplain)

    def __repr__(self) -> str:
        return f"RemoteMechanism(type={self.type_name!r}, budget={self.budget:g}, task={self.task.kind})"


class ReleaseServer:
    """One ``privbench.learners.serve`` child."""

    def __init__(self, threads: int) -> None:
        from .zygote import fork_server

        self.proc: Any = fork_server(threads)  # forked by the run's zygote (torch imported), where there is one
        if self.proc is None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            self.proc = subprocess.Popen([sys.executable, "-m", "privbench.learners.serve"], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            pickle.dump((os.getpid(), threads), self.proc.stdin)  # type: ignore[arg-type]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        self.ready = False
        #: The third-party modules it was asked to import (:func:`~privbench.bench.artifact_eval.third_party_modules`):
        #: the evaluator gives a case whose modules differ a fresh server.
        self.third_party: tuple[str, ...] = ()

    def wait_ready(self) -> None:
        """Block until the server has done its imports (RuntimeError if it died)."""
        if not self.ready:
            try:
                header = json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]
            except (OSError, ValueError):
                header = {}
            if not header.get("ready"):
                self.proc.kill()
                raise RuntimeError(f"the release process did not start (exit code {self.proc.wait()})")
            self.ready = True

    def call(self, msg: Any) -> tuple[dict[str, Any], np.ndarray | None]:
        """Send one request; (header, array or None).  RuntimeError if the server died."""
        self.wait_ready()
        try:
            pickle.dump(msg, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            header = json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]
            array = read_array(self.proc.stdout, header) if header["array"] else None
        except (OSError, ValueError, KeyError, EOFError):
            self.proc.kill()
            raise RuntimeError(f"the release process died (exit code {self.proc.wait()})") from None
        if not header["ok"]:
            cls = InputError if header["type"] == "InputError" else RuntimeError
            raise cls(header["error"] if cls is InputError else f"{header['type']}: {header['error']}")
        return header, array

    def attach(self, mech: Any, key: str, path: str, modules: list[tuple[str, str | None]]) -> None:
        """Load ``path`` in the server and route ``mech.release`` there."""
        self.call(("load", key, path, modules))
        mech.release = self.releaser(key)

    def remote(self, key: str, path: str, modules: list[tuple[str, str | None]]) -> "RemoteMechanism":
        """Load ``path`` in the server and a :class:`RemoteMechanism` for it: nothing of its module here."""
        self.call(("load", key, path, modules))
        header, channel = self.call(("describe", key))
        return RemoteMechanism(type_of(path), header, channel, self.releaser(key))

    def releaser(self, key: str) -> Callable[[Any, np.random.Generator], np.ndarray]:
        def release(w: Any, rng: np.random.Generator) -> np.ndarray:
            header, z = self.call(("release", key, np.asarray(w), rng.bit_generator.state))
            rng.bit_generator.state = header["state"]
            return z  # type: ignore[return-value]

        return release

    def drop(self, key: str) -> None:
        self.call(("drop", key))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            try:
                pickle.dump(None, self.proc.stdin)  # type: ignore[arg-type]
                self.proc.stdin.flush()  # type: ignore[union-attr]
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()

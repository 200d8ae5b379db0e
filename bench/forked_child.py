"""An evaluator process forked from a worker before its first case (:class:`ForkedChild`).

A worker imports torch, the learners, theory and the evaluators once, then forks
its evaluator child (:meth:`~privbench.bench.artifacts.EvaluatorPool.start` with
``fork=True``, called only by :func:`~privbench.bench.backends.common.init_worker`,
before the worker has received a case): the child starts with those imports done
instead of importing them again (about 2 s of CPU per worker), and holds nothing
of any training, because none has happened yet.  Everything after the fork stays
apart: the two processes share only the request and reply pipes.  An evaluator
started later (a replacement, after a case has run) is a fresh interpreter.

:class:`ForkedChild` has the part of :class:`subprocess.Popen`'s interface that
:class:`~privbench.bench.artifacts.EvaluatorProcess` uses (``stdin``, ``stdout``,
``poll``, ``wait``, ``kill``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any, Callable


class PolledProcess:
    """``wait`` and ``kill`` for a process handle that has ``pid``, ``returncode`` and ``poll()``
    (:class:`ForkedChild`, :class:`~privbench.bench.zygote.ZygoteChild`); ``LABEL`` names it in a timeout."""

    LABEL = "child"
    pid: int
    returncode: int | None

    def poll(self) -> int | None:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the process (``subprocess.TimeoutExpired`` past ``timeout`` seconds)."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"{self.LABEL} {self.pid}", timeout)  # type: ignore[arg-type]
            time.sleep(0.01)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class ForkedChild(PolledProcess):
    """A child forked from this process that runs ``target(requests, replies)`` on two fresh pipes."""

    LABEL = "evaluator"

    def __init__(self, target: Callable[[Any, Any], None]) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; exercised through the local backend
            code = 1
            try:
                lo, hi = sorted((req_r, rep_w))  # close the rest: the parent's pipes to its own parent (its
                os.closerange(3, lo)  # process sentinel among them) must see the parent's death, not ours
                os.closerange(lo + 1, hi)
                os.closerange(hi + 1, 65536)
                target(os.fdopen(req_r, "rb"), os.fdopen(rep_w, "wb"))
                code = 0
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(rep_w)
        self.pid = pid
        self.stdin = os.fdopen(req_w, "wb")
        self.stdout = os.fdopen(rep_r, "rb")
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code once the child has exited (reaped here), else None."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


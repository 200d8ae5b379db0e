"""Cases in a long-lived child process, killed and replaced only on timeout: ``python -m privbench.bench.backends.isolated``.

What a Dask worker uses (:mod:`~privbench.bench.backends.dask_backend`): a :class:`CaseProcess` is the
same kind of process as a local backend's worker (:func:`~privbench.bench.backends.common.init_worker`:
it trains, and its own evaluator process scores the saved mechanisms), started once and reused for
case after case.  A case past its timeout has its process killed (SIGKILL; the evaluator and release
server follow their parent) and is recorded ``timeout``; a process that dies is recorded ``failed``;
either is replaced by a fresh one for the next case.  Works from daemonic processes (Dask workers),
unlike ``multiprocessing``.

Protocol: requests ``(case, device, artifacts)`` are pickles on the child's stdin (``None`` to exit);
on a private copy of its stdout (file descriptor 1 itself points at stderr, so nothing a learner prints
can corrupt a reply) the child writes ``READY`` once its imports are done, ``START`` when it begins a
case (the case's clock starts then), then the rows: an 8-byte length and a pickle.  Its stderr (and its
evaluator's) goes to a temporary file whose tail explains a death.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, BinaryIO

from ..execute import execute_case
from ..records import Record, error_text, failure_rows
from ..suites import Case
from .common import died_rows, init_worker, timeout_rows

READY, START = b"\x01", b"\x02"
HEADER = struct.Struct("<Q")


class Expired(Exception):
    """The deadline passed before the child answered."""


class CaseProcess:
    """One ``python -m privbench.bench.backends.isolated`` child with ``threads`` torch threads."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self.log = tempfile.TemporaryFile(prefix="privbench-case-")  # its stderr (and its evaluator's)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # same imports as here
        for key, value in nanny_environ().items():  # a local worker's environment, not a Dask worker's
            if env.get(key) == str(value):
                del env[key]
        self.proc = subprocess.Popen([sys.executable, "-m", "privbench.bench.backends.isolated"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, bufsize=0)
        self.ready = False
        self.send((os.getpid(), threads))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, msg: Any) -> None:
        self.proc.stdin.write(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def read(self, n: int, deadline: float | None) -> bytes:
        """Exactly ``n`` bytes of the child's replies (EOFError when it died, Expired past ``deadline``)."""
        fd, buf = self.proc.stdout.fileno(), b""  # type: ignore[union-attr]
        while len(buf) < n:
            wait = None if deadline is None else max(0.0, deadline - time.perf_counter())
            if not select.select([fd], [], [], wait)[0]:
                raise Expired()
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise EOFError()
            buf += chunk
        return buf

    def run(self, case: Case, device: str, timeout: float | None, artifacts: str | None = None,
            startup_limit: float = 600.0) -> list[Record]:
        """The rows of ``case`` (never raises for a failing case); :meth:`alive` says if the child is reusable.

        ``timeout`` counts from when the child starts the case; ``startup_limit`` bounds its imports.
        """
        t0 = time.perf_counter()
        try:
            if not self.ready:
                if self.read(1, t0 + startup_limit) != READY:
                    raise EOFError()
                self.ready = True
            self.clear_log()
            self.send((case, device, artifacts))
            if self.read(1, time.perf_counter() + startup_limit) != START:
                raise EOFError()
        except (Expired, EOFError, OSError):
            self.kill()
            return failure_rows(case, "failed", f"worker process did not start: {self.tail()}", None,
                                time.perf_counter() - t0, str(device))
        t1 = time.perf_counter()
        try:
            size = HEADER.unpack(self.read(HEADER.size, None if timeout is None else t1 + timeout))[0]
            return pickle.loads(self.read(size, None))
        except Expired:
            self.kill()
            return timeout_rows(case, timeout, device)  # type: ignore[arg-type]
        except (EOFError, OSError, pickle.UnpicklingError):
            code = self.kill()
            return died_rows(case, code, time.perf_counter() - t1, device)

    def clear_log(self) -> None:
        """Empty the stderr file between cases (the child shares its offset), so it holds one case's text."""
        self.log.seek(0)
        self.log.truncate()

    def tail(self) -> str:
        self.log.seek(0)
        return " ".join(self.log.read()[-8000:].decode(errors="replace").split()[-40:])

    def kill(self) -> int | None:
        """Kill the child (its evaluator follows); its exit code."""
        if self.alive():
            self.proc.kill()
        code = self.proc.wait()
        self.cleanup()
        return code

    def close(self, wait: float = 5.0) -> None:
        """Ask an idle child to exit; killed if it has not within ``wait`` seconds (0: killed at once: an
        idle child holds nothing to save, and its evaluator and release server follow it)."""
        if self.alive() and wait:
            try:
                self.send(None)
                self.proc.wait(timeout=wait)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def cleanup(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.log):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:  # pragma: no cover
                pass


def nanny_environ() -> dict[str, Any]:
    """What a Dask nanny sets in its worker's environment (``distributed.nanny.pre-spawn-environ``: one
    BLAS thread, an aggressive malloc trim); a case process undoes it where the values are Dask's."""
    if "distributed" not in sys.modules:  # not in a Dask worker
        return {}
    import dask

    return dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})


class CaseProcessPool:
    """This process's idle :class:`CaseProcess` children: one is taken per running case, and given back
    after it unless it died or was killed (then the next case starts a fresh one)."""

    def __init__(self) -> None:
        self.idle: list[CaseProcess] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def take(self, threads: int) -> CaseProcess:
        """An idle child with ``threads`` torch threads, else a new one (not waited for)."""
        with self.lock:
            for proc in list(self.idle):
                if not proc.alive() or proc.threads != threads:
                    self.idle.remove(proc)
                    proc.close(wait=0)
            if self.idle:
                return self.idle.pop()
        return CaseProcess(threads)

    def give(self, proc: CaseProcess) -> None:
        if proc.alive():
            with self.lock:
                self.idle.append(proc)

    def start(self, threads: int, count: int = 1) -> int:
        """Have ``count`` idle children with ``threads`` threads (start them early: their imports overlap
        other work); how many were started."""
        new = [CaseProcess(threads) for _ in range(max(0, count - sum(p.threads == threads for p in self.idle)))]
        for proc in new:
            self.give(proc)
        return len(new)

    def close(self, wait: float = 0.0) -> int:
        """Stop the idle children (each waited for at most ``wait`` seconds, then killed); how many there were."""
        with self.lock:
            idle, self.idle = self.idle, []
        for proc in idle:
            proc.close(wait)
        return len(idle)


#: The case processes of this (Dask worker) process.
CASE_PROCESSES = CaseProcessPool()


def run_isolated(case: Case, device: str = "auto", timeout: float | None = None, startup_limit: float = 600.0,
                 artifacts: str | None = None, threads: int = 1) -> list[Record]:
    """Run one case in a child process of :data:`CASE_PROCESSES` (reused case after case; killed and
    replaced on timeout); its rows, never raises for a failing case."""
    proc = CASE_PROCESSES.take(threads)
    try:
        return proc.run(case, device, timeout, artifacts, startup_limit)
    finally:
        CASE_PROCESSES.give(proc)


def close_case_processes() -> int:
    """Stop this process's idle case processes at once (what the Dask backend runs on every worker at the
    end of a run: no worker is held up while they shut down)."""
    return CASE_PROCESSES.close()


def serve(replies: BinaryIO, stdin: BinaryIO) -> None:  # pragma: no cover - exercised through CaseProcess
    """The child's loop: one case per request, its rows as a length-prefixed pickle."""
    from privbench.learners.serve import requests

    replies.write(READY)
    replies.flush()
    for case, device, artifacts in requests(stdin):
        replies.write(START)
        replies.flush()
        try:
            rows = execute_case(case, device, artifacts)
        except BaseException as exc:  # noqa: BLE001 - as a local worker does
            rows = failure_rows(case, "failed", "worker: " + error_text(exc), device=str(device))
        data = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
        replies.write(HEADER.pack(len(data)) + data)
        replies.flush()


def main() -> None:  # pragma: no cover - exercised through CaseProcess
    from privbench.learners.serve import private_stdout, quick_exit

    from ..artifacts import POOL

    replies = private_stdout()  # stray prints (Python or C) go to stderr, never into a reply
    parent, threads = pickle.load(sys.stdin.buffer)
    init_worker(parent, threads)
    serve(replies, sys.stdin.buffer)
    POOL.close()  # its evaluator child first (what the exit handler would do), then no interpreter teardown
    quick_exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()

"""The ``local`` backend: ``jobs`` spawned worker processes (the ``multiprocessing`` spawn context:
safe with CUDA and on every platform).  A worker tells the parent when it starts a case; a case past
``timeout`` seconds has its worker killed (SIGKILL) and is recorded ``timeout``; a worker that dies is
recorded ``failed`` and replaced.  Workers ignore SIGINT (the parent handles Ctrl-C) and exit by
themselves when the parent dies (``kill -9``).  Only the calling process writes results (``finish``).

Why not a library pool (issue 13, looked at): ``loky`` has no per-task timeout that kills the worker
running the task (only an idle timeout for the whole executor), which this backend's ``timeout``
needs.  ``pebble.ProcessPool`` has one, but here a case is claimed in the store only when a worker is
free to start it (so that concurrent resumers share the work), the clock starts when the worker says
"start" after its imports and evaluator child are up, and a killed worker's evaluator child must not
outlive it: a pebble version would keep the claim loop and the worker start-up and save only the
~40 lines of the wait loop, for a new dependency whose SIGTERM-then-kill and task-start bookkeeping
would have to be re-verified by ``tests/bench/test_faults.py`` and ``test_runner.py``.  Kept.
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from typing import Any, Callable

from ..execute import execute_case
from ..records import error_text, failure_rows
from ..suites import Case
from .common import Job, died_rows, init_worker, timeout_rows, worker_threads


def _worker_main(conn: Any, parent: int, threads: int | None) -> None:
    """Loop of a local worker process: receive a case, send back its rows."""
    init_worker(parent, threads)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            msg = None
        if msg is None:
            break
        case, device, artifacts = msg
        conn.send("start")  # the per-case timeout starts now, not at process start-up
        try:
            rows = execute_case(case, device, artifacts)
        except BaseException as exc:  # noqa: BLE001
            rows = failure_rows(case, "failed", "worker: " + error_text(exc), device=str(device))
        conn.send(rows)
    from privbench.learners.serve import quick_exit

    from ..artifacts import POOL

    POOL.close()  # its evaluator child first (what the exit handler would do), then no interpreter teardown
    quick_exit(0)


class _Worker:
    def __init__(self, ctx: Any, threads: int | None) -> None:
        parent_end, child_end = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child_end, os.getpid(), threads), daemon=True,
                                name="privbench-worker")
        self.proc.start()
        child_end.close()
        self.conn = parent_end
        self.job: Job | None = None

    def stop(self, kill: bool = False) -> None:
        self.ask_stop(kill)
        self.reap()

    def ask_stop(self, kill: bool = False) -> None:
        """Kill the worker, or ask it to finish (it exits once its evaluator child has)."""
        if kill and self.proc.is_alive():
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                pass

    def reap(self) -> None:
        """Wait for the worker to exit (killed after 5 s)."""
        self.proc.join(timeout=5)
        if self.proc.is_alive():  # pragma: no cover
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def run_local(todo: list[Case], jobs: int, device: str, timeout: float | None,
               claim: Callable[[Case], Job | None], finish: Callable[[Job, list], None],
               threads: int | None = None) -> None:
    """Run ``todo`` on ``jobs`` local worker processes; ``claim`` each case, ``finish`` its rows.

    Each worker (and its evaluator process) runs ``threads`` torch threads (default
    :data:`~privbench.bench.backends.common.DEFAULT_WORKER_THREADS`: one).
    """
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    threads = worker_threads(threads)
    queue, idle, busy = deque(todo), [], []  # type: ignore[var-annotated]
    try:
        while queue or busy:
            while queue and len(busy) < jobs:
                job = claim(queue.popleft())
                if job is None:
                    continue
                w = idle.pop() if idle else _Worker(ctx, threads)
                w.job, job.start = job, math.inf  # the clock starts when the worker says "start"
                w.conn.send((job.case, device, job.artifacts))
                busy.append(w)
            if not busy:
                break
            wait_s = None
            started = [w.job.start for w in busy if w.job.start < math.inf]
            if timeout is not None and started:
                wait_s = max(0.0, min(started) + timeout - time.perf_counter())
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=wait_s))
            for w in list(busy):
                job = w.job
                rows = None
                if w.conn in ready or w.proc.sentinel in ready:
                    try:
                        rows = w.conn.recv() if w.conn.poll() else None
                    except (EOFError, OSError):
                        rows = None
                    if rows == "start":
                        job.start = time.perf_counter()
                        continue
                    if rows is None:
                        w.proc.join(timeout=5)
                        rows = died_rows(job.case, w.proc.exitcode, time.perf_counter() - job.start, device)
                        busy.remove(w)
                        w.stop(kill=True)
                    else:
                        busy.remove(w)
                        idle.append(w)
                elif timeout is not None and time.perf_counter() - job.start >= timeout:
                    busy.remove(w)
                    w.stop(kill=True)
                    rows = timeout_rows(job.case, timeout, device)
                if rows is not None:
                    w.job = None
                    finish(job, rows)
    finally:
        for w in busy:
            w.job.claim.release()
            w.stop(kill=True)
        for w in idle:  # all asked first, so that they shut down side by side
            w.ask_stop()
        for w in idle:
            w.reap()

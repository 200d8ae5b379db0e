"""The ``local`` backend: ``jobs`` worker processes (started by a ``multiprocessing`` forkserver that has
imported what a worker needs, :func:`worker_context`, else spawned: both safe with CUDA).  A worker tells
the parent when it starts a case; a case past ``timeout`` seconds has its worker killed (SIGKILL) and is recorded ``timeout``; a worker that dies is
recorded ``failed`` and replaced.  Cases of a learner that batches fits go to a worker as one bundle
(:mod:`privbench.bench.bundles`: a case's repetitions and training-set sizes, one batched fit), with a
timeout of ``timeout`` seconds per case of the bundle.  Workers ignore SIGINT (the parent handles Ctrl-C) and exit by
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

from ..bundles import bundle_cases
from ..execute import execute_cases
from ..records import error_text, failure_rows
from ..suites import Case
from ..zygote import Zygote
from .common import Job, died_rows, init_worker, timeout_rows, warm_scenarios, worker_threads


def _worker_main(conn: Any, parent: int, threads: int | None, warm: tuple[tuple[str, Any], ...] = (),
                 zygote: str | None = None, environ: dict[str, str] | None = None) -> None:
    """Loop of a local worker process: receive a bundle of cases, send back each case's rows."""
    if environ is not None:  # the run's environment now (a forkserver's is that of the run that started it)
        os.environ.clear()
        os.environ.update(environ)
    init_worker(parent, threads, warm, zygote)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            msg = None
        if msg is None:
            break
        cases, device, artifacts = msg
        conn.send("start")  # the per-case timeout starts now, not at process start-up
        try:
            rows = execute_cases(cases, device, artifacts)
        except BaseException as exc:  # noqa: BLE001
            rows = [failure_rows(c, "failed", "worker: " + error_text(exc), device=str(device)) for c in cases]
        conn.send(rows)
    from privbench.learners.serve import quick_exit

    from ..artifacts import POOL

    POOL.close()  # its evaluator child first (what the exit handler would do), then no interpreter teardown
    quick_exit(0)


class _Worker:
    def __init__(self, ctx: Any, threads: int | None, warm: tuple[tuple[str, Any], ...] = (),
                 zygote: str | None = None) -> None:
        parent_end, child_end = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, daemon=True, name="privbench-worker",
                                args=(child_end, os.getpid(), threads, warm, zygote, dict(os.environ)))
        self.proc.start()
        child_end.close()
        self.conn = parent_end
        self.jobs: list[Job] = []

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

    ctx = worker_context()
    threads = worker_threads(threads)
    warm = warm_scenarios(todo)  # each worker loads their bundled data before it forks its evaluator
    queue, idle, busy = deque(bundle_cases(todo)), [], []  # type: ignore[var-annotated]
    zygote = Zygote() if todo else None  # one clean, pre-imported parent of every release server of the run
    address = zygote.address if zygote is not None else None
    try:
        while queue or busy:
            while queue and len(busy) < jobs:
                claimed = [j for j in (claim(c) for c in queue.popleft()) if j is not None]
                if not claimed:
                    continue
                w = idle.pop() if idle else _Worker(ctx, threads, warm, address)
                w.jobs = claimed
                for job in claimed:
                    job.start = math.inf  # the clock starts when the worker says "start"
                w.conn.send(([j.case for j in claimed], device, [j.artifacts for j in claimed]))
                busy.append(w)
            if not busy:
                break
            wait_s = None
            started = [deadline(w, timeout) for w in busy if w.jobs[0].start < math.inf]
            if timeout is not None and started:
                wait_s = max(0.0, min(started) - time.perf_counter())
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=wait_s))
            for w in list(busy):
                rows = collect(w, ready, timeout, device)
                if rows == "start":
                    for job in w.jobs:
                        job.start = time.perf_counter()
                    continue
                if rows is None:
                    continue
                busy.remove(w)
                if w.proc.is_alive() and not isinstance(rows, Finished):
                    idle.append(w)
                else:
                    w.stop(kill=True)
                done, w.jobs = w.jobs, []
                for job, case_rows in zip(done, rows):
                    finish(job, case_rows)
    finally:
        for w in busy:
            for job in w.jobs:
                job.claim.release()
            w.stop(kill=True)
        for w in idle:  # all asked first, so that they shut down side by side
            w.ask_stop()
        for w in idle:
            w.reap()
        if zygote is not None:
            zygote.close()


def worker_context() -> Any:
    """The ``multiprocessing`` context of the workers: a forkserver that has imported what a worker imports
    (:mod:`~privbench.bench.backends.preload`, once per run instead of once per worker) where the platform
    has one, else spawn.  Both start every worker clean: the forkserver never runs a case."""
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():  # pragma: no cover - Windows
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["privbench.bench.backends.preload"])
    return ctx


class Finished(list):
    """Rows of a bundle whose worker was killed (timeout) or died: the worker is not reused."""


def deadline(w: _Worker, timeout: float | None) -> float:
    """When the worker's bundle times out: ``timeout`` seconds per case from its start."""
    return w.jobs[0].start + (math.inf if timeout is None else timeout * len(w.jobs))


def collect(w: _Worker, ready: set, timeout: float | None, device: str) -> Any:
    """The worker's news: ``"start"``, the bundle's rows (per case), a :class:`Finished` list of failure
    rows (it died or ran past its deadline, and was killed), or None (still running)."""
    job = w.jobs[0]
    if w.conn in ready or w.proc.sentinel in ready:
        try:
            rows = w.conn.recv() if w.conn.poll() else None
        except (EOFError, OSError):
            rows = None
        if rows is not None:
            return rows
        w.proc.join(timeout=5)
        seconds = (time.perf_counter() - job.start) / len(w.jobs)
        return Finished(died_rows(j.case, w.proc.exitcode, seconds, device) for j in w.jobs)
    if timeout is not None and time.perf_counter() >= deadline(w, timeout):
        w.proc.kill()
        return Finished(timeout_rows(j.case, timeout, device) for j in w.jobs)
    return None

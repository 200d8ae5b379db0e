"""Execution backends of the runner: local worker processes and Dask distributed.

- :func:`run_local`: ``jobs`` spawned worker processes (the ``multiprocessing``
  spawn context: safe with CUDA and on every platform).  A worker tells the
  parent when it starts a case; a case past ``timeout`` seconds has its worker
  killed (SIGKILL) and is recorded ``timeout``; a worker that dies is recorded
  ``failed`` and replaced.  Workers ignore SIGINT (the parent handles Ctrl-C)
  and exit by themselves when the parent dies (``kill -9``).
- :func:`run_dask`: a ``distributed.Client`` on a scheduler address, or a
  ``LocalCluster`` on 127.0.0.1; with a timeout each case runs in a child
  process of the Dask worker (:func:`run_isolated`), killed on expiry.

Only the calling process writes results (the ``finish`` callback).
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from privbench.datasets.errors import InputError

from .runner import _error, default_jobs, execute_case, failure_rows, now, provenance
from .suites import Case


@dataclass
class _Job:
    case: Case
    claim: Any
    start: float = 0.0


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(3)


def _init_worker(parent: int, threads: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    import torch

    if threads:
        torch.set_num_threads(threads)
    # import everything a case needs now, so that a case's timeout measures the case only
    import privbench.theory.optimum  # noqa: F401
    from privbench.learners import available

    from . import evaluators, scores  # noqa: F401

    available()
    provenance()


def _worker_main(conn: Any, parent: int, threads: int | None) -> None:
    """Loop of a local worker process: receive a case, send back its rows."""
    _init_worker(parent, threads)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        case, device = msg
        conn.send("start")  # the per-case timeout starts now, not at process start-up
        try:
            rows = execute_case(case, device)
        except BaseException as exc:  # noqa: BLE001
            rows = failure_rows(case, "failed", "worker: " + _error(exc), device=str(device))
        conn.send(rows)


class _Worker:
    def __init__(self, ctx: Any, threads: int | None) -> None:
        parent_end, child_end = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child_end, os.getpid(), threads), daemon=True,
                                name="privbench-worker")
        self.proc.start()
        child_end.close()
        self.conn = parent_end
        self.job: _Job | None = None

    def stop(self, kill: bool = False) -> None:
        if kill and self.proc.is_alive():
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():  # pragma: no cover
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def run_isolated(case: Case, device: str = "auto", timeout: float | None = None,
                 startup_limit: float = 600.0) -> list[dict[str, Any]]:
    """Run one case in a fresh child process (``python -m privbench.bench.backends``), killed on timeout.

    The timeout counts from when the child starts the case (after its imports).
    Works from daemonic processes (Dask workers), unlike ``multiprocessing``.
    """
    import select
    import tempfile

    started, t0 = now(), time.perf_counter()
    with tempfile.NamedTemporaryFile(prefix="privbench-case-", suffix=".pkl", delete=False) as fh:
        pickle.dump((case, device, os.getpid()), fh)
    try:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # same imports as here
        proc = subprocess.Popen([sys.executable, "-m", "privbench.bench.backends", fh.name], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready, _, _ = select.select([proc.stdout], [], [], startup_limit)
        if not ready or proc.stdout.read(1) != b"\x01":  # type: ignore[union-attr]
            proc.kill()
            _, err = proc.communicate()
            return failure_rows(case, "failed", f"worker process did not start: {_tail(err)}", started,
                                time.perf_counter() - t0, str(device))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return failure_rows(case, "timeout", f"exceeded the per-case timeout of {timeout:g} s (killed)",
                                started, time.perf_counter() - t0, str(device))
    finally:
        os.unlink(fh.name)
    if proc.returncode != 0 or not out:
        return failure_rows(case, "failed", f"worker process exited with code {proc.returncode}: {_tail(err)}",
                            started, time.perf_counter() - t0, str(device))
    return pickle.loads(out)


def _tail(err: bytes) -> str:
    return " ".join(err.decode(errors="replace").split()[-40:])


def dask_task(case: Case, device: str, timeout: float | None) -> list[dict[str, Any]]:
    """What a Dask worker runs for one case."""
    if timeout is None:
        return execute_case(case, device)
    return run_isolated(case, device, timeout)


def run_local(todo: list[Case], jobs: int, device: str, timeout: float | None,
               claim: Callable[[Case], _Job | None], finish: Callable[[_Job, list], None]) -> None:
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    threads = max(1, default_jobs() // jobs)
    queue, idle, busy = deque(todo), [], []  # type: ignore[var-annotated]
    try:
        while queue or busy:
            while queue and len(busy) < jobs:
                job = claim(queue.popleft())
                if job is None:
                    continue
                w = idle.pop() if idle else _Worker(ctx, threads)
                w.job, job.start = job, math.inf  # the clock starts when the worker says "start"
                w.conn.send((job.case, device))
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
                        rows = failure_rows(job.case, "failed", f"worker process died (exit code "
                                            f"{w.proc.exitcode}; out of memory?)", None,
                                            max(0.0, time.perf_counter() - job.start), device)
                        busy.remove(w)
                        w.stop(kill=True)
                    else:
                        busy.remove(w)
                        idle.append(w)
                elif timeout is not None and time.perf_counter() - job.start >= timeout:
                    busy.remove(w)
                    w.stop(kill=True)
                    rows = failure_rows(job.case, "timeout", f"exceeded the per-case timeout of {timeout:g} s "
                                        "(worker killed)", None, float(timeout), device)
                if rows is not None:
                    w.job = None
                    finish(job, rows)
    finally:
        for w in busy:
            w.job.claim.release()
            w.stop(kill=True)
        for w in idle:
            w.stop()


def run_dask(todo: list[Case], jobs: int, device: str, timeout: float | None, scheduler: str | None,
              claim: Callable[[Case], _Job | None], finish: Callable[[_Job, list], None]) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover
        raise InputError("--backend dask needs the 'distributed' package (pip install distributed)") from None
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=10)
        else:
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None)
            client = Client(cluster)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise InputError(f"cannot connect to Dask scheduler {scheduler!r} ({_error(exc)})") from None
    queue, inflight = deque(todo), {}
    try:
        limit = max(2, 2 * sum(client.nthreads().values()))
        ac = as_completed()

        def submit() -> None:
            while queue and len(inflight) < limit:
                job = claim(queue.popleft())
                if job is not None:
                    fut = client.submit(dask_task, job.case, device, timeout, pure=False)
                    inflight[fut] = job
                    ac.add(fut)

        submit()
        for fut in ac:
            job = inflight.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker, a serialisation error ...
                rows = failure_rows(job.case, "failed", "dask: " + _error(exc), None,
                                    time.perf_counter() - job.start, device)
            finish(job, rows)
            submit()
    finally:
        for fut, job in inflight.items():
            fut.cancel()
            job.claim.release()
        client.close()
        if cluster is not None:
            cluster.close()


def _child_main(path: str) -> None:  # pragma: no cover - exercised through run_isolated
    with open(path, "rb") as fh:
        case, device, parent = pickle.load(fh)
    _init_worker(parent, 1)
    out = sys.stdout.buffer
    out.write(b"\x01")
    out.flush()
    rows = execute_case(case, device)
    out.write(pickle.dumps(rows))
    out.flush()


if __name__ == "__main__":  # pragma: no cover
    _child_main(sys.argv[1])


"""The ``dask`` backend: a ``distributed.Client`` on a scheduler address, or a ``LocalCluster`` on 127.0.0.1.

Each Dask worker runs its cases in long-lived child processes
(:mod:`~privbench.bench.backends.isolated`), the same kind of process as a local worker: started once
per worker thread (as soon as the run connects, so that their imports overlap), reused case after case,
killed and replaced only when a case passes its timeout or the process dies.  The saved mechanisms are
scored in that process's own evaluator process, as with the local backend, so the numbers are the same.

A scheduler with no workers is an InputError after ``privbench.worker-wait`` seconds (Dask config, default
30; e.g. ``DASK_PRIVBENCH__WORKER_WAIT=120``), at the start or when every worker left mid-run; so is a
worker whose privbench version differs from this one.  Dask workers must have the same privbench
installed.  Only the calling process writes results (``finish``).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Callable

from privbench.datasets.errors import InputError

from ..records import Record, error_text, failure_rows
from ..suites import Case
from .common import Job, worker_threads
from .isolated import CASE_PROCESSES, close_case_processes, run_isolated

#: Seconds to wait for a worker by default (Dask config ``privbench.worker-wait`` overrides it).
WORKER_WAIT = 30.0


def dask_task(case: Case, device: str, timeout: float | None, artifacts: str | None = None,
              threads: int = 1) -> list[Record]:
    """What a Dask worker runs for one case (``artifacts``: where its mechanisms are saved)."""
    return run_isolated(case, device, timeout, artifacts=artifacts, threads=threads)


def start_case_processes(threads: int, dask_worker: Any = None) -> int:
    """Run on each worker (``Client.run``) when a run connects: start one case process per worker thread."""
    return CASE_PROCESSES.start(threads, dask_worker.state.nthreads if dask_worker is not None else 1)


def worker_version() -> str:
    """The privbench version installed where this runs (a worker); ``unknown`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privbench")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def worker_wait(given: float | None = None) -> float:
    """Seconds to wait for a worker: ``given``, else Dask config ``privbench.worker-wait``, else 30."""
    import dask

    value = given if given is not None else dask.config.get("privbench.worker-wait", WORKER_WAIT)
    try:
        value = float(value)
    except (TypeError, ValueError):
        value = -1.0
    if not value > 0:
        raise InputError(f"privbench.worker-wait={value!r} must be a positive number of seconds")
    return value


def connect(scheduler: str | None, jobs: int) -> tuple[Any, Any]:
    """A Client on ``scheduler``, else on a new LocalCluster of ``jobs`` one-thread worker processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover
        raise InputError("--backend dask needs the 'distributed' package (pip install distributed)") from None
    cluster = None
    try:
        if scheduler:
            return Client(scheduler, timeout=10), None
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
        return Client(cluster), cluster
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise InputError(f"cannot connect to Dask scheduler {scheduler!r} ({error_text(exc)})") from None


def check_workers(client: Any, wait: float) -> None:
    """InputError when no worker joins within ``wait`` seconds, or a worker has another privbench."""
    try:
        client.wait_for_workers(1, timeout=wait)
    except TimeoutError:
        address = client.scheduler.address
        raise InputError(f"Dask scheduler {address} has no workers (waited {wait:g} s): start some with "
                         f"'dask worker {address}' (with the same privbench installed)") from None
    mine = worker_version()
    try:
        theirs = client.run(worker_version)
    except Exception as exc:  # noqa: BLE001 - e.g. privbench missing on a worker
        raise InputError(f"a Dask worker cannot run privbench ({error_text(exc)}): install privbench {mine} "
                         "on every worker") from None
    odd = {addr: v for addr, v in theirs.items() if v != mine}
    if odd:
        addr, v = next(iter(odd.items()))
        raise InputError(f"Dask worker {addr} has privbench {v}, this process {mine} ({len(odd)} worker(s) "
                         "differ): install the same privbench on every worker")


def probe_workers(scheduler: str, wait: float | None = None) -> None:
    """InputError when the scheduler at ``scheduler`` cannot be reached, has no worker within ``wait`` seconds
    (default :func:`worker_wait`), or a worker has another privbench: checked before a run starts."""
    wait = worker_wait(wait)
    client, _ = connect(scheduler, 0)
    try:
        check_workers(client, wait)
    finally:
        client.close()


def run_dask(todo: list[Case], jobs: int, device: str, timeout: float | None, scheduler: str | None,
             claim: Callable[[Case], Job | None], finish: Callable[[Job, list], None],
             wait: float | None = None) -> None:
    """Run ``todo`` on a Dask cluster; ``claim`` each case, ``finish`` its rows.

    ``wait``: seconds to wait for a worker (default :func:`worker_wait`).
    """
    wait = worker_wait(wait)
    client, cluster = connect(scheduler, jobs)
    threads = worker_threads(None)  # one torch thread per case process, as a local worker by default
    inflight: dict[Any, Job] = {}
    try:
        check_workers(client, wait)
        client.run(start_case_processes, threads)
        loop(client, deque(todo), inflight, (device, timeout, threads), wait, claim, finish)
    finally:
        for fut, job in inflight.items():
            fut.cancel()
            job.claim.release()
        try:
            client.run(close_case_processes)
        except Exception:  # noqa: BLE001 - a worker gone meanwhile
            pass
        client.close()
        if cluster is not None:
            cluster.close()


def loop(client: Any, queue: deque, inflight: dict[Any, Job], how: tuple, wait: float,
         claim: Callable[[Case], Job | None], finish: Callable[[Job, list], None]) -> None:
    """Keep one case per worker thread in flight (in ``todo``'s order, as the local backend does) until
    ``queue`` is done; InputError when no worker is left for ``wait`` seconds."""
    from distributed import wait as wait_futures

    device, timeout, threads = how
    alone_since = None
    while True:
        slots = sum(client.nthreads().values())
        while queue and len(inflight) < max(1, slots):
            job = claim(queue.popleft())
            if job is not None:
                fut = client.submit(dask_task, job.case, device, timeout, job.artifacts, threads, pure=False)
                inflight[fut] = job
        if not inflight:
            return
        try:
            wait_futures(list(inflight), timeout=min(5.0, wait), return_when="FIRST_COMPLETED")
        except Exception:  # noqa: BLE001 - TimeoutError, or futures cancelled by the scheduler (failed below)
            pass
        done = [fut for fut in inflight if fut.status in ("finished", "error", "cancelled")]
        if not done:
            alone_since = (alone_since or time.monotonic()) if not slots else None
            if alone_since is not None and time.monotonic() - alone_since >= wait:
                raise InputError(f"every Dask worker left and none came back within {wait:g} s "
                                 f"({len(inflight) + len(queue)} case(s) not run; add --resume to continue)")
            continue
        alone_since = None
        for fut in done:
            job = inflight.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker, a serialisation error ...
                rows = failure_rows(job.case, "failed", "dask: " + error_text(exc), None,
                                    time.perf_counter() - job.start, device)
            finish(job, rows)

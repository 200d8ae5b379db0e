"""The ``dask`` backend: a ``distributed.Client`` on a scheduler address, or a ``LocalCluster`` on
127.0.0.1; with a timeout each case runs in a child process of the Dask worker
(:func:`~privbench.bench.backends.isolated.run_isolated`), killed on expiry.  Dask workers must have
privbench installed.  Only the calling process writes results (``finish``).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable

from privbench.datasets.errors import InputError

from ..execute import execute_case
from ..records import Record, error_text, failure_rows
from ..suites import Case
from .common import Job
from .isolated import run_isolated


def dask_task(case: Case, device: str, timeout: float | None, artifacts: str | None = None) -> list[Record]:
    """What a Dask worker runs for one case (``artifacts``: where its mechanisms are saved)."""
    if timeout is None:
        return execute_case(case, device, artifacts)
    return run_isolated(case, device, timeout, artifacts=artifacts)


def run_dask(todo: list[Case], jobs: int, device: str, timeout: float | None, scheduler: str | None,
              claim: Callable[[Case], Job | None], finish: Callable[[Job, list], None]) -> None:
    """Run ``todo`` on a Dask cluster; ``claim`` each case, ``finish`` its rows."""
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
        raise InputError(f"cannot connect to Dask scheduler {scheduler!r} ({error_text(exc)})") from None
    queue, inflight = deque(todo), {}
    try:
        limit = max(2, 2 * sum(client.nthreads().values()))
        ac = as_completed()

        def submit() -> None:
            while queue and len(inflight) < limit:
                job = claim(queue.popleft())
                if job is not None:
                    fut = client.submit(dask_task, job.case, device, timeout, job.artifacts, pure=False)
                    inflight[fut] = job
                    ac.add(fut)

        submit()
        for fut in ac:
            job = inflight.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker, a serialisation error ...
                rows = failure_rows(job.case, "failed", "dask: " + error_text(exc), None,
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

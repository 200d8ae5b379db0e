"""Execution backends of the runner, by name (:data:`BACKENDS`).

A backend is ``run(todo, jobs, device, timeout, scheduler, claim, finish)``: it
runs each case of ``todo`` that ``claim`` grants (a :class:`Job`), and hands
every finished case's Records to ``finish`` in the calling process (the only
one that writes to the store).  Adding a backend: one module here and one
entry in :data:`BACKENDS`.
"""

from __future__ import annotations

from typing import Any, Callable

from .common import Job, default_jobs
from .dask_backend import dask_task, probe_workers, run_dask
from .isolated import run_isolated
from .local import run_local


def local_backend(todo: list[Any], jobs: int, device: str, timeout: float | None, scheduler: str | None,
                  claim: Callable, finish: Callable, threads: int | None = None) -> None:
    """:func:`run_local` under the common backend signature (``scheduler`` is not used)."""
    run_local(todo, jobs, device, timeout, claim, finish, threads)


#: Backend name -> runner with the common signature.
BACKENDS: dict[str, Callable[..., None]] = {"local": local_backend, "dask": run_dask}

__all__ = ["BACKENDS", "Job", "default_jobs", "dask_task", "probe_workers", "run_dask", "run_isolated", "run_local"]

"""What every backend shares: the :class:`Job` in flight and a worker process's start-up."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from typing import Any

from privbench.learners.serve import watch_parent

from ..records import Record, failure_rows
from ..suites import Case


@dataclass
class Job:
    """A claimed case in flight: the case, its store claim, when it started (perf_counter), its mechanisms' directory."""

    case: Case
    claim: Any
    start: float = 0.0
    artifacts: str | None = None  # where the case's fitted mechanisms are saved


def init_worker(parent: int, threads: int | None) -> None:
    """Start-up of a worker process: ignore SIGINT, exit with the parent, import what a case needs.

    A worker only trains: it imports the learners, theory and the evaluators, then forks the
    process that will evaluate its saved mechanisms (:mod:`privbench.bench.artifacts`,
    :mod:`privbench.bench.forked_child`), which so starts with those imports done and nothing
    trained; it returns once that process is ready, so that a case's timeout measures the case
    only.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    threading.Thread(target=watch_parent, args=(parent,), daemon=True).start()
    from ..artifact_eval import import_evaluation, main
    from ..artifacts import POOL

    import_evaluation(threads)
    # torch imports its compiler (torch._dynamo, ~1.5 s of CPU) at the first optimizer a process builds;
    # training and the evaluator's attackers both build one: imported here, before the fork, it is paid once
    import torch._dynamo  # noqa: F401

    POOL.start(threads, fork=main)  # fork the evaluator now: imports done, nothing trained
    POOL.get()


#: Torch threads of a local worker process unless ``--threads`` says otherwise: one.  Small networks train
#: several times faster on one thread than on cores/jobs threads (``scripts/thread_timing.py``; README,
#: "Threads"), and ``jobs`` workers with one thread each keep every core busy without oversubscription.
DEFAULT_WORKER_THREADS = 1


def worker_threads(threads: int | None) -> int:
    """Torch threads per local worker: ``threads`` if given, else :data:`DEFAULT_WORKER_THREADS`."""
    return DEFAULT_WORKER_THREADS if threads is None else int(threads)


def timeout_rows(case: Case, timeout: float, device: str) -> list[Record]:
    """The rows of a case whose worker process was killed past ``timeout`` seconds (every backend)."""
    return failure_rows(case, "timeout", f"exceeded the per-case timeout of {timeout:g} s (worker killed)", None,
                        float(timeout), str(device))


def died_rows(case: Case, exitcode: int | None, seconds: float, device: str) -> list[Record]:
    """The rows of a case whose worker process died during it (every backend)."""
    return failure_rows(case, "failed", f"worker process died (exit code {exitcode}; out of memory?)", None,
                        max(0.0, seconds), str(device))


def default_jobs() -> int:
    """Worker processes by default: the CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover
        return max(1, os.cpu_count() or 1)

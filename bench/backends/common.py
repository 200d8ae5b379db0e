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


def init_worker(parent: int, threads: int | None, warm: tuple[tuple[str, Any], ...] = (),
                zygote: str | None = None) -> None:
    """Start-up of a worker process: ignore SIGINT, exit with the parent, import what a case needs.

    A worker only trains: it imports the learners, theory and the evaluators, loads the bundled
    data sets of the run's scenarios ``warm`` (:func:`warm_data`), then forks the process that
    will evaluate its saved mechanisms (:mod:`privbench.bench.artifacts`,
    :mod:`privbench.bench.forked_child`), which so starts with those imports and data done and
    nothing trained; it returns once that process is ready, so that a case's timeout measures the
    case only.  ``zygote``: the socket of the run's zygote, which forks this worker's release servers
    (:mod:`privbench.bench.zygote`); None: each is a fresh interpreter.
    """
    from privbench.learners.zygote import watch_pid

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    # spawned, the run is our parent; forked by the forkserver (backends.local.worker_context), it is not
    watch = watch_parent if os.getppid() == parent else watch_pid
    threading.Thread(target=watch, args=(parent,), daemon=True).start()
    from ..artifact_eval import import_evaluation, main
    from ..artifacts import POOL
    from ..zygote import use_zygote

    import_evaluation(threads)
    # torch imports its compiler (torch._dynamo, ~1.5 s of CPU) at the first optimizer a process builds;
    # training and the evaluator's attackers both build one: imported here, before the fork, it is paid once
    import torch._dynamo  # noqa: F401

    warm_data(warm)
    use_zygote(zygote)  # before the fork: the evaluator's release servers come from it too
    POOL.start(threads, fork=main)  # fork the evaluator now: imports done, nothing trained
    POOL.get()


def warm_scenarios(cases: list[Case]) -> tuple[tuple[str, Any], ...]:
    """The distinct ``(scenario, params)`` of ``cases``, for :func:`init_worker`'s ``warm``."""
    return tuple({repr((c.scenario, c.params)): (c.scenario, c.params) for c in cases}.values())


def warm_data(scenarios: tuple[tuple[str, Any], ...]) -> None:
    """Load the fixed partitions (bundled images, UCI tables; cached per process) of the scenarios
    ``(name, params)`` that have one, so that a worker's evaluator child, forked after this, finds
    them loaded instead of parsing the same files again (about 0.4 s of CPU per data set and
    process).  Only bundled files are read: nothing of any case has run.  A scenario that does not
    build is skipped here; its cases report the error."""
    from privbench.datasets.scenarios import make_scenario

    for name, params in scenarios:
        try:
            sc = make_scenario(name, params)
            if getattr(sc, "fixed_rows", False):
                sc.partition()
        except Exception:  # noqa: BLE001 - the case itself reports it
            continue


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

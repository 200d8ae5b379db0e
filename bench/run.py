"""Run cases into a results directory: the loop, progress with ETA, resume, manifests.

:func:`run_cases` runs a list of cases (:class:`~privbench.bench.suites.Case`)
into a results directory (:mod:`privbench.bench.store`) on a backend
(:mod:`privbench.bench.backends`):

- ``backend="local"``: ``jobs`` worker processes (forked by a pre-imported forkserver, else spawned); a case past
  ``timeout`` seconds has its worker killed and is recorded ``status="timeout"``.
- ``backend="dask"``: a ``distributed.Client`` on ``scheduler`` (or a
  ``LocalCluster`` on 127.0.0.1 with ``jobs`` workers); Dask workers must have
  the same privbench installed (checked), and a scheduler with no worker is
  refused after ``privbench.worker-wait`` seconds (Dask config, default 30).

One case is run by :func:`~privbench.bench.execute.execute_case`.  Only the
calling process writes to the store.  Progress (with ETA) goes to stderr.

This module is also the harness's public API: :func:`run_cases`,
:func:`provenance`, :func:`failure_rows`, :func:`score_budget`, :func:`execute_case`.
"""

from __future__ import annotations

import math
import os
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_THREADS
from privbench.datasets.validate import check_int

from .artifacts import MECHANISMS_DIR
from .backends import BACKENDS, Job, default_jobs, probe_workers
from .eta import CostETA, learner_trains
from .execute import execute_case, score_budget
from .records import Record, failure_rows, now, provenance
from .scores import below_bound_fails, overshoot_tolerance, set_flag
from .store import ResultsDir, case_ids_present, new_run_id
from .suites import Case

__all__ = ["BACKENDS", "RunSummary", "default_jobs", "execute_case", "failure_rows", "provenance", "run_cases",
           "score_budget"]


@dataclass
class RunSummary:
    """What a run did."""

    out: Path
    run_id: str
    cases: int = 0
    rows: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0, "timeout": 0})
    skipped: int = 0
    busy: int = 0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    #: Successful rows carrying each flag (:data:`FLAGS`); a row may carry several.
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FLAGS, 0))

    def flag_line(self) -> str:
        """The flags of this run's successful rows, e.g. ``flags: 2 overshoot, 0 below-bound, ...``."""
        return "flags: " + ", ".join(f"{self.flags.get(k, 0)} {k}" for k in FLAGS) + (
            f" (see 'privbench report {shlex.quote(str(self.out))}')" if any(self.flags.values()) else "")

    def not_ok(self) -> int:
        """Rows of this run that failed, timed out or were stored inconsistent."""
        return sum(n for status, n in self.counts.items() if status != "ok")

    def line(self) -> str:
        c = self.counts
        text = (f"{self.cases} case(s) run, {self.rows} row(s): {c['ok']} ok, {c['failed']} failed, "
                f"{c['timeout']} timeout")
        if self.skipped:
            text += f"; {self.skipped} already stored (skipped)"
        if c.get("inconsistent"):
            text += f"; {c['inconsistent']} inconsistent (a mechanism's description failed its test)"
        if self.busy:
            text += f"; {self.busy} being run by another process (left to it)"
        return text + f"; {self.wall_s:.1f} s; results in {self.out}"

    def add(self, case: Case, rows: list[Record]) -> None:
        """Count one finished case's rows (and keep the first 20 failures' messages)."""
        self.cases += 1
        self.rows += len(rows)
        for r in rows:
            self.counts[r["status"]] = self.counts.get(r["status"], 0) + 1
            if r["status"] == "ok":
                for k, v in row_flags(r).items():
                    self.flags[k] = self.flags.get(k, 0) + int(v)
            if r["status"] != "ok" and len(self.failures) < 20:
                self.failures.append(f"{r['status']}: {case.label()} budget {r['budget']:g}: {r['error']}")


#: What a successful row may be flagged for: overshooting its budget beyond the statistical tolerance
#: (:func:`~privbench.bench.scores.overshoot_tolerance`), leakage below the bound (an evaluator failure),
#: leakage evaluators that disagree (:func:`~privbench.bench.evaluators.headline.spread`).
FLAGS = ("overshoot", "below-bound", "evaluators-disagree")


def row_flags(r: dict[str, Any]) -> dict[str, bool]:
    """The :data:`FLAGS` of one stored row (as the report's flags table marks them)."""
    over = r.get("overshoot")
    try:
        overshoots = isinstance(over, (int, float)) and math.isfinite(over) and over > overshoot_tolerance(r)
    except (KeyError, TypeError, ValueError):
        overshoots = False
    below = below_bound_fails(r.get("below_bound"), r.get("bound_kind"))
    return {"overshoot": bool(overshoots), "below-bound": below,
            "evaluators-disagree": set_flag(r.get("evaluators_disagree"))}


class Progress:
    """A progress bar with a cost-weighted ETA (:class:`~privbench.bench.eta.CostETA`) on stderr
    (tqdm on a terminal; one line per case otherwise)."""

    def __init__(self, cases: list[Case], mode: str, workers: int | None = None) -> None:
        self.total, self.done, self.mode, self.t0 = len(cases), 0, mode, time.perf_counter()
        self.eta = CostETA(cases, workers=workers) if mode != "none" else None
        self.bar = None
        if mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="case", file=sys.stderr, dynamic_ncols=True, desc="privbench run",
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")

    def update(self, case: Case, rows: list[dict[str, Any]]) -> None:
        self.done += 1
        if self.eta is None:
            return
        walls = [r.get("wall_time_s") for r in rows]
        measured = all(isinstance(w, (int, float)) and math.isfinite(w) for w in walls) and walls
        self.eta.finished(case.key, sum(walls) if measured else None)  # type: ignore[arg-type]
        el = time.perf_counter() - self.t0
        left = self.eta.eta(el)
        eta = "?" if left is None else hms(left)
        statuses = sorted({r["status"] for r in rows})
        if self.bar is not None:
            self.bar.set_postfix_str(f"ETA {eta}; {case.learner} {case.scenario} {'/'.join(statuses)}",
                                     refresh=False)
            self.bar.update(1)
        else:
            err = next((r.get("error") for r in rows if r.get("error")), "")
            sys.stderr.write(f"[{self.done}/{self.total}] {'/'.join(statuses):<7} {case.label()}  "
                             f"elapsed {hms(el)} ETA {eta}" + (f"  ({err[:120]})" if err else "") + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def hms(s: float) -> str:
    """Seconds as ``H:MM:SS``."""
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def cost_rank(case: Case) -> int:
    """0 for learners that train (they declare tiny ``test_params``), 1 for fixed baselines."""
    return 0 if learner_trains(case.learner) else 1


def check_options(backend: str, scheduler: str | None, jobs: Any, timeout: Any, device: str) -> int:
    """Validate :func:`run_cases`'s options (InputError naming the bad one); the number of jobs."""
    if backend not in BACKENDS:
        raise InputError(f"backend={backend!r} is unknown (allowed: {', '.join(BACKENDS)})")
    if scheduler and backend != "dask":
        raise InputError("--scheduler needs --backend dask")
    if scheduler:
        probe_scheduler(scheduler)
        probe_workers(scheduler)
    jobs = default_jobs() if jobs is None else jobs
    jobs = check_int("jobs", jobs, 1)
    if timeout is not None and not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise InputError(f"timeout={timeout!r} must be a positive number of seconds")
    if backend == "local":
        from privbench.learners.nn import resolve_device

        resolve_device(device)
    return jobs


def probe_scheduler(address: str, timeout: float = 5.0) -> None:
    """InputError when a ``tcp://host:port`` (or ``host:port``) scheduler does not accept a connection within
    ``timeout`` seconds, before the results directory is touched; other schemes are left to Dask."""
    import socket
    from urllib.parse import urlsplit

    if "://" in address and not address.startswith("tcp://"):
        return
    try:
        parts = urlsplit(address if "://" in address else f"tcp://{address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise InputError(f"--scheduler {address!r} is not an address such as tcp://10.0.0.5:8786")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"Dask scheduler {address!r} is unreachable ({exc.strerror or exc}, "
                         f"within {timeout:g} s)") from None


def plan(cases: list[Case], stored: dict[str, str], retry_failed: bool, resume: bool, out: Any,
         suite: str) -> tuple[list[Case], int]:
    """The cases (with only their unfinished budgets) left to run, and how many are already stored."""
    todo, skipped, clash = [], 0, 0
    for case in cases:
        ids = case.case_ids()
        done = case_ids_present(stored, ids, retry_failed)
        clash += sum(i in stored for i in ids)
        if all(done):
            skipped += 1
        else:
            todo.append(case.with_budgets(b for b, d in zip(case.budgets, done) if not d))
    if clash and not resume:
        raise InputError(f"{str(out)!r} already holds {clash} result row(s) of this run (suite {suite!r}); "
                         "add --resume to continue it, or choose a new --out")
    todo.sort(key=cost_rank)  # trained learners first: better packing of the slow cases onto the workers
    return todo, skipped


class Writer:
    """The calling process's side of a run: claims cases in the store and writes finished ones."""

    def __init__(self, store: ResultsDir, summary: RunSummary, bar: Progress, retry_failed: bool) -> None:
        self.store, self.summary, self.bar, self.retry_failed = store, summary, bar, retry_failed

    def claim(self, case: Case) -> Job | None:
        """Lock ``case`` and keep its budgets still unfinished; None if another run holds or did it."""
        c = self.store.claim(case.key)
        if c is None:
            self.summary.busy += 1
            self.bar.update(case, [{"status": "busy"}])
            return None
        fresh = self.store.statuses(key=case.key)
        done = case_ids_present(fresh, case.case_ids(), self.retry_failed)
        left = [b for b, d in zip(case.budgets, done) if not d]
        if not left:  # finished by another run meanwhile
            c.release()
            self.summary.skipped += 1
            self.bar.update(case, [{"status": "done"}])
            return None
        artifacts = self.store.path / MECHANISMS_DIR / f"{case.key}-{self.summary.run_id}"
        return Job(case.with_budgets(left), c, time.perf_counter(), str(artifacts))

    def finish(self, job: Any, rows: list[Record]) -> None:
        """Store one finished case's rows (one part), release its claim, count it."""
        for r in rows:
            r["run_id"] = self.summary.run_id
            if r.get("mechanism_file"):  # kept with the results: relative to the results directory
                r["mechanism_file"] = os.path.relpath(r["mechanism_file"], self.store.path)
        try:
            self.store.write(rows, job.case.key, self.summary.run_id)
        finally:
            job.claim.release()
        self.summary.add(job.case, rows)
        self.bar.update(job.case, rows)


def run_cases(cases: Iterable[Case], out: str | os.PathLike, *, suite: str = "adhoc", jobs: int | None = None,
              device: str = "auto", timeout: float | None = None, backend: str = "local",
              scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
              progress: str | None = None, command: str = "", threads: int | None = None) -> RunSummary:
    """Run ``cases`` into the results directory ``out``.

    Parameters
    ----------
    cases : iterable of Case
    out : path-like
        Results directory (created; must be empty or a privbench results directory).
    jobs : int, optional
        Local worker processes / LocalCluster workers (default: CPU cores).
    device : {"auto", "cpu", "cuda"}
    timeout : float, optional
        Per-case limit in seconds (whole case: fit and all evaluations).
    backend : {"local", "dask"}
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``); none starts a LocalCluster.
    resume : bool
        Skip cases already stored.  Without it, a directory already holding any
        of these cases is refused (InputError), so nothing stored is ever mixed up.
    retry_failed : bool
        With ``resume``: run again cases stored as failed or timed out.
    progress : {"bar", "lines", "none"}, optional
        Default: a bar on a terminal, else one line per case.
    threads : int, optional
        Torch threads per local worker process (default 1: see
        :data:`~privbench.bench.backends.common.DEFAULT_WORKER_THREADS`).

    Raises
    ------
    InputError
        Bad options, a foreign or unwritable directory, a corrupted part, or
        cases already stored without ``resume``.
    """
    cases = list(cases)
    jobs = check_options(backend, scheduler, jobs, timeout, device)
    if threads is not None:
        threads = check_int("threads", threads, 1, maximum=MAX_THREADS)
        if backend != "local":
            raise InputError(f"--threads applies to the local backend (Dask workers run one torch thread "
                             f"each), not --backend {backend}")
    from privbench.learners.nn import cache_directory

    store = ResultsDir(out)
    store.clean_stale_temporaries()
    todo, skipped = plan(cases, store.statuses(), retry_failed, resume, out, suite)
    run_id = new_run_id()
    summary = RunSummary(out=Path(out), run_id=run_id, skipped=skipped)
    manifest = {"run_id": run_id, "suite": suite, "command": command, "started_at": now(), "backend": backend,
                "jobs": jobs, "threads": threads, "device": device, "timeout_s": timeout,
                "cases_total": len(cases),
                "cases_skipped": skipped, "status": "running", "pid": os.getpid(), **provenance()}
    store.write_manifest(run_id, manifest)
    bar = Progress(todo, progress or ("bar" if sys.stderr.isatty() else "lines"),
                   workers=jobs if backend == "local" or not scheduler else None)
    writer = Writer(store, summary, bar, retry_failed)
    t0 = time.perf_counter()
    status = "interrupted"
    try:
        with SigtermAsInterrupt(), cache_directory():  # workers share the VAEs they train (learners.nn.vae_cache)
            BACKENDS[backend](todo, jobs, device, timeout, scheduler, writer.claim, writer.finish,
                              **({} if threads is None else {"threads": threads}))
        status = "finished"
    finally:
        bar.close()
        summary.wall_s = time.perf_counter() - t0
        store.write_manifest(run_id, {**manifest, "status": status, "finished_at": now(),
                                      "cases_run": summary.cases, "rows": summary.rows, **summary.counts,
                                      "wall_s": summary.wall_s})
    return summary


class SigtermAsInterrupt:
    """Within the block, SIGTERM raises KeyboardInterrupt (main thread only)."""

    def __enter__(self) -> None:
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGTERM, raise_interrupt)

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)


def raise_interrupt(signum: int, frame: Any) -> None:
    """A signal handler that raises KeyboardInterrupt."""
    raise KeyboardInterrupt

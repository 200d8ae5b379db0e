"""Run cases: train, evaluate independently, score, store; locally or on Dask.

One case (:class:`~privbench.bench.suites.Case`) is run by :func:`execute_case`:
draw ``n_train`` training samples (``Case.train_seed``), ``learner.fit`` on
all budgets at once (``Case.seed``), then per budget ``evaluate`` with fresh
samples (``Case.eval_seed``), ``headline`` leakage and distortion, the optimum
at the achieved distortion and at the budget (``privbench.theory``), ``score``,
and provenance.  A scenario with no known optimum (``privbench.datasets.labelled``)
is stored with ``bound_kind="none"``, NaN optimum and gap, and its overshoot.  It never raises for a failing case: an exception or a NaN is
a row with ``status="failed"`` and the error.

:func:`run_cases` runs a list of cases into a results directory
(:mod:`privbench.bench.store`):

- ``backend="local"``: ``jobs`` spawned worker processes; a case past
  ``timeout`` seconds has its worker killed and is recorded ``status="timeout"``.
- ``backend="dask"``: a ``distributed.Client`` on ``scheduler`` (or a
  ``LocalCluster`` on 127.0.0.1 with ``jobs`` workers); Dask workers must have
  privbench installed.

The backends live in :mod:`privbench.bench.backends`.

Only the calling process writes to the store.  Progress (with ETA) goes to stderr.
"""

from __future__ import annotations

import functools
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from privbench.datasets.errors import InputError

from .store import ResultsDir, new_run_id, now
from .suites import Case

BACKENDS = ("local", "dask")


# --------------------------------------------------------------------------
# one case
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def provenance() -> dict[str, str]:
    """Versions, git commit (``+dirty`` when the tree has changes; ``unknown`` outside git), host."""
    from importlib.metadata import PackageNotFoundError, version

    import torch

    try:
        pv = version("privbench")
    except PackageNotFoundError:  # pragma: no cover
        pv = "unknown"
    return {"privbench_version": pv, "git_commit": _git_commit(), "torch_version": torch.__version__,
            "numpy_version": np.__version__, "host": socket.gethostname()}


def _git_commit() -> str:
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "") if head else "unknown"


def _base_row(case: Case, budget: float) -> dict[str, Any]:
    from privbench.datasets.scenarios import make_scenario

    try:
        sid = make_scenario(case.scenario, case.params).id
    except Exception:  # noqa: BLE001 - validated when the suite was built
        sid = case.scenario
    return {"case_id": case.case_id(budget), "case_key": case.key, "suite": case.suite,
            "experiment": case.experiment, "scenario": case.scenario, "scenario_id": sid,
            "params": case.params_json, "observation": case.observation, "privacy": case.privacy,
            "objective": case.training_privacy,
            "family": case.family, "learner": case.learner, "learner_params": case.learner_params_json,
            "budget": float(budget), "seed": case.seed, "rep": case.rep, "n_train": case.n_train,
            "n_eval": case.n_eval, "evaluators": case.evaluators, "protocol": case.protocol, **provenance()}


def failure_rows(case: Case, status: str, error: str, started: str | None = None,
                 wall: float = math.nan, device: str = "") -> list[dict[str, Any]]:
    """One row per budget of ``case`` with ``status`` (``failed``/``timeout``) and ``error``."""
    n = len(case.budgets)
    return [{**_base_row(case, b), "status": status, "error": error, "started_at": started or now(),
             "finished_at": now(), "wall_time_s": wall / n, "device": device} for b in case.budgets]


def _error(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text}"[:2000]


def execute_case(case: Case, device: str = "auto") -> list[dict[str, Any]]:
    """Run one case; one record per budget (never raises for a failing case)."""
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner
    from privbench.learners.nn import resolve_device

    from .evaluators import evaluate, headline
    from .scores import score

    if case.protocol is not None:
        from .protocols import run_protocol

        return run_protocol(case, device)
    started, t0 = now(), time.perf_counter()
    n = len(case.budgets)
    dev = str(device)
    try:
        dev = str(resolve_device(device))
        sc = make_scenario(case.scenario, case.params)
        task = task_for(sc, case.observation, case.training_privacy)
        samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
        learner = make_learner(case.learner, **case.learner_params)
        t1 = time.perf_counter()
        mechs = learner.fit(samples, task, list(case.budgets), seed=case.seed, device=dev)
        train = time.perf_counter() - t1
    except Exception as exc:  # noqa: BLE001 - recorded, the suite goes on
        return failure_rows(case, "failed", "fit: " + _error(exc), started, time.perf_counter() - t0, dev)
    shared = (time.perf_counter() - t0) / n
    rows = []
    for budget, mech in zip(case.budgets, mechs):
        t2 = time.perf_counter()
        row = {**_base_row(case, budget), "started_at": started, "device": dev, "train_time_s": train / n}
        try:
            row.update(score_budget(case, sc, mech, budget, evaluate, headline, score))
        except Exception as exc:  # noqa: BLE001
            row.update(status="failed", error="evaluate: " + _error(exc))
        row.update(finished_at=now(), wall_time_s=shared + time.perf_counter() - t2)
        rows.append(row)
    return rows


def score_budget(case: Case, sc: Any, mech: Any, budget: float, evaluate: Callable, headline: Callable,
                  score: Callable) -> dict[str, Any]:
    from privbench.theory.optimum import curve, optimum

    evals = evaluate(mech, sc, case.observation, case.privacy, n_eval=case.n_eval, seed=case.eval_seed,
                     evaluators=case.evaluators, cross_check=False)
    out = headline_fields(evals, case.privacy)
    out["mechanism_info"] = json.dumps(getattr(mech, "info", None) or {}, default=_json_default)
    if out.get("status") == "failed":
        return out
    leak, dist = headline(evals, case.privacy), headline(evals, "distortion")
    if getattr(sc, "has_optimum", True) is False:  # labelled data: a learned point with no optimum to score
        return {**out, **no_bound_fields(max(0.0, float(dist.value) - float(budget)))}
    opt = optimum(sc, budget, case.privacy, case.observation, case.family)

    def optimum_at(d: float) -> float:
        return float(curve(sc, [max(float(d), 0.0)], case.privacy, case.observation, case.family)[0])

    s = score(leak, dist, budget, optimum_at, opt.bound_kind)
    out.update(optimum_at_budget=float(opt.value), bound_kind=opt.bound_kind,
               optimum_at_distortion=float(s["optimum_at_distortion"]), gap=float(s["gap"]),
               overshoot=float(s["overshoot"]), below_bound=bool(s["below_bound"]),
               below_bound_reason=s.get("below_bound_reason"), status="ok", error=None)
    return out


def headline_fields(evals: list[Any], privacy: str) -> dict[str, Any]:
    """Store fields of a list of evaluations: the JSON of all, the headline leakage (of ``privacy``)
    and distortion with their evaluators; ``status="failed"`` with the error where one is NaN."""
    from .evaluators import headline

    out: dict[str, Any] = {"evaluations": json.dumps([e.__dict__ for e in evals], default=_json_default)}
    leak, dist = headline(evals, privacy), headline(evals, "distortion")
    out.update(leakage=leak.value, leakage_evaluator=leak.evaluator, leakage_kind=leak.kind,
               leakage_stderr=leak.stderr, distortion=dist.value, distortion_evaluator=dist.evaluator,
               distortion_kind=dist.kind, distortion_stderr=dist.stderr)
    for name, ev in (("leakage", leak), ("distortion", dist)):
        if math.isnan(ev.value):
            return {**out, "status": "failed", "error": f"{name} is NaN ({ev.evaluator})"}
    return out


def no_bound_fields(overshoot: float) -> dict[str, Any]:
    """Score fields of a point with no known optimum (bound_kind "none", NaN gap), status ok."""
    nan = float("nan")
    return {"optimum_at_budget": nan, "bound_kind": "none", "optimum_at_distortion": nan, "gap": nan,
            "overshoot": float(overshoot), "below_bound": False, "below_bound_reason": None, "status": "ok",
            "error": None}


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


# --------------------------------------------------------------------------
# orchestration
# --------------------------------------------------------------------------


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

    def line(self) -> str:
        c = self.counts
        text = (f"{self.cases} case(s) run, {self.rows} row(s): {c['ok']} ok, {c['failed']} failed, "
                f"{c['timeout']} timeout")
        if self.skipped:
            text += f"; {self.skipped} already stored (skipped)"
        if self.busy:
            text += f"; {self.busy} being run by another process (left to it)"
        return text + f"; {self.wall_s:.1f} s; results in {self.out}"


class _Progress:
    """A progress bar with ETA on stderr (tqdm on a terminal; one line per case otherwise)."""

    def __init__(self, total: int, mode: str) -> None:
        self.total, self.done, self.mode, self.t0 = total, 0, mode, time.perf_counter()
        self.bar = None
        if mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="case", file=sys.stderr, dynamic_ncols=True, desc="privbench run")

    def update(self, case: Case, rows: list[dict[str, Any]]) -> None:
        self.done += 1
        statuses = sorted({r["status"] for r in rows})
        if self.bar is not None:
            self.bar.set_postfix_str(f"{case.learner} {case.scenario} {'/'.join(statuses)}", refresh=False)
            self.bar.update(1)
        elif self.mode == "lines":
            el = time.perf_counter() - self.t0
            eta = el / self.done * (self.total - self.done)
            err = next((r.get("error") for r in rows if r.get("error")), "")
            sys.stderr.write(f"[{self.done}/{self.total}] {'/'.join(statuses):<7} {case.label()}  "
                             f"elapsed {_hms(el)} ETA {_hms(eta)}" + (f"  ({err[:120]})" if err else "") + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _hms(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _cost_rank(case: Case) -> int:
    """0 for learners that train (they declare tiny ``test_params``), 1 for fixed baselines."""
    from privbench.learners import resolve_learner

    try:
        return 0 if resolve_learner(case.learner).test_params else 1
    except Exception:  # noqa: BLE001 - validated when the suite was built
        return 1


def default_jobs() -> int:
    """Worker processes by default: the CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover
        return max(1, os.cpu_count() or 1)


def run_cases(cases: Iterable[Case], out: str | os.PathLike, *, suite: str = "adhoc", jobs: int | None = None,
              device: str = "auto", timeout: float | None = None, backend: str = "local",
              scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
              progress: str | None = None, command: str = "") -> RunSummary:
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

    Raises
    ------
    InputError
        Bad options, a foreign or unwritable directory, a corrupted part, or
        cases already stored without ``resume``.
    """
    cases = list(cases)
    if backend not in BACKENDS:
        raise InputError(f"backend={backend!r} is unknown (allowed: {', '.join(BACKENDS)})")
    if scheduler and backend != "dask":
        raise InputError("--scheduler needs --backend dask")
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs={jobs!r} must be an integer >= 1")
    if timeout is not None and not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise InputError(f"timeout={timeout!r} must be a positive number of seconds")
    if backend == "local":
        from privbench.learners.nn import resolve_device

        resolve_device(device)
    store = ResultsDir(out)
    store.clean_stale_temporaries()
    stored = store.statuses()
    todo, skipped, clash = [], 0, 0
    for case in cases:
        ids = case.case_ids()
        done = [(stored.get(i) == "ok") if retry_failed else (i in stored) for i in ids]
        clash += sum(i in stored for i in ids)
        if all(done):
            skipped += 1
        else:
            todo.append(case.with_budgets(b for b, d in zip(case.budgets, done) if not d))
    if clash and not resume:
        raise InputError(f"{str(out)!r} already holds {clash} result row(s) of this run (suite {suite!r}); "
                         "add --resume to continue it, or choose a new --out")
    todo.sort(key=_cost_rank)  # trained learners first: better packing of the slow cases onto the workers
    run_id = new_run_id()
    summary = RunSummary(out=Path(out), run_id=run_id, skipped=skipped)
    manifest = {"run_id": run_id, "suite": suite, "command": command, "started_at": now(), "backend": backend,
                "jobs": jobs, "device": device, "timeout_s": timeout, "cases_total": len(cases),
                "cases_skipped": skipped, "status": "running", "pid": os.getpid(), **provenance()}
    store.write_manifest(run_id, manifest)
    mode = progress or ("bar" if sys.stderr.isatty() else "lines")
    bar = _Progress(len(todo), mode)
    t0 = time.perf_counter()

    from .backends import _Job

    def claim(case: Case) -> _Job | None:
        c = store.claim(case.key)
        if c is None:
            summary.busy += 1
            bar.update(case, [{"status": "busy"}])
            return None
        fresh = store.statuses(key=case.key)
        left = [b for b, i in zip(case.budgets, case.case_ids())
                if not ((fresh.get(i) == "ok") if retry_failed else (i in fresh))]
        if not left:  # finished by another run meanwhile
            c.release()
            summary.skipped += 1
            bar.update(case, [{"status": "done"}])
            return None
        return _Job(case.with_budgets(left), c, time.perf_counter())

    def finish(job: Any, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            r["run_id"] = run_id
        try:
            store.write(rows, job.case.key, run_id)
        finally:
            job.claim.release()
        summary.cases += 1
        summary.rows += len(rows)
        for r in rows:
            summary.counts[r["status"]] = summary.counts.get(r["status"], 0) + 1
            if r["status"] != "ok" and len(summary.failures) < 20:
                summary.failures.append(f"{r['status']}: {job.case.label()} budget {r['budget']:g}: {r['error']}")
        bar.update(job.case, rows)

    status = "interrupted"
    try:
        with _sigterm_as_interrupt():
            from .backends import run_dask, run_local

            if backend == "local":
                run_local(todo, jobs, device, timeout, claim, finish)
            else:
                run_dask(todo, jobs, device, timeout, scheduler, claim, finish)
        status = "finished"
    finally:
        bar.close()
        summary.wall_s = time.perf_counter() - t0
        store.write_manifest(run_id, {**manifest, "status": status, "finished_at": now(),
                                      "cases_run": summary.cases, "rows": summary.rows, **summary.counts,
                                      "wall_s": summary.wall_s})
    return summary


class _sigterm_as_interrupt:
    """Within the block, SIGTERM raises KeyboardInterrupt (main thread only)."""

    def __enter__(self) -> None:
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGTERM, _raise_interrupt)

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt

"""The stored row: :class:`Record` and the one schema of the store (:data:`COLUMNS`).

A Record is one row per (case, budget): the case's parameters, the headline
leakage and distortion with the evaluator that produced each, the optimum at
the achieved distortion and at the budget, the gap, times, device, versions,
status and error (``../shared/DESIGN.md``, "Record").  Every producer (the
runner's cases, protocols, failures and timeouts) starts from
:meth:`Record.base`; a key outside the schema is a ``KeyError`` when it is set,
not when the row is written.  :mod:`privbench.bench.store` writes Records with
the types of :data:`COLUMNS`.

Imports nothing from the bench but the evaluators' :func:`headline` (lazily);
the store, the runner and the protocols import it.
"""

from __future__ import annotations

import functools
import json
import math
import socket
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

STR, FLOAT, INT, BOOL = "string", "float64", "int64", "bool"
#: The store schema: (column name, type), in the order the columns are stored.
COLUMNS: list[tuple[str, str]] = [
    ("case_id", STR), ("suite", STR), ("experiment", STR), ("scenario", STR), ("scenario_id", STR),
    ("params", STR), ("observation", STR), ("privacy", STR), ("objective", STR), ("family", STR),
    ("evaluators", STR), ("protocol", STR), ("distortion_name", STR), ("mechanism_info", STR), ("learner", STR),
    ("learner_params", STR), ("budget", FLOAT), ("seed", INT), ("rep", INT), ("n_train", INT), ("n_eval", INT),
    ("status", STR), ("error", STR), ("leakage", FLOAT), ("leakage_evaluator", STR), ("leakage_kind", STR),
    ("leakage_stderr", FLOAT), ("leakage_spread", FLOAT), ("evaluators_disagree", BOOL), ("distortion", FLOAT),
    ("distortion_evaluator", STR), ("distortion_kind", STR),
    ("distortion_stderr", FLOAT), ("optimum_at_distortion", FLOAT), ("optimum_at_budget", FLOAT),
    ("bound_kind", STR), ("optimum_lower_at_distortion", FLOAT), ("optimum_lower_at_budget", FLOAT),
    ("family_bound", STR), ("family_bound_at_distortion", FLOAT), ("family_bound_at_budget", FLOAT),
    ("guarantee_eps", FLOAT), ("guarantee_delta", FLOAT), ("guarantee_kind", STR),
    ("gap", FLOAT), ("overshoot", FLOAT), ("below_bound", BOOL), ("below_bound_reason", STR),
    ("evaluations", STR), ("mechanism_file", STR), ("train_time_s", FLOAT), ("wall_time_s", FLOAT), ("device", STR), ("host", STR),
    ("privbench_version", STR), ("git_commit", STR), ("torch_version", STR), ("numpy_version", STR),
    ("started_at", STR), ("finished_at", STR), ("case_key", STR), ("run_id", STR),
]
COLUMN_NAMES = [c for c, _ in COLUMNS]
COLUMN_SET = frozenset(COLUMN_NAMES)


class Record(dict):
    """One stored row: a dict whose keys can only be columns of :data:`COLUMNS`.

    Missing columns are stored as null.  Build one with :meth:`base`, then set
    the measured fields with :meth:`update` or item assignment.
    """

    def __init__(self, *args: Any, **fields: Any) -> None:
        super().__init__()
        self.update(*args, **fields)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in COLUMN_SET:
            raise KeyError(f"{key!r} is not a record column (see privbench.bench.records.COLUMNS)")
        super().__setitem__(key, value)

    def update(self, *args: Any, **fields: Any) -> None:  # type: ignore[override]
        for key, value in dict(*args, **fields).items():
            self[key] = value

    def setdefault(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        if key not in self:
            self[key] = default
        return self[key]

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (worker processes, Dask) as a Record
        return (Record, (dict(self),))

    @classmethod
    def base(cls, case: Any, budget: float) -> "Record":
        """The case's parameter columns and this process's provenance for one budget of ``case``."""
        from privbench.datasets.scenarios import make_scenario

        try:
            sid = make_scenario(case.scenario, case.params).id
        except Exception:  # noqa: BLE001 - validated when the suite was built
            sid = case.scenario
        return cls({"case_id": case.case_id(budget), "case_key": case.key, "suite": case.suite,
                    "experiment": case.experiment, "scenario": case.scenario, "scenario_id": sid,
                    "params": case.params_json, "observation": case.observation, "privacy": case.privacy,
                    "objective": case.training_privacy,
                    "family": case.family, "learner": case.learner, "learner_params": case.learner_params_json,
                    "budget": float(budget), "seed": case.seed, "rep": case.rep, "n_train": case.n_train,
                    "n_eval": case.n_eval, "evaluators": case.evaluators, "protocol": case.protocol,
                    "distortion_name": getattr(case, "distortion", None),
                    **provenance()})

    def row(self) -> dict[str, Any]:
        """Every column in schema order (null where unset), as the store writes it."""
        return {c: self.get(c) for c in COLUMN_NAMES}


def failure_rows(case: Any, status: str, error: str, started: str | None = None,
                 wall: float = math.nan, device: str = "") -> list[Record]:
    """One Record per budget of ``case`` with ``status`` (``failed``/``timeout``) and ``error``."""
    n = len(case.budgets)
    out = []
    for b in case.budgets:
        rec = Record.base(case, b)
        rec.update(status=status, error=error, started_at=started or now(), finished_at=now(),
                   wall_time_s=wall / n, device=device)
        out.append(rec)
    return out


def now() -> str:
    """UTC timestamp, ISO 8601 with microseconds (sortable as text)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def error_text(exc: BaseException) -> str:
    """One line naming an exception: ``Type: message`` (whitespace collapsed, at most 2000 characters)."""
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text}"[:2000]


def json_default(x: Any) -> Any:
    """``json.dumps`` fallback for numpy scalars and arrays (anything else: its ``str``)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def headline_fields(evals: list[Any], privacy: str) -> dict[str, Any]:
    """Record fields of a list of evaluations: the JSON of all, the headline leakage (of ``privacy``)
    and distortion with their evaluators, the spread between the leakage evaluators and whether they
    disagree (:func:`privbench.bench.evaluators.headline.spread`; NaN and False for an exact headline);
    ``status="failed"`` with the error where one is NaN."""
    from .evaluators import headline, spread

    out: dict[str, Any] = {"evaluations": json.dumps([e.__dict__ for e in evals], default=json_default)}
    leak, dist = headline(evals, privacy), headline(evals, "distortion")
    width, disagree = spread(evals, privacy)
    out.update(leakage=leak.value, leakage_evaluator=leak.evaluator, leakage_kind=leak.kind,
               leakage_stderr=leak.stderr, leakage_spread=width, evaluators_disagree=disagree,
               distortion=dist.value, distortion_evaluator=dist.evaluator,
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


@functools.lru_cache(maxsize=1)
def provenance() -> dict[str, str]:
    """Versions, git commit (``+dirty`` when the tree has changes; ``unknown`` outside git), host."""
    from importlib.metadata import PackageNotFoundError, version

    import torch

    try:
        pv = version("privbench")
    except PackageNotFoundError:  # pragma: no cover
        pv = "unknown"
    return {"privbench_version": pv, "git_commit": git_commit(), "torch_version": str(torch.__version__),
            "numpy_version": np.__version__, "host": socket.gethostname()}


def git_commit() -> str:
    """HEAD of the checkout privbench runs from (``+dirty`` with changes), or ``unknown``."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "") if head else "unknown"

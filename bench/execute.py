"""One case: train, evaluate independently, score; one :class:`~privbench.bench.records.Record` per budget.

:func:`execute_case` draws ``n_train`` training samples (``Case.train_seed``),
fits the learner on all budgets at once (``Case.seed``), then per budget
evaluates fresh samples (``Case.eval_seed``) with the bench's evaluators
(:mod:`privbench.bench.evaluators`), takes the headline leakage and distortion,
the optimum at the achieved distortion and at the budget
(:mod:`privbench.theory`), and scores the gap (:mod:`privbench.bench.scores`).
A scenario with no known optimum (labelled data) is stored with
``bound_kind="none"``, NaN optimum and gap, and its overshoot (0 when the case's learner
declares its budget is not a distortion budget, ``Learner.budget_kind``).  A case with a
``protocol`` runs that protocol instead (:mod:`privbench.bench.protocols`).
It never raises for a failing case: an exception or a NaN is a Record with
``status="failed"`` and the error.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .artifacts import case_budget_kind, defining_modules, evaluate_saved, save_mechanisms, temporary_directory
from .records import Record, error_text, failure_rows, headline_fields, json_default, no_bound_fields, now


def execute_case(case: Any, device: str = "auto", artifacts: str | os.PathLike | None = None) -> list[Record]:
    """Run one case; one Record per budget (never raises for a failing case).

    The fitted mechanisms are saved under ``artifacts`` (a temporary directory,
    removed afterwards, when None) and scored from those files in the evaluator
    process (:mod:`privbench.bench.artifacts`), never from the fitted objects.
    """
    return execute_cases([case], device, [artifacts])[0]


def execute_cases(cases: list[Any], device: str = "auto",
                  artifacts: list[str | os.PathLike | None] | None = None) -> list[list[Record]]:
    """Run cases that differ only in their repetition and ``n_train`` (:func:`privbench.bench.bundles.bundle_cases`)
    with one :meth:`~privbench.learners.Learner.fit_many` (one batched network where the learner can), then score
    each case's mechanisms as :func:`execute_case` does; per case its Records (never raises).

    ``train_time_s`` is the shared fit's time divided among the cases and budgets.
    """
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner
    from privbench.learners.nn import resolve_device

    from .protocols import run_protocol

    artifacts = list(artifacts) if artifacts is not None else [None] * len(cases)
    first = cases[0]
    if first.protocol is not None:
        return [run_protocol(c, device, a) for c, a in zip(cases, artifacts)]
    started, t0 = now(), time.perf_counter()
    dev = str(device)
    try:
        sc = make_scenario(first.scenario, first.params)
        task = task_for(sc, first.observation, first.training_privacy, first.distortion)
        sets = [sc.sample(c.n_train, np.random.default_rng(c.train_seed)) for c in cases]
        learner = make_learner(first.learner, **first.learner_params)
        dev = str(resolve_device(device, learner.prefers_gpu(task)))
        t1 = time.perf_counter()
        if len(cases) == 1:
            fitted = [learner.fit(sets[0], task, list(first.budgets), seed=first.seed, device=dev)]
        else:
            fitted = learner.fit_many(sets, task, list(first.budgets), [c.seed for c in cases], device=dev)
        train = (time.perf_counter() - t1) / len(cases)
    except Exception as exc:  # noqa: BLE001 - recorded, the suite goes on
        took = (time.perf_counter() - t0) / len(cases)
        return [failure_rows(c, "failed", "fit: " + error_text(exc), started, took, dev) for c in cases]
    shared = (time.perf_counter() - t0) / len(cases)
    return [score_case(c, mechs, a, started, train, shared, dev) for c, mechs, a in zip(cases, fitted, artifacts)]


def score_case(case: Any, mechs: list[Any], artifacts: str | os.PathLike | None, started: str, train: float,
               shared: float, dev: str) -> list[Record]:
    """Save ``case``'s fitted mechanisms, score them in the evaluator process, one Record per budget.

    ``train`` and ``shared`` are the case's seconds of fitting and of everything before scoring.
    """
    t0 = time.perf_counter()
    n = len(case.budgets)
    with contextlib.ExitStack() as stack:
        where = Path(artifacts) if artifacts is not None else Path(stack.enter_context(temporary_directory()))
        saved = save_mechanisms(mechs, where)
        shared = (shared + time.perf_counter() - t0) / n
        try:
            scored = evaluate_saved(case, saved, defining_modules(mechs))
        except Exception as exc:  # noqa: BLE001 - the evaluator process died
            scored = [({"status": "failed", "error": "evaluate: " + error_text(exc)}, 0.0)] * n
    rows = []
    for budget, path, (fields, seconds) in zip(case.budgets, saved, scored):
        row = Record.base(case, budget)
        row.update(started_at=started, device=dev, train_time_s=train / n)
        row.update(fields)
        if artifacts is not None and isinstance(path, Path):
            row["mechanism_file"] = str(path)
        row.update(finished_at=now(), wall_time_s=shared + seconds)
        rows.append(row)
    return rows


def score_budget(case: Any, sc: Any, mech: Any, budget: float, evaluate: Callable, headline: Callable,
                 score: Callable, budget_kind: str | None = None) -> dict[str, Any]:
    """Evaluate ``mech`` on ``sc`` and score it at ``budget``: the measured and scored Record fields.

    Parameters
    ----------
    case : Case
        Supplies the observation, privacy metric, family, evaluators, ``n_eval`` and ``eval_seed``.
    sc : Scenario
    mech : Mechanism
        Fitted for ``budget``.
    budget : float
    evaluate, headline, score : callable
        :func:`privbench.bench.evaluators.evaluate`, :func:`~privbench.bench.evaluators.headline`,
        :func:`privbench.bench.scores.score` (passed in so a worker imports them once).
    budget_kind : str, optional
        The case's ``Learner.budget_kind()`` (None: :func:`~privbench.bench.artifacts.case_budget_kind`).

    Returns
    -------
    dict
        Columns of :class:`~privbench.bench.records.Record` (leakage, distortion, their
        evaluators, optimum, gap, overshoot, status, error, evaluations, mechanism_info).
    """
    from privbench.theory.optimum import curve, optimum

    from .beside import beside_fields
    from .evaluators import inconsistency
    from .optimum_memo import budget_optimum
    from .guarantee import guarantee_fields

    dist_name = getattr(case, "distortion", None)
    kind = case_budget_kind(case) if budget_kind is None else budget_kind
    evals = evaluate(mech, sc, case.observation, case.privacy, n_eval=case.n_eval, seed=case.eval_seed,
                     evaluators=case.evaluators, cross_check=False, distortion=dist_name)
    out = headline_fields(evals, case.privacy)
    out["mechanism_info"] = json.dumps(getattr(mech, "info", None) or {}, default=json_default)
    if out.get("status") == "failed":
        return out
    leak, dist = headline(evals, case.privacy), headline(evals, "distortion")
    out.update(guarantee_fields(sc, case.privacy, leak.value))
    if not sc.has_optimum:  # labelled data: a learned point with no optimum to score
        # a learner whose budget is no distortion budget (Learner.budget_kind, read from the case's learner
        # and parameters, not from the mechanism: e.g. the chi-square sanitizer's eta) cannot overshoot it
        over = max(0.0, float(dist.value) - float(budget)) if kind == "distortion" else 0.0
        return {**out, **no_bound_fields(over)}
    opt = budget_optimum(sc, budget, case.privacy, case.observation, case.family, dist_name)

    def optimum_at(d: float) -> float:
        return float(curve(sc, [max(float(d), 0.0)], case.privacy, case.observation, case.family,
                           distortion=dist_name)[0])

    def lower_at(d: float) -> float:  # certified bounds: the lower end of the sandwich
        low = optimum(sc, max(float(d), 0.0), case.privacy, case.observation, case.family,
                      distortion=dist_name).lower
        return float("nan") if low is None else float(low)

    s = score(leak, dist, budget, optimum_at, opt.bound_kind,
              lower_at=lower_at if opt.bound_kind == "certified" else None)
    at_budget, over = float(opt.value), float(s["overshoot"])
    if kind != "distortion":  # e.g. a latent KL: no distortion allowed, none overshot;
        at_budget, over = float(s["optimum_at_distortion"]), 0.0  # scored at the distortion reached
    out.update(optimum_at_budget=at_budget, bound_kind=opt.bound_kind,
               optimum_at_distortion=float(s["optimum_at_distortion"]), gap=float(s["gap"]),
               overshoot=over, below_bound=bool(s["below_bound"]),
               below_bound_reason=s.get("below_bound_reason"), status="ok", error=None)
    if not np.isnan(dist.value):
        out.update(beside_fields(sc, case.privacy, case.observation, budget, float(dist.value), opt, lower_at,
                                dist_name))
    reason = inconsistency(evals)
    if reason is not None:  # scored from the releases only; the mechanism's description failed its test
        out.update(status="inconsistent", error=reason)
    return out

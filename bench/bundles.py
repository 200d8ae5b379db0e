"""Bundles: a case's repetitions (and training-set sizes) trained together, for learners that batch
several fits into one network.

A learner that declares :attr:`~privbench.learners.Learner.batches_fits` trains several training sets
at once with :meth:`~privbench.learners.Learner.fit_many`, each set's members seeded, fed and drawn as
in its own fit (float32 rounding aside; sets of one :meth:`~privbench.learners.Learner.batch_group`
share a network).  The local backend hands such cases to a worker as one bundle (:func:`bundle_cases`):
the cases that differ only in their repetition and ``n_train`` (a sample-complexity study's 6 sizes x 5
repetitions: one bundle), with the same budgets left to run.  Every case keeps its own seeds, samples,
evaluation, claim and store part.
"""

from __future__ import annotations

from typing import Any

from .suites import Case, stable_hash


def batches_fits(case: Case, memo: dict[tuple[str, str], bool]) -> bool:
    """Whether ``case``'s learner (with its parameters) declares ``batches_fits`` (False if it cannot be
    built here: the worker then records the case's own error)."""
    key = (case.learner, case.learner_params_json)
    if key not in memo:
        from privbench.learners import make_learner

        try:
            memo[key] = bool(make_learner(case.learner, **case.learner_params).batches_fits)
        except Exception:  # noqa: BLE001 - the fit reports a bad learner, case by case
            memo[key] = False
    return memo[key]


def bundle_key(case: Case) -> str:
    """What the cases of a bundle share: everything but the repetition and the training-set size, and the
    budgets left to run."""
    ident: dict[str, Any] = {**case.identity(), "rep": None, "n_train": None, "budgets": list(case.budgets)}
    return stable_hash(ident)


#: cases per bundle at most: a sample-complexity study's 30 sets of 3 budgets in one ppan-linear network
#: took 8.1 CPU-s, one network of 5 sets per size 14.5 (tests/benchmarks/test_bench_fit_many.py, 600 steps)
MAX_BUNDLE = 32


def bundle_cases(cases: list[Case], max_size: int = MAX_BUNDLE) -> list[list[Case]]:
    """``cases`` grouped into bundles (lists of at most ``max_size`` cases, in the order of their first
    case); a case whose learner does not batch fits, or that runs a protocol, is a bundle of its own."""
    memo: dict[tuple[str, str], bool] = {}
    out: list[list[Case]] = []
    open_bundles: dict[str, list[Case]] = {}
    for case in cases:
        if case.protocol is not None or not batches_fits(case, memo):
            out.append([case])
            continue
        key = bundle_key(case)
        group = open_bundles.get(key)
        if group is None or len(group) >= max_size:
            group = []
            open_bundles[key] = group
            out.append(group)
        group.append(case)
    return out

"""The headline: which evaluation a case is scored on."""

from __future__ import annotations

import math

from privbench.datasets.errors import InputError

from .evaluation import Evaluation


def headline(evals: list[Evaluation], metric: str) -> Evaluation:
    """The evaluation a case is scored on.

    Evaluations of a side study (``detail["study"]`` set, e.g. the
    attacker-mismatch study's ``attacker-*``) are skipped: a case must score the
    same whether or not a suite asked for the study, so that cases with and
    without it stay comparable, and an extra attacker never moves a gap (the
    study reports its attackers next to the headline, not instead of it).

    An ``exact`` evaluation of ``metric`` if there is one (the first).  Otherwise
    the LARGEST credible value among the lower bounds and estimates: conservative,
    so that a learner never looks better because one estimator under-estimates
    (a larger MI, MAP accuracy or chi2 is more leakage; a larger distortion is
    worse).  Credible means a value that is not NaN, a stderr that is not NaN,
    and no ``detail["credible"] == False``.  Ties go to the earlier evaluation.

    Raises
    ------
    InputError
        No (credible) evaluation of ``metric``.
    """
    mine = [e for e in evals if e.metric == metric and not e.detail.get("study")]
    exact = [e for e in mine if e.kind == "exact" and not math.isnan(e.value)]
    if exact:
        return exact[0]
    ok = [e for e in mine if not math.isnan(e.value) and not math.isnan(e.stderr)
          and e.detail.get("credible", True) is not False]
    if not ok:
        raise InputError(f"no credible evaluation of metric={metric!r} "
                         f"(have: {', '.join(f'{e.metric}/{e.evaluator}' for e in evals) or 'none'})")
    best = ok[0]
    for e in ok[1:]:
        if e.value > best.value:
            best = e
    return best

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

    One exception, for the leakages whose zero means no leakage (``mi``, ``chi2``):
    an *estimate* (KSG; not a bound, so it errs either way) within
    :data:`SIGNIFICANT` of its stderrs of zero heads only where no credible lower
    bound is left.  The largest of several noisy values is biased upward, and such
    an estimate is no evidence of leakage: on an exactly independent 5-d release
    KSG at 10,000 rows read 0.0094 +- 0.0053 nats (ppan-fig4, D = 2.5, where every
    lower bound read at most 0.0016), and up to 0.0078 in 12 draws of an
    independent pair.  A lower bound always counts, however small.

    Raises
    ------
    InputError
        No (credible) evaluation of ``metric``.
    """
    mine = [e for e in evals if e.metric == metric and not e.detail.get("study")]
    exact = [e for e in mine if e.kind == "exact" and not math.isnan(e.value)]
    if exact:
        return exact[0]
    ok = [e for e in mine if credible(e)]
    if not ok:
        raise InputError(f"no credible evaluation of metric={metric!r} "
                         f"(have: {', '.join(f'{e.metric}/{e.evaluator}' for e in evals) or 'none'})")
    if metric in ZERO_IS_NONE and any(e.kind == "lower-bound" for e in ok):
        ok = [e for e in ok if not (e.kind == "estimate" and e.value < SIGNIFICANT * e.stderr)]
    best = ok[0]
    for e in ok[1:]:
        if e.value > best.value:
            best = e
    return best


#: An estimate of a leakage in :data:`ZERO_IS_NONE` heads only when it is at least this many of its
#: stderrs above zero (or no credible lower bound is left): see :func:`headline`.
SIGNIFICANT = 2.0
ZERO_IS_NONE = frozenset({"mi", "chi2"})


#: Credibility: a sample value is absurd when its stderr exceeds ``rel_stderr`` of its size plus
#: ``abs_stderr`` (relative, so a legitimately large leakage with a proportionate stderr stays), or when
#: it lies outside the metric's range by more than ``sigmas`` stderrs plus ``slack`` (an MI below 0, a
#: MAP accuracy or an overlap outside [0, 1]).
CREDIBLE = {"rel_stderr": 0.25, "abs_stderr": 0.05, "sigmas": 3.0, "slack": 0.02}
#: Agreement: the headline is flagged when it exceeds every other credible evaluator by more than
#: ``sigmas`` combined stderrs plus ``tolerance[metric]`` plus ``relative`` of its value (KSG's
#: downward bias grows with the leakage: about -0.6 of 3.1 nats in 5 dimensions) (:func:`spread`).
AGREEMENT = {"sigmas": 3.0, "relative": 0.1, "tolerance": {"mi": 0.05, "chi2": 0.05, "map": 0.02, "distortion": 0.05}}
RANGES = {"mi": (0.0, math.inf), "chi2": (0.0, math.inf), "map": (0.0, 1.0), "distortion": (0.0, math.inf)}


def credible(e: Evaluation) -> bool:
    """Whether a lower bound or estimate may be the headline.

    Not credible: a NaN value or stderr; ``detail["credible"] == False`` (e.g. training produced NaN);
    a stderr above ``0.25 |value| + 0.05`` (an estimate that says nothing, e.g. -2e7 +- 2e7 from an
    attacker whose Gaussian head met a heavy-tailed S); a value outside the metric's range by more
    than ``3 stderr + 0.02`` (an MI below 0, a MAP accuracy above 1).  Exact evaluations are always
    credible unless NaN.  ``inf`` with stderr 0 (a release that determines S) stays credible.
    """
    if math.isnan(e.value) or math.isnan(e.stderr) or e.detail.get("credible", True) is False:
        return False
    if e.kind == "exact":
        return True
    c = CREDIBLE
    if math.isinf(e.value):
        return e.value > 0 and e.stderr == 0.0
    if e.stderr > c["rel_stderr"] * abs(e.value) + c["abs_stderr"]:
        return False
    lo, hi = RANGES.get(e.metric, (-math.inf, math.inf))
    tol = c["sigmas"] * e.stderr + c["slack"]
    return lo - tol <= e.value <= hi + tol


#: Evaluators that look at the same features count as one when corroborating a headline.
FAMILIES = {"fine-scale-binned": "fine-scale", "fine-scale-attacker": "fine-scale", "fine-scale-split": "fine-scale",
            "fresh-classifier-shared": "fresh-classifier"}
#: Families of lower bounds that read features no other evaluator reads (digits of Z below its spread): their
#: lead over every other evaluator is a finding about the release (a hidden channel), flagged for a look.
HIDDEN_CHANNEL = frozenset({"fine-scale"})


def family(evaluator: str) -> str:
    """The family of an evaluator (:data:`FAMILIES`; else its own name)."""
    return FAMILIES.get(evaluator, evaluator)


def spread(evals: list[Evaluation], metric: str) -> tuple[float, bool]:
    """The spread between the credible sample evaluators of ``metric`` and whether they disagree.

    Returns (max - min of their values, flag); (NaN, False) where the headline is exact or fewer than
    two evaluators are credible.  Lower bounds of different strength are expected to differ (the
    Gaussian approximation of a spiral release reads far below an MLP; KSG and k-NN under-read a
    5-dimensional spiral that the post-hoc MLP follows), so the spread alone is no flag.

    The flag marks a headline (the largest credible value, :func:`headline`) that may be wrong or hides
    something, i.e. one that exceeds the best credible evaluator of another family (:data:`FAMILIES`)
    by more than 3 combined stderrs plus ``AGREEMENT["tolerance"][metric]`` plus 10% of its value, AND

    - is an estimate (KSG, a plug-in), not a bound: an estimate has no direction, so a lead that no
      lower bound corroborates may be an over-read; or
    - is a lower bound of a :data:`HIDDEN_CHANNEL` family (the fine-scale attackers): leakage that only
      the digits of Z show (S hidden in low-order bits) is real, and the row is flagged for a look; or
    - exceeds a credible upper bound of ``metric`` by that margin (a lower bound above an upper bound
      is a bug in one of them).

    A held-out lower bound of a general-purpose attacker that leads the others is NOT flagged: its
    expectation is at most the truth whatever the others read, so its lead only says they under-read.
    Study evaluations are left out, as in :func:`headline`.
    """
    mine = [e for e in evals if e.metric == metric and not e.detail.get("study")]
    if any(e.kind == "exact" and not math.isnan(e.value) for e in mine):
        return float("nan"), False
    ok = sorted((e for e in mine if credible(e) and math.isfinite(e.value)), key=lambda e: e.value)
    if len(ok) < 2:
        return float("nan"), False
    top = ok[-1]
    width = top.value - ok[0].value
    lows = [e for e in ok if e.kind == "lower-bound"]
    best_low = lows[-1] if lows else None
    if best_low is not None and any(beyond(best_low, e, metric) for e in ok if e.kind == "upper-bound"):
        return width, True
    others = [e for e in ok[:-1] if family(e.evaluator) != family(top.evaluator)]
    if not others or (top.kind == "lower-bound" and family(top.evaluator) not in HIDDEN_CHANNEL):
        return width, False
    return width, beyond(top, others[-1], metric)


def beyond(high: Evaluation, low: Evaluation, metric: str) -> bool:
    """Whether ``high`` exceeds ``low`` by more than the :data:`AGREEMENT` margin."""
    a = AGREEMENT
    margin = (a["sigmas"] * math.hypot(high.stderr, low.stderr) + a["tolerance"].get(metric, 0.05)
              + a["relative"] * abs(high.value))
    return high.value - low.value > margin

"""Scores of learned points against the optimum: gap, overshoot, below-bound flags, areas, aggregates.

Sign conventions: every privacy metric here (I(S;Z) in nats, MAP accuracy,
chi2) is "larger = more leakage" and every optimum curve is non-increasing in
the distortion.  ``gap = L - optimum(d)`` is measured at the distortion d the
mechanism ACHIEVED (a learner that under-uses its budget is not rewarded) and is
>= 0 for a correct evaluation up to statistical tolerance.

Stored ``bound_kind`` values: ``exact`` (the optimum over all mechanisms),
``family`` (the best of a mechanism family), ``certified`` (the optimum over all
mechanisms lies between a certified lower end and an achievable upper end: the
gap is against the achievable end, the below-bound flag against the lower end),
and ``none`` (:data:`NO_BOUND`): a
scenario with no known optimum (``privbench.datasets.labelled``), scored without
:func:`score`: optimum and gap NaN, overshoot computed, never below the bound.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import BOUND_KINDS

from .stats import t_interval

REASON_EXACT = "evaluator or bug: below the exact optimum"
REASON_FAMILY = "below the family bound (a learner outside the family may legitimately beat it)"
REASON_CERTIFIED = "evaluator or bug: below the certified lower end of the optimum"
REASONS = {"exact": REASON_EXACT, "family": REASON_FAMILY, "certified": REASON_CERTIFIED}
N_SIGMA = 3.0
ABS_TOL = 1e-6
SOLVER_TOL = 1e-6


def _field(ev: Any, name: str) -> float:
    if isinstance(ev, dict):
        return float(ev[name])
    return float(getattr(ev, name))


def score(leakage: Any, distortion: Any, budget: float, optimum_at: Callable[[float], float],
          bound_kind: str, *, solver_tol: float = SOLVER_TOL,
          lower_at: Callable[[float], float] | None = None) -> dict[str, Any]:
    """Score one learned point against the optimal tradeoff.

    Parameters
    ----------
    leakage, distortion : Evaluation (or dict with ``value`` and ``stderr``)
        The headline privacy and distortion evaluations (see
        :func:`privbench.bench.evaluators.headline`).
    budget : float
        The distortion budget the learner was given.
    optimum_at : callable
        d -> optimal leakage at distortion d (e.g. ``lambda d:
        theory.curve(sc, [d], ...)[0]``); non-increasing in d.
    bound_kind : {"exact", "family", "certified"}
        Whether ``optimum_at`` is the optimum over all mechanisms, the best of a
        mechanism family, or the achievable end of a certified sandwich.
    solver_tol : float
        Accuracy of the optimum itself (relative to max(1, |optimum|)).
    lower_at : callable, optional
        ``certified`` bounds (required there): d -> the certified lower end of the
        optimum at d.  The gap is against ``optimum_at`` (the achievable end), the
        below-bound test against ``lower_at``.

    Returns
    -------
    dict
        ``optimum_at_distortion`` = optimum(d); ``gap`` = L - optimum(d) (0.0 when
        both are +inf, NaN when L is NaN); ``overshoot`` = max(0, d - budget);
        ``below_bound`` and ``below_bound_reason``.

    Notes
    -----
    The point is flagged ``below_bound`` when

        L + tol < optimum(d + 3 stderr_d),   tol = 3 stderr_L + 1e-6 + solver_tol max(1, |opt|),

    i.e. it is below the optimum beyond its statistical tolerance even when the
    distortion is given its most lenient value within 3 standard errors (the
    optimum is non-increasing in d).  Exact evaluations have stderr 0.  For
    ``exact`` bounds that is impossible, so the reason is :data:`REASON_EXACT`
    (an evaluator failure or a bug, never a win); for ``family`` bounds a
    learner outside the family may legitimately beat it: :data:`REASON_FAMILY`.
    """
    if bound_kind not in BOUND_KINDS:
        raise InputError(f"bound_kind={bound_kind!r} is unknown (allowed: {', '.join(BOUND_KINDS)})")
    if not callable(optimum_at):
        raise InputError("optimum_at must be a callable d -> optimal leakage at distortion d")
    if bound_kind == "certified" and not callable(lower_at):
        raise InputError("bound_kind='certified' needs lower_at, a callable d -> the lower end at distortion d")
    floor_at = lower_at if bound_kind == "certified" else optimum_at
    L, se_l = _field(leakage, "value"), _field(leakage, "stderr")
    d, se_d = _field(distortion, "value"), _field(distortion, "stderr")
    budget = float(budget)
    d_eval = max(d, 0.0)
    opt = float(optimum_at(d_eval)) if not math.isnan(d) else math.nan
    if math.isinf(L) and math.isinf(opt) and L > 0 and opt > 0:
        gap = 0.0
    else:
        gap = L - opt
    overshoot = max(0.0, d - budget) if not math.isnan(d) else math.nan
    below, reason = False, None
    if not (math.isnan(L) or math.isnan(opt)):
        se_d = 0.0 if math.isnan(se_d) else se_d
        if floor_at is optimum_at and se_d == 0:
            lenient = opt
        else:
            lenient = float(floor_at(d_eval + N_SIGMA * se_d))  # type: ignore[misc]
        tol = N_SIGMA * (0.0 if math.isnan(se_l) else se_l) + ABS_TOL
        if math.isfinite(lenient):
            tol += solver_tol * max(1.0, abs(lenient))
        if L + tol < lenient:
            below, reason = True, REASONS[bound_kind]
    return {"optimum_at_distortion": opt, "gap": gap, "overshoot": overshoot,
            "below_bound": below, "below_bound_reason": reason}


def _call_curve(optimum_fn: Callable[..., Any], xs: np.ndarray) -> np.ndarray:
    """optimum_fn on an array if it is vectorised, else one call per point."""
    try:
        out = np.asarray(optimum_fn(xs), dtype=float)
        if out.shape == xs.shape:
            return out
    except Exception:  # noqa: BLE001 - a scalar-only callable: fall back to a loop
        pass
    return np.array([float(optimum_fn(float(x))) for x in xs])


def area_between(distortions: Sequence[float], leakages: Sequence[float], optimum_fn: Callable[..., Any],
                 *, n_grid: int = 129) -> float:
    """Signed area between the learned curve and the optimum over the learned distortion range.

    The learned curve is the piecewise-linear interpolation of the points sorted
    by distortion (leakages at equal distortions averaged); the area is
    integral_{d_min}^{d_max} (learned(d) - optimum(d)) dd by the trapezoid rule
    on the learned distortions plus ``n_grid`` evenly spaced points (so the
    convex optimum curve is integrated finely, not only at the learned points).
    Positive: the learner leaks more than optimal.  Units: leakage x distortion.

    Parameters
    ----------
    distortions, leakages : sequence of float, shape (k,)
    optimum_fn : callable
        d -> optimal leakage; vectorised (array in, same-shape array out) or
        scalar (then called once per grid point).

    Returns
    -------
    float
        0.0 for fewer than two distinct distortions; NaN if any input is NaN;
        inf if a leakage or the optimum is infinite in the range.
    """
    d = np.asarray(distortions, dtype=float).ravel()
    lk = np.asarray(leakages, dtype=float).ravel()
    if d.shape != lk.shape:
        raise InputError(f"distortions ({d.size}) and leakages ({lk.size}) must have the same length")
    if d.size == 0:
        raise InputError("area_between needs at least one learned point")
    if np.any(np.isnan(d)) or np.any(np.isnan(lk)):
        return math.nan
    xs, inv = np.unique(d, return_inverse=True)
    if xs.size < 2:
        return 0.0
    if not np.all(np.isfinite(lk)):
        return math.inf if np.any(lk == math.inf) else -math.inf
    ys = np.bincount(inv, weights=lk) / np.bincount(inv)
    grid = np.union1d(xs, np.linspace(xs[0], xs[-1], n_grid))
    with np.errstate(invalid="ignore"):
        diff = np.interp(grid, xs, ys) - _call_curve(optimum_fn, grid)
    if np.any(np.isnan(diff)):
        return math.nan
    if np.any(np.isinf(diff)):
        return math.inf if np.all(diff[np.isinf(diff)] > 0) else -math.inf
    return float(np.trapezoid(diff, grid))


def aggregate(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95% Student-t confidence interval over seeds.

    NaN values (failed cases) are dropped first.  Returns (mean, lo95, hi95)
    with mean +- t_{0.975, n-1} s / sqrt(n).  With one value the interval is
    unknown: (x, nan, nan).  With none: (nan, nan, nan).  If any value is
    infinite the mean is infinite (or NaN for +inf and -inf) and the bounds NaN.
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (math.nan, math.nan, math.nan)
    if not np.all(np.isfinite(v)):
        with np.errstate(invalid="ignore"):
            return (float(v.sum()), math.nan, math.nan)
    return t_interval(v)


def strict_gap(leakage: Any, optimum_at_distortion: Any, optimum_at_budget: Any) -> Any:
    """The budget-respecting gap: leakage minus the optimum at max(distortion, budget).

    The optimal curve falls with the budget, so that optimum is the smaller of the optimum at the
    achieved distortion and at the budget: a point that under-uses its budget (the identity
    release, d = 0) is measured against what the budget allows, not against its own distortion.
    Works elementwise on arrays and Series; a NaN optimum on one side is skipped.
    """
    return leakage - np.fmin(optimum_at_distortion, optimum_at_budget)  # NaN-skipping, as pandas min


def overshoot_tolerance(r: Any) -> float:
    """Allowed overshoot of a stored row ``r`` (budget, n_train, distortion_stderr): 1e-3 or 1% of the budget, plus 3 standard errors of the measured
    distortion, plus 3 standard errors of the learner's own estimate of its distortion from
    n_train samples (variance taken as 2 b max(1, b): Hamming losses have variance <= b,
    Gaussian squared errors 2 b^2)."""
    se = r.get("distortion_stderr")
    se = float(se) if isinstance(se, (int, float)) and math.isfinite(se) else 0.0
    b, n = float(r["budget"]), max(int(r["n_train"]), 1)
    return max(1e-3, 0.01 * b) + 3 * se + 3 * math.sqrt(2 * b * max(1.0, b) / n)


def set_flag(v: Any) -> bool:
    """A stored boolean flag: True only for a true boolean (None and NaN, a missing value, are not set)."""
    if v is None or isinstance(v, float):
        return False
    try:
        return bool(v)
    except TypeError:  # pandas' NA
        return False


def below_bound_fails(below_bound: Any, bound_kind: Any) -> bool:
    """Whether a stored row's ``below_bound`` is an evaluator failure: below an exact or certified
    bound, never below a family bound (a learner outside the family may legitimately beat it,
    :data:`REASON_FAMILY`). The one rule for the run summary and the report's marks."""
    return set_flag(below_bound) and bound_kind != "family"

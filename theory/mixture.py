"""Optimal Gaussian noise-adding mechanisms for the binary Gaussian mixture (GAP §4).

Model (:class:`~privbench.datasets.BinaryGMM`): S ~ Bern(prior),
U | S=0 ~ N(-mu, sigma0^2), U | S=1 ~ N(mu, sigma1^2).  Privacy is the accuracy
of the Bayes-optimal MAP adversary guessing S from Z, distortion E(Z - U)^2 <= D.
Mechanisms have the form of GAP §4 (GAP's Y, X, X-hat are our S, U, Z)::

    Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N,   N ~ N(0, 1)

so Z | S=0 ~ N(-mu + beta0, sigma0^2 + gamma0^2), Z | S=1 ~ N(mu - beta1,
sigma1^2 + gamma1^2) and the distortion is
(1-prior)(beta0^2 + gamma0^2) + prior (beta1^2 + gamma1^2).

Families (each value is the exact MAP accuracy of the returned mechanism):

``additive``     PDI, Z = U + beta + gamma N (GAP Theorem 2): beta = 0, gamma = sqrt(D).
                 Also optimal for sigma0 != sigma1, because more common noise is a
                 garbling of less.
``shift``        gamma0 = gamma1 = 0, beta0, beta1 >= 0 (GAP Theorem 3).  Eq (40) is the
                 largest achievable total shift b_max = sqrt(D / (prior (1-prior)));
                 it is optimal only while b_max <= 2 mu: beyond that it over-shifts and
                 the accuracy rises again.  The family optimum is the total shift
                 min(b_max, 2 mu), for any variances (see below).
``shift-noise``  common gamma (GAP Theorem 4).  Optimal split b0 = prior b,
                 b1 = (1-prior) b, gamma^2 = D - prior (1-prior) b^2; for equal variances
                 (41) has the closed form b = min(b_max, 2 mu, (D + sigma^2) / (2 mu
                 prior (1-prior))) (sign of the derivative of (42)); otherwise a 1-d search.
``general``      all four parameters (GAP §4.1.2): grid search over (eps, w0, w1) in
                 [0, 1]^3 of eq (44), CORRECTED (see :func:`general_parameters`).

Two facts used throughout (both checked numerically in the tests): the MAP
error ∫ min(prior f1, (1-prior) f0) of two symmetric unimodal densities is
non-increasing in the distance of their centres (layer-cake: each level set is an
intersection of two intervals), so the accuracy is non-decreasing in |mean
difference|; and adding common independent noise never increases accuracy
(data processing).  Hence shifts beyond the point where the means meet never
help, beta >= 0 loses nothing, and optima lie on the distortion boundary.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr

from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import MIXTURE_FAMILIES as FAMILIES
from privbench.datasets.scenarios import BinaryGMM

from .base import Optimum, check_budget, check_budgets


ArrayLike = Any


# --------------------------------------------------------------------------
# exact MAP accuracy
# --------------------------------------------------------------------------


def map_accuracy_two_gaussians(
    prior: ArrayLike, m0: ArrayLike, s0: ArrayLike, m1: ArrayLike, s1: ArrayLike
) -> np.ndarray:
    """Exact accuracy of the MAP test between prior N(m1, s1^2) and (1-prior) N(m0, s0^2).

    Computes ∫ max(prior N(x; m1, s1^2), (1-prior) N(x; m0, s0^2)) dx by solving the
    quadratic log-likelihood-ratio equation for the crossing points and summing
    normal-CDF masses, so unequal variances (two crossings) are exact.  Equal
    variances give GAP eq (37).

    Parameters
    ----------
    prior : array_like
        P(S = 1), in [0, 1].
    m0, s0, m1, s1 : array_like
        Means and standard deviations (> 0) of the two classes.  All five
        arguments are broadcast together.

    Returns
    -------
    ndarray
        Accuracy, of the broadcast shape (a 0-d array for scalar inputs).
    """
    p, m0, s0, m1, s1 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (prior, m0, s0, m1, s1)))
    if not (np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))):
        raise InputError("prior must lie in [0, 1] (got a value outside or NaN)")
    for name, s in (("s0", s0), ("s1", s1)):
        bad = ~(np.isfinite(s) & (s > 0))
        if np.any(bad):
            raise InputError(f"{name}={float(s[bad].flat[0])!r} must be a finite number > 0")
    if not (np.all(np.isfinite(m0)) and np.all(np.isfinite(m1))):
        raise InputError("means m0, m1 must be finite numbers")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # R1 = {x : g(x) > 0}, g = log(prior f1) - log((1-prior) f0) = a x^2 + b x + c
        a = 0.5 / s0**2 - 0.5 / s1**2
        b = m1 / s1**2 - m0 / s0**2
        c = 0.5 * (m0 / s0) ** 2 - 0.5 * (m1 / s1) ** 2 + np.log(p * s0) - np.log1p(-p) - np.log(s1)
        disc = b * b - 4.0 * a * c
        # Stable roots: q = -(b + sign(b) sqrt(disc)) / 2, roots q/a and c/q.
        sq = np.sqrt(np.maximum(disc, 0.0))
        q = -0.5 * (b + np.where(b >= 0, sq, -sq))
        r_a = np.where(a != 0, q / a, np.where(b > 0, np.inf, -np.inf))  # far root (inf if linear)
        r_b = np.where(q != 0, c / q, 0.0)
        lo, hi = np.minimum(r_a, r_b), np.maximum(r_a, r_b)
        inside = a < 0  # R1 = (lo, hi) if a < 0, its complement if a > 0
        # Linear case (a == 0): R1 = (t, inf) for b > 0, (-inf, t) for b < 0, t = -c/b;
        # the stable roots already give (t, +inf) / (-inf, t) there, so it is "inside".
        inside = inside | (a == 0)
        # No crossing (or a == b == 0): R1 is the whole line or empty.
        flat = ((a != 0) & (disc <= 0)) | ((a == 0) & (b == 0))
        whole = np.where(a != 0, a > 0, c > 0)
        lo = np.where(flat, np.where(whole, -np.inf, 0.0), lo)
        hi = np.where(flat, np.where(whole, np.inf, 0.0), hi)
        inside = np.where(flat, True, inside)
        mass1 = ndtr((hi - m1) / s1) - ndtr((lo - m1) / s1)  # P1((lo, hi))
        mass0 = ndtr((hi - m0) / s0) - ndtr((lo - m0) / s0)
        acc_in = p * mass1 + (1 - p) * (1 - mass0)
        acc_out = p * (1 - mass1) + (1 - p) * mass0
        acc = np.where(inside, acc_in, acc_out)
        acc = np.where((p == 0) | (p == 1), 1.0, acc)
    return np.clip(acc, np.maximum(p, 1 - p), 1.0)


def mechanism_accuracy(
    scenario: BinaryGMM, beta0: ArrayLike, beta1: ArrayLike, gamma0: ArrayLike, gamma1: ArrayLike
) -> np.ndarray:
    """Exact MAP accuracy of the mechanism (beta0, beta1, gamma0, gamma1); broadcast shape."""
    sc = _check_scenario(scenario)
    b0, b1, g0, g1 = (np.asarray(x, dtype=float) for x in (beta0, beta1, gamma0, gamma1))
    return map_accuracy_two_gaussians(
        sc.prior, -sc.mu + b0, np.sqrt(sc.sigma0**2 + g0**2), sc.mu - b1, np.sqrt(sc.sigma1**2 + g1**2)
    )


def mechanism_distortion(
    scenario: BinaryGMM, beta0: ArrayLike, beta1: ArrayLike, gamma0: ArrayLike, gamma1: ArrayLike
) -> np.ndarray:
    """Exact E(Z - U)^2 = (1-prior)(beta0^2 + gamma0^2) + prior (beta1^2 + gamma1^2)."""
    sc = _check_scenario(scenario)
    b0, b1, g0, g1 = (np.asarray(x, dtype=float) for x in (beta0, beta1, gamma0, gamma1))
    return (1 - sc.prior) * (b0**2 + g0**2) + sc.prior * (b1**2 + g1**2)


def general_parameters(
    budget: ArrayLike, prior: float, eps: ArrayLike, w0: ArrayLike, w1: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """GAP eq (44), corrected: (beta0, beta1, gamma0, gamma1) on the distortion boundary.

    As printed, (43)/(44) put the rational factors (1-eps^2)/(1+eps^2),
    2 eps/(1+eps^2), (1-w^2)/(1+w^2), 2 w/(1+w^2) *inside* the square roots; then
    (1-prior) e0^2 + prior e1^2 = D (1 + 4 eps - eps^2) / (1 + eps^2) != D (e.g.
    2.2 D at eps = 0.5) and the parameters leave the ellipse.  The rational
    parametrisation of the circle needs them outside::

        e1 = sqrt(D / prior) (1 - eps^2) / (1 + eps^2),  e0 = sqrt(D / (1-prior)) 2 eps / (1 + eps^2)
        beta_i = e_i (1 - w_i^2) / (1 + w_i^2),           gamma_i = e_i 2 w_i / (1 + w_i^2)

    Parameters
    ----------
    budget : array_like
        D >= 0.
    prior : float
    eps, w0, w1 : array_like
        In [0, 1]; broadcast together with ``budget``.

    Returns
    -------
    beta0, beta1, gamma0, gamma1 : ndarray
        Broadcast shape; all >= 0 and (1-prior)(beta0^2+gamma0^2) + prior(beta1^2+gamma1^2) = D.
    """
    d, eps, w0, w1 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (budget, eps, w0, w1)))
    e1 = np.sqrt(d / prior) * (1 - eps**2) / (1 + eps**2)
    e0 = np.sqrt(d / (1 - prior)) * 2 * eps / (1 + eps**2)
    return (
        e0 * (1 - w0**2) / (1 + w0**2),
        e1 * (1 - w1**2) / (1 + w1**2),
        e0 * 2 * w0 / (1 + w0**2),
        e1 * 2 * w1 / (1 + w1**2),
    )


def _general_coordinates(
    sc: BinaryGMM, budget: float, b0: float, b1: float, g0: float, g1: float
) -> np.ndarray:
    """Inverse of :func:`general_parameters` for a mechanism on the boundary (budget > 0)."""
    theta = np.arctan2(np.hypot(b0, g0) * np.sqrt(1 - sc.prior), np.hypot(b1, g1) * np.sqrt(sc.prior))
    return np.tan(0.5 * np.array([theta, np.arctan2(g0, b0), np.arctan2(g1, b1)]))


# --------------------------------------------------------------------------
# families
# --------------------------------------------------------------------------


def _check_scenario(scenario: Any) -> BinaryGMM:
    if not isinstance(scenario, BinaryGMM):
        raise InputError(f"scenario={scenario!r} is not a binary-gmm scenario (BinaryGMM)")
    return scenario


def _check_family(family: Any) -> str:
    if family not in FAMILIES:
        raise InputError(f"family={family!r} is unknown (allowed: {', '.join(FAMILIES)})")
    return family


def _identical_budget(sc: BinaryGMM) -> float:
    """Least distortion making Z|S=0 and Z|S=1 identical (means meet, variances equalised)."""
    p = sc.prior
    v0, v1 = sc.sigma0**2, sc.sigma1**2
    return p * (1 - p) * (2 * sc.mu) ** 2 + (1 - p) * max(v1 - v0, 0.0) + p * max(v0 - v1, 0.0)


def _split(sc: BinaryGMM, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cheapest (beta0, beta1) with beta0 + beta1 = b: (prior b, (1-prior) b), cost prior(1-prior) b^2."""
    return sc.prior * b, (1 - sc.prior) * b


def _additive(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    g = np.sqrt(d)
    z = np.zeros_like(d)
    return {"beta0": z, "beta1": z, "gamma0": g, "gamma1": g}


def _shift(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    b = np.minimum(np.sqrt(d / (sc.prior * (1 - sc.prior))), 2 * sc.mu)
    b0, b1 = _split(sc, b)
    z = np.zeros_like(d)
    return {"beta0": b0, "beta1": b1, "gamma0": z, "gamma1": z}


def _shift_noise(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    c = sc.prior * (1 - sc.prior)
    b_hi = np.minimum(np.sqrt(d / c), 2 * sc.mu)
    if sc.sigma0 == sc.sigma1:
        # (42): d/db (2mu - b)/sqrt(D + s^2 - c b^2) has the sign of 2 mu c b - (D + s^2).
        with np.errstate(divide="ignore"):
            b_star = (d + sc.sigma0**2) / (2 * sc.mu * c)
        b = np.minimum(b_hi, b_star)
    else:

        def acc(bb: np.ndarray, rows: np.ndarray) -> np.ndarray:
            g = np.sqrt(np.maximum(d[rows] - c * bb**2, 0.0))
            b0, b1 = _split(sc, bb)
            return mechanism_accuracy(sc, b0, b1, g, g)

        b = _minimise_1d(acc, np.zeros_like(d), b_hi)
    g = np.sqrt(np.maximum(d - c * b**2, 0.0))
    b0, b1 = _split(sc, b)
    return {"beta0": b0, "beta1": b1, "gamma0": g, "gamma1": g}


def _minimise_1d(fun: Any, lo: np.ndarray, hi: np.ndarray, n_grid: int = 17, n_iter: int = 40) -> np.ndarray:
    """Row-wise min of fun(x, rows) over [lo, hi]: grid, then golden section around the best point."""
    k = lo.size
    rows = np.arange(k)
    t = np.linspace(0.0, 1.0, n_grid)
    xs = lo[:, None] + (hi - lo)[:, None] * t[None, :]  # (k, n_grid)
    fs = fun(xs.ravel(), np.repeat(rows, n_grid)).reshape(k, n_grid)
    i = np.argmin(fs, axis=1)
    best_x, best_f = xs[rows, i], fs[rows, i]
    a = xs[rows, np.maximum(i - 1, 0)]
    bb = xs[rows, np.minimum(i + 1, n_grid - 1)]
    r = (np.sqrt(5.0) - 1) / 2
    x1, x2 = bb - r * (bb - a), a + r * (bb - a)
    f1, f2 = fun(x1, rows), fun(x2, rows)
    for _ in range(n_iter):
        left = f1 < f2
        bb = np.where(left, x2, bb)
        a = np.where(left, a, x1)
        x_new = np.where(left, bb - r * (bb - a), a + r * (bb - a))
        f_new = fun(x_new, rows)
        x2, f2, x1, f1 = (
            np.where(left, x1, x_new), np.where(left, f1, f_new),
            np.where(left, x_new, x2), np.where(left, f_new, f2),
        )
    for x, f in ((x1, f1), (x2, f2)):
        better = f < best_f
        best_x, best_f = np.where(better, x, best_x), np.where(better, f, best_f)
    return best_x


def _general(
    sc: BinaryGMM, budget: float, n_coarse: int = 41, n_seeds: int = 6, final_step: float = 1e-4
) -> tuple[dict[str, float], dict[str, Any]]:
    """Grid search of eq (44) (corrected) over (eps, w0, w1) in [0, 1]^3, refined to ``final_step``.

    A coarse n_coarse^3 grid; then the best ``n_seeds`` mutually distant grid points
    plus the shift-noise and additive optima (members of the family, so general is never
    worse than either) are refined by a pattern search on a local 7^3 grid: at each step
    size the centre moves to the best grid point until none is better, then the step
    shrinks by 3, down to <= final_step.  If the budget lets the two classes be made
    identical, the floor max(prior, 1-prior) is returned with that mechanism.
    """
    if budget >= _identical_budget(sc):  # accuracy max(prior, 1-prior) is a lower bound for all Z
        g0 = np.sqrt(max(sc.sigma1**2 - sc.sigma0**2, 0.0))
        g1 = np.sqrt(max(sc.sigma0**2 - sc.sigma1**2, 0.0))
        b0, b1 = _split(sc, np.array(2 * sc.mu))
        mech = {"beta0": float(b0), "beta1": float(b1), "gamma0": float(g0), "gamma1": float(g1)}
        return mech, {"reason": "classes made identical", "identical_budget": _identical_budget(sc)}

    def evaluate(pts: np.ndarray) -> np.ndarray:
        return mechanism_accuracy(sc, *general_parameters(budget, sc.prior, pts[:, 0], pts[:, 1], pts[:, 2]))

    t = np.linspace(0.0, 1.0, n_coarse)
    grid = np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1).reshape(-1, 3)
    vals = evaluate(grid)
    h = t[1] - t[0]
    seeds: list[np.ndarray] = []
    for j in np.argsort(vals, kind="stable"):
        if all(np.max(np.abs(grid[j] - s)) > 2.5 * h for s in seeds):
            seeds.append(grid[j])
            if len(seeds) == n_seeds:
                break
    for fam in (_shift_noise, _additive):
        m = {k: float(v[0]) for k, v in fam(sc, np.array([budget])).items()}
        seeds.append(_general_coordinates(sc, budget, m["beta0"], m["beta1"], m["gamma0"], m["gamma1"]))
    centres = np.array(seeds)  # (n, 3)
    offsets = np.stack(np.meshgrid(*(np.arange(-3, 4),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    n_eval = vals.size
    step = h
    while step > final_step:
        step = step / 3
        for _ in range(50):  # pattern search: move at this step until no neighbour is better
            pts = np.clip(centres[:, None, :] + step * offsets[None, :, :], 0.0, 1.0)  # (n, 343, 3)
            v = evaluate(pts.reshape(-1, 3)).reshape(pts.shape[:2])
            n_eval += v.size
            i = np.argmin(v, axis=1)  # offsets[len // 2] is the centre (0, 0, 0)
            moved = v[np.arange(len(centres)), i] < v[:, len(offsets) // 2]
            centres = np.where(moved[:, None], pts[np.arange(len(centres)), i], centres)
            if not np.any(moved):
                break
    v = evaluate(centres)
    best = centres[int(np.argmin(v))]
    params = general_parameters(budget, sc.prior, *best)
    mech = dict(zip(("beta0", "beta1", "gamma0", "gamma1"), (float(x) for x in params)))
    cert = {"eps": float(best[0]), "w0": float(best[1]), "w1": float(best[2]),
            "final_step": float(step), "evaluations": int(n_eval)}
    return mech, cert


_METHODS = {
    "additive": "closed form, GAP Theorem 2 (beta=0, gamma=sqrt(D)), exact MAP accuracy",
    "shift": "closed form, GAP Theorem 3 / eq (40) capped at total shift 2 mu, exact MAP accuracy",
    "shift-noise": "GAP Theorem 4: closed form of (41) for equal variances, else 1-d search; exact MAP",
    "general": "grid search over (eps, w0, w1), eq (44) corrected, refined to 1e-4; exact MAP accuracy",
}
_CLOSED = {"additive": _additive, "shift": _shift, "shift-noise": _shift_noise}


def mixture_optimum(scenario: BinaryGMM, budget: float, family: str) -> Optimum:
    """Best mechanism of ``family`` at distortion budget ``budget`` (MAP privacy).

    Parameters
    ----------
    scenario : BinaryGMM
    budget : float
        D >= 0 (mean squared error).
    family : {"additive", "shift", "shift-noise", "general"}

    Returns
    -------
    Optimum
        ``bound_kind="family"``; ``value`` is the exact MAP accuracy of
        ``mechanism = {"beta0", "beta1", "gamma0", "gamma1"}``.
    """
    sc = _check_scenario(scenario)
    family = _check_family(family)
    d = check_budget(budget)
    cert: dict[str, Any] | None = None
    if family == "general":
        mech, cert = _general(sc, d)
    else:
        mech = {k: float(v[0]) for k, v in _CLOSED[family](sc, np.array([d])).items()}
    value = float(mechanism_accuracy(sc, **mech))
    cert = {**(cert or {}), "distortion": float(mechanism_distortion(sc, **mech))}
    return Optimum(value, _METHODS[family], "family", mech, family, cert)


def mixture_curve(scenario: BinaryGMM, budgets: ArrayLike, family: str) -> np.ndarray:
    """Family-optimal MAP accuracy at each budget, shape (k,) for k budgets.

    Vectorised for ``additive``, ``shift`` and ``shift-noise``; ``general`` loops.
    """
    sc = _check_scenario(scenario)
    family = _check_family(family)
    d = check_budgets(budgets)
    if family == "general":
        return np.array([mixture_optimum(sc, x, family).value for x in d])
    mech = _CLOSED[family](sc, d)
    return mechanism_accuracy(sc, **mech)

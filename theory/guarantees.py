"""From f-divergence privacy to probabilistic information privacy (IP) and weak DP.

Source: Wang & Tay, "On the relationship between information-theoretic privacy
metrics and probabilistic information privacy" (``shared/seeds/chi2_privacy_wang_tay.txt``;
the paper's release Y is privbench's Z). For a finite joint pmf ``p_sz[s, z] =
P(S=s, Z=z)`` this module computes the exact quantities (f-divergence
informations, exact smallest IP / strong-IP / DP deltas) and the paper's bounds
(Theorem 1, Corollary 1, Lemma 1) that turn a measured TV / KL / chi-square
level into an (eps, delta) guarantee.

Conventions and corrections of the OCR'd paper (checked against the appendices
and against exact numbers in ``tests/theory/test_guarantees.py``):

* TV is the paper's ``sum |p - q|`` (in [0, 2], no factor 1/2).
* Theorem 1(a) prints ``delta = eta / (1 e^{-eps})``; Appendix A proves
  ``eta / (1 - e^{-eps})``, which is used. Read literally (product, or
  ``1 + e^{-eps}``) the bound is false. Appendix A is also loose: since
  ``sum (p-q)_+ = sum (q-p)_+ = TV/2``, ``P(R) <= TV / (2(1 - e^{-eps}))`` and
  ``P(L) <= TV / (2(e^eps - 1))``; their sum (see :func:`ip_tail_bounds`) is
  smaller by the factor ``(1 + e^eps) / (2 e^eps)`` and is attained in the limit.
* Theorem 1(b): ``zeta(-eps)`` must take the sup over ``p < e^{-eps}`` only (the
  proof's domain ``gamma > p``); over all of [0, 1] the point p = 1 (0 log 0 = 0)
  would make it 1. If ``eta >= eps`` then ``zeta(eps) = 1`` (trivial).
* Theorem 1(c): the right-tail term exceeds 1 and is *increasing* in eps for
  ``e^eps < sqrt(1 + eta)``; the bound is capped at 1, which makes it monotone.
* Strong IP (eq 3) counts every s, including s with P(s | z) = 0 (d = 0).

The chi-square level ``chi2_information`` is :func:`privbench.theory.measures.chi2_information`
(re-exported here beside :func:`tv_information` and :func:`kl_information`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import rel_entr

from privbench.datasets.errors import InputError
from privbench.datasets.validate import check_probability

from .measures import chi2_information, mutual_information

__all__ = [
    "DIVERGENCES", "RTOL", "SOURCES", "chi2_information", "dp_delta", "dp_from_strong_ip", "guarantees",
    "ip_delta", "ip_delta_bound", "ip_tail_bounds", "ip_tails", "kl_information", "strong_divergences",
    "strong_ip_delta", "strong_ip_delta_bound", "tv_information",
]

DIVERGENCES = ("tv", "kl", "chi2")
RTOL = 1e-12  # d within this relative distance of e^{+-eps} counts as on the boundary
SOURCES = {"tv": "Theorem 1(a)", "kl": "Theorem 1(b)", "chi2": "Theorem 1(c)"}


# ----------------------------------------------------------------- validation
def _check_joint(p_sz: Any) -> np.ndarray:
    p = np.asarray(p_sz, dtype=float)
    if p.ndim != 2 or p.size == 0:
        raise InputError(f"p_sz has shape {p.shape}, expected a non-empty (n_s, n_z) joint pmf")
    if not np.all(np.isfinite(p)) or np.any(p < -1e-12):
        raise InputError("p_sz has negative or non-finite entries (must be probabilities)")
    total = p.sum()
    if abs(total - 1.0) > 1e-6:
        raise InputError(f"p_sz sums to {total:.9g} (a joint pmf must sum to 1)")
    p = np.clip(p, 0.0, None) / total
    rows = p.sum(axis=1)
    if np.any(rows <= 0):
        raise InputError(f"p_sz row {int(np.argmin(rows))} is zero (every s needs P(s) > 0)")
    return p


def _check_divergence(divergence: Any) -> str:
    if divergence not in DIVERGENCES:
        raise InputError(f"divergence={divergence!r} is unknown (allowed: tv, kl, chi2)")
    return divergence


def _check_level(level: Any) -> float:
    try:
        v = float(level)
    except (TypeError, ValueError):
        raise InputError(f"level={level!r} is not a number (must be >= 0, inf allowed)") from None
    if not v >= 0:
        raise InputError(f"level={level!r} must be a number >= 0 (inf allowed)")
    return v


def _check_eps(eps: Any) -> np.ndarray:
    try:
        arr = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"eps={eps!r} is not a number (must be finite and >= 0)") from None
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        raise InputError(f"eps={arr[bad].flat[0]!r} must be a finite number >= 0")
    return arr


def _parts(p_sz: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated joint restricted to z with P(z) > 0, with its marginals."""
    p = _check_joint(p_sz)
    p_z = p.sum(axis=0)
    p = p[:, p_z > 0]
    return p, p.sum(axis=1), p.sum(axis=0)


def _disparity(p: np.ndarray, p_s: np.ndarray, p_z: np.ndarray) -> np.ndarray:
    """d(s, z) = P(s | z) / P(s) = P(s, z) / (P(s) P(z)), shape (n_s, n_z)."""
    return p / np.outer(p_s, p_z)


def _thresholds(eps: float) -> tuple[float, float]:
    """(e^-eps, e^eps) widened by RTOL so that rounding of d = 1 never lands in a tail."""
    with np.errstate(over="ignore"):
        return np.exp(-eps) * (1 - RTOL), np.exp(eps) * (1 + RTOL)


# ----------------------------------------------------------- exact quantities
def tv_information(p_sz: np.ndarray) -> float:
    """TV(P_SZ, P_S P_Z) = sum_{s,z} |P(s,z) - P(s)P(z)| (paper convention, in [0, 2]).

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf P(S=s, Z=z); every row must have positive mass.
    """
    p, p_s, p_z = _parts(p_sz)
    return float(np.abs(p - np.outer(p_s, p_z)).sum())


def kl_information(p_sz: np.ndarray) -> float:
    """KL(P_SZ || P_S P_Z) = I(S; Z) in nats; ``p_sz`` of shape (n_s, n_z).

    The validated :func:`privbench.theory.measures.mutual_information`.
    """
    return mutual_information(_check_joint(p_sz))


def strong_divergences(p_sz: np.ndarray, f: str) -> float:
    """max_s D_f(P_Z || P_{Z|S=s}) of eq (17); ``inf`` when P_Z is not << P_{Z|S=s}.

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf.
    f : {"tv", "kl", "chi2"}
        The divergence (TV without the factor 1/2).
    """
    _check_divergence(f)
    p, p_s, p_z = _parts(p_sz)
    cond = p / p_s[:, None]  # (n_s, n_z): P(z | s)
    pz = np.broadcast_to(p_z, cond.shape)
    if f == "tv":
        vals = np.abs(pz - cond).sum(axis=1)
    elif f == "kl":
        vals = rel_entr(pz, cond).sum(axis=1)
    else:
        with np.errstate(divide="ignore"):
            vals = np.where(cond > 0, pz**2 / np.where(cond > 0, cond, 1.0), np.inf).sum(axis=1) - 1
    return float(max(0.0, vals.max()))


def ip_tails(p_sz: np.ndarray, eps: float) -> tuple[float, float]:
    """Exact (P(L_eps), P(R_eps)) of eqs (4)-(5): mass with d < e^-eps and d > e^eps.

    Up to floating point: d within relative ``RTOL`` of a threshold is on it.

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf.
    eps : float
        Privacy budget, finite and >= 0.
    """
    e = float(_check_eps(eps))
    p, p_s, p_z = _parts(p_sz)
    d = _disparity(p, p_s, p_z)
    pos = p > 0  # zero-probability cells are null events
    lo, hi = _thresholds(e)
    left = p[pos & (d < lo)].sum()
    right = p[pos & (d > hi)].sum()
    return float(left), float(right)


def ip_delta(p_sz: np.ndarray, eps: float) -> float:
    """Smallest delta with S given Z (eps, delta)-IP (eq 2): P(L_eps) + P(R_eps).

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf.
    eps : float
        Privacy budget, finite and >= 0.
    """
    return float(min(1.0, sum(ip_tails(p_sz, eps))))


def strong_ip_delta(p_sz: np.ndarray, eps: float) -> float:
    """Smallest delta with strong (eps, delta)-IP (eq 3).

    The mass of the z for which some s (also one with P(s | z) = 0) has
    d(s, z) outside [e^-eps, e^eps]. ``p_sz`` has shape (n_s, n_z).
    """
    e = float(_check_eps(eps))
    p, p_s, p_z = _parts(p_sz)
    d = _disparity(p, p_s, p_z)
    lo, hi = _thresholds(e)
    bad = np.any((d <= 0) | (d < lo) | (d > hi), axis=0)  # d = 0 even if e^-eps underflows
    return float(min(1.0, p_z[bad].sum()))


def dp_delta(p_sz: np.ndarray, eps: float) -> float:
    """Smallest delta with (eps, delta)-DP of Definition 2 (all s != s' are neighbours).

    ``max_{s != s'} sum_z max(0, P(z|s) - e^eps P(z|s'))``; 0 when n_s = 1.
    ``p_sz`` has shape (n_s, n_z). e^eps is widened by ``RTOL`` (an error of at
    most 1e-12, so that equal rows give exactly 0).
    """
    e = float(_check_eps(eps))
    p, p_s, _ = _parts(p_sz)
    cond = p / p_s[:, None]
    hi = _thresholds(e)[1]  # e^eps (1 + RTOL): rounding never makes equal rows differ
    scaled = np.where(cond > 0, hi * np.where(cond > 0, cond, 1.0), 0.0)  # no inf * 0
    gap = np.clip(cond[:, None, :] - scaled[None, :, :], 0.0, None).sum(axis=2)
    np.fill_diagonal(gap, 0.0)
    return float(min(1.0, gap.max()))


# --------------------------------------------------------------------- bounds
def _logexpm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow."""
    return x + np.log(-np.expm1(-x))


def _kl_tails(eta: float, eps: float) -> tuple[float, float]:
    """(zeta(-eps), zeta(eps)) of Theorem 1(b): largest p with f(p, gamma) <= eta.

    f(p, gamma) = log gamma + (1-p) log((1-p)/(gamma-p)) on p < min(1, gamma)
    (Appendix B) is solved with brentq in u = log((1-p)/(gamma-p)), where
    f = log gamma + (1 - gamma) u / (1 - e^-u) and p = (gamma - e^-u)/(1 - e^-u).
    """
    if eta == 0:
        return 0.0, 0.0
    if eps == 0 or np.isinf(eta):
        return 1.0, 1.0
    # left tail, gamma = e^-eps: u >= eps solves u / (1 - e^-u) = c, u in [c - 1, c]
    with np.errstate(all="ignore"):
        c = (eta + eps) / -np.expm1(-eps)
    if not np.isfinite(c):  # eps below ~1e-308: zeta(-eps) -> e^-eps = 1
        return 1.0, 1.0
    u = brentq(lambda t: t / -np.expm1(-t) - c, max(eps, c - 1.0), c, xtol=1e-15, rtol=1e-15)
    left = np.exp(-eps) * -np.expm1(-(u - eps)) / -np.expm1(-u)
    if eta >= eps:
        return float(left), 1.0
    # right tail, gamma = e^eps: v = -u >= eps solves log v - log(e^v - 1) = log c
    logc = np.log(eps - eta) - _logexpm1(eps)
    g = lambda v: np.log(v) - _logexpm1(v) - logc  # noqa: E731  (decreasing in v)
    hi = max(2.0 * eps, 1.0)
    while g(hi) > 0:
        hi *= 2.0
    v = brentq(g, eps, hi, xtol=1e-15, rtol=1e-15)
    right = 1.0 - np.exp(_logexpm1(eps) - _logexpm1(v))
    return float(left), float(right)


def ip_tail_bounds(level: float, eps: Any, divergence: str) -> tuple[Any, Any]:
    """Bounds on P(L_eps) and P(R_eps) from a divergence level, each capped at 1.

    kl: (zeta(-eps), zeta(eps)); chi2: the two terms of Theorem 1(c); tv: the
    refined ``level / (2(e^eps - 1))`` and ``level / (2(1 - e^-eps))`` (see the
    module notes; Theorem 1(a) itself is not a sum of tail bounds).

    Parameters
    ----------
    level : float
        eta >= 0 (inf allowed: trivial bounds).
    eps : float or array_like of shape (k,)
        Privacy budgets, finite and >= 0.
    divergence : {"tv", "kl", "chi2"}

    Returns
    -------
    left, right : float or ndarray of shape (k,)
    """
    div, eta, e = _check_divergence(divergence), _check_level(level), _check_eps(eps)
    if eta == 0 or np.isinf(eta):
        full = np.full(e.shape, 0.0 if eta == 0 else 1.0)
        left, right = full, full.copy()
    elif div == "kl":
        pairs = [_kl_tails(eta, float(x)) for x in e.ravel()]
        left = np.array([a for a, _ in pairs]).reshape(e.shape)
        right = np.array([b for _, b in pairs]).reshape(e.shape)
    else:
        with np.errstate(all="ignore"):
            em1, om = np.expm1(e), -np.expm1(-e)  # e^eps - 1, 1 - e^-eps
            if div == "tv":
                left, right = eta / (2 * em1), eta / (2 * om)
            else:  # chi2; right term divided through by e^eps to avoid inf/inf
                left = eta * np.exp(-e) / (om**2 + eta)
                right = eta / (em1 * om + eta * np.exp(-e))
    left, right = np.minimum(1.0, left), np.minimum(1.0, right)
    if e.ndim == 0:
        return float(left), float(right)
    return left, right


def ip_delta_bound(level: float, eps: Any, divergence: str) -> Any:
    """Theorem 1: delta such that level-eta f-divergence privacy gives (eps, delta)-IP.

    (a) tv: ``eta / (1 - e^-eps)`` (corrected from the OCR); (b) kl:
    ``zeta(eps) + zeta(-eps)``; (c) chi2: ``e^-eps eta / ((e^-eps - 1)^2 + eta) +
    e^eps eta / ((e^eps - 1)^2 + eta)``. Capped at 1; eta = 0 gives 0.

    Parameters
    ----------
    level : float
        eta = D_f(P_SZ || P_S P_Z) >= 0 (TV without 1/2; KL in nats); inf allowed.
    eps : float or array_like of shape (k,)
        Finite budgets >= 0.
    divergence : {"tv", "kl", "chi2"}

    Returns
    -------
    float or ndarray of shape (k,)
    """
    div, eta, e = _check_divergence(divergence), _check_level(level), _check_eps(eps)
    if div == "tv" and 0 < eta < np.inf:
        with np.errstate(all="ignore"):
            out = np.minimum(1.0, eta / -np.expm1(-e))
    else:
        left, right = ip_tail_bounds(eta, e, div)
        out = np.minimum(1.0, np.asarray(left) + np.asarray(right))
    return float(out) if e.ndim == 0 else out


def strong_ip_delta_bound(level: float, eps: Any, divergence: str, n_s: int) -> Any:
    """Corollary 1: ``max_s D_f(P_Z || P_{Z|S=s}) <= eta`` gives strong (eps, n_s delta)-IP.

    ``delta`` is :func:`ip_delta_bound`; the result is capped at 1. ``eps`` is a
    float or array of shape (k,); returns the same shape.
    """
    n = _check_n_s(n_s)
    out = np.minimum(1.0, n * np.asarray(ip_delta_bound(level, eps, divergence)))
    return float(out) if out.ndim == 0 else out


def _check_n_s(n_s: Any) -> int:
    if isinstance(n_s, bool) or not isinstance(n_s, (int, np.integer)) or n_s < 1:
        raise InputError(f"n_s={n_s!r} must be an integer >= 1 (size of the alphabet of S)")
    return int(n_s)


def _check_min_prior(min_prior: Any) -> float:
    try:
        a = float(min_prior)
    except (TypeError, ValueError):
        raise InputError(f"min_prior={min_prior!r} is not a number (allowed: (0, 1])") from None
    if not 0 < a <= 1:
        raise InputError(f"min_prior={min_prior!r} is outside (0, 1]")
    return a


def dp_from_strong_ip(eps: float, delta: float, min_prior: float) -> tuple[float, float]:
    """Lemma 1: strong (eps, delta)-IP with min_s P(s) = alpha gives (2 eps, delta/alpha)-DP.

    Returns ``(2 * eps, min(1, delta / min_prior))`` as floats.
    """
    e = float(_check_eps(eps))
    d = check_probability("delta", delta)
    return 2.0 * e, float(min(1.0, d / _check_min_prior(min_prior)))


def guarantees(
    level: float,
    divergence: str,
    eps: float,
    n_s: int | None = None,
    min_prior: float | None = None,
    strong: bool = False,
) -> dict[str, Any]:
    """Turn a measured TV / KL / chi^2 level into (eps, delta)-IP and, if possible, DP.

    Parameters
    ----------
    level : float
        ``strong=False``: D_f(P_SZ || P_S P_Z) (eq 16). ``strong=True``:
        max_s D_f(P_Z || P_{Z|S=s}) (eq 17), e.g. from :func:`strong_divergences`.
    divergence : {"tv", "kl", "chi2"}
    eps : float
        IP budget, finite and >= 0.
    n_s : int, optional
        |S|; required when ``strong``.
    min_prior : float, optional
        min_s P(S=s) in (0, 1/n_s]; with ``strong`` adds Lemma 1's weak DP.
    strong : bool
        Use Corollary 1 (strong IP) instead of Theorem 1.

    Returns
    -------
    dict
        ``divergence, level, eps, strong, source, ip_delta`` and, when strong,
        ``strong_ip_delta``; with ``min_prior`` also ``dp_eps, dp_delta``. Floats only.
    """
    div, eta = _check_divergence(divergence), _check_level(level)
    e_arr = _check_eps(eps)
    if e_arr.ndim != 0:
        raise InputError(f"eps has shape {e_arr.shape} (guarantees takes one number >= 0)")
    e = float(e_arr)
    n = None if n_s is None else _check_n_s(n_s)
    a = None if min_prior is None else _check_min_prior(min_prior)
    if n is not None and a is not None and a > 1.0 / n + 1e-12:
        raise InputError(f"min_prior={min_prior!r} exceeds 1/n_s = {1.0 / n:.6g}")
    if strong and n is None:
        raise InputError("n_s=None is not allowed with strong=True (give |S|)")
    out: dict[str, Any] = {
        "divergence": div, "level": eta, "eps": e, "strong": bool(strong),
        "source": ("Corollary 1 of " if strong else "") + SOURCES[div] + " (Wang & Tay)",
        "ip_delta": ip_delta_bound(eta, e, div),
    }
    if strong:
        out["strong_ip_delta"] = strong_ip_delta_bound(eta, e, div, n)
        if a is not None:
            out["dp_eps"], out["dp_delta"] = dp_from_strong_ip(e, out["strong_ip_delta"], a)
            out["source"] += " + Lemma 1"
    return out

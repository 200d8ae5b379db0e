"""Wang & Tay's bounds: an f-divergence level -> (eps, delta)-IP (Theorem 1, Corollary 1) -> DP (Lemma 1)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq

from privbench.datasets.errors import InputError
from privbench.datasets.validate import check_probability

from .checks import check_divergence, check_eps, check_level, check_min_prior, check_n_s

__all__ = ["SOURCES", "dp_from_strong_ip", "guarantees", "ip_delta_bound", "ip_tail_bounds",
           "strong_ip_delta_bound"]

SOURCES = {"tv": "Theorem 1(a)", "kl": "Theorem 1(b)", "chi2": "Theorem 1(c)"}


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
    div, eta, e = check_divergence(divergence), check_level(level), check_eps(eps)
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
    div, eta, e = check_divergence(divergence), check_level(level), check_eps(eps)
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
    n = check_n_s(n_s)
    out = np.minimum(1.0, n * np.asarray(ip_delta_bound(level, eps, divergence)))
    return float(out) if out.ndim == 0 else out


def dp_from_strong_ip(eps: float, delta: float, min_prior: float) -> tuple[float, float]:
    """Lemma 1: strong (eps, delta)-IP with min_s P(s) = alpha gives (2 eps, delta/alpha)-DP.

    Returns ``(2 * eps, min(1, delta / min_prior))`` as floats.
    """
    e = float(check_eps(eps))
    d = check_probability("delta", delta)
    return 2.0 * e, float(min(1.0, d / check_min_prior(min_prior)))


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
    div, eta = check_divergence(divergence), check_level(level)
    e_arr = check_eps(eps)
    if e_arr.ndim != 0:
        raise InputError(f"eps has shape {e_arr.shape} (guarantees takes one number >= 0)")
    e = float(e_arr)
    n = None if n_s is None else check_n_s(n_s)
    a = None if min_prior is None else check_min_prior(min_prior)
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

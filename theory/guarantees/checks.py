"""Validation shared by the guarantees modules: joints, divergences, levels, budgets."""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

__all__ = ["DIVERGENCES", "RTOL", "check_divergence", "check_eps", "check_joint", "check_level",
           "check_min_prior", "check_n_s", "disparity", "joint_parts", "thresholds"]

DIVERGENCES = ("tv", "kl", "chi2")
RTOL = 1e-12  # d within this relative distance of e^{+-eps} counts as on the boundary


def check_joint(p_sz: Any) -> np.ndarray:
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


def check_divergence(divergence: Any) -> str:
    if divergence not in DIVERGENCES:
        raise InputError(f"divergence={divergence!r} is unknown (allowed: tv, kl, chi2)")
    return divergence


def check_level(level: Any) -> float:
    try:
        v = float(level)
    except (TypeError, ValueError):
        raise InputError(f"level={level!r} is not a number (must be >= 0, inf allowed)") from None
    if not v >= 0:
        raise InputError(f"level={level!r} must be a number >= 0 (inf allowed)")
    return v


def check_eps(eps: Any) -> np.ndarray:
    try:
        arr = np.asarray(eps, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"eps={eps!r} is not a number (must be finite and >= 0)") from None
    bad = ~np.isfinite(arr) | (arr < 0)
    if np.any(bad):
        raise InputError(f"eps={arr[bad].flat[0]!r} must be a finite number >= 0")
    return arr


def joint_parts(p_sz: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated joint restricted to z with P(z) > 0, with its marginals."""
    p = check_joint(p_sz)
    p_z = p.sum(axis=0)
    p = p[:, p_z > 0]
    return p, p.sum(axis=1), p.sum(axis=0)


def disparity(p: np.ndarray, p_s: np.ndarray, p_z: np.ndarray) -> np.ndarray:
    """d(s, z) = P(s | z) / P(s) = P(s, z) / (P(s) P(z)), shape (n_s, n_z)."""
    return p / np.outer(p_s, p_z)


def thresholds(eps: float) -> tuple[float, float]:
    """(e^-eps, e^eps) widened by RTOL so that rounding of d = 1 never lands in a tail."""
    with np.errstate(over="ignore"):
        return np.exp(-eps) * (1 - RTOL), np.exp(eps) * (1 + RTOL)


def check_n_s(n_s: Any) -> int:
    if isinstance(n_s, bool) or not isinstance(n_s, (int, np.integer)) or n_s < 1:
        raise InputError(f"n_s={n_s!r} must be an integer >= 1 (size of the alphabet of S)")
    return int(n_s)


def check_min_prior(min_prior: Any) -> float:
    try:
        a = float(min_prior)
    except (TypeError, ValueError):
        raise InputError(f"min_prior={min_prior!r} is not a number (allowed: (0, 1])") from None
    if not 0 < a <= 1:
        raise InputError(f"min_prior={min_prior!r} is outside (0, 1]")
    return a

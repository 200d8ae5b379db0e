"""Exact MAP accuracy and distortion of GAP §4 mechanisms for the binary Gaussian mixture.

A mechanism is (beta0, beta1, gamma0, gamma1):
Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N, N ~ N(0, 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import BinaryGMM
from privbench.datasets.vocabulary import MIXTURE_FAMILIES as FAMILIES

__all__ = ["FAMILIES", "ArrayLike", "check_family", "check_scenario", "general_coordinates",
           "general_parameters", "map_accuracy_two_gaussians", "mechanism_accuracy", "mechanism_distortion"]

ArrayLike = Any


def check_scenario(scenario: Any) -> BinaryGMM:
    if not isinstance(scenario, BinaryGMM):
        raise InputError(f"scenario={scenario!r} is not a binary-gmm scenario (BinaryGMM)")
    return scenario


def check_family(family: Any) -> str:
    if family not in FAMILIES:
        raise InputError(f"family={family!r} is unknown (allowed: {', '.join(FAMILIES)})")
    return family


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
    sc = check_scenario(scenario)
    b0, b1, g0, g1 = (np.asarray(x, dtype=float) for x in (beta0, beta1, gamma0, gamma1))
    return map_accuracy_two_gaussians(
        sc.prior, -sc.mu + b0, np.sqrt(sc.sigma0**2 + g0**2), sc.mu - b1, np.sqrt(sc.sigma1**2 + g1**2)
    )


def mechanism_distortion(
    scenario: BinaryGMM, beta0: ArrayLike, beta1: ArrayLike, gamma0: ArrayLike, gamma1: ArrayLike
) -> np.ndarray:
    """Exact E(Z - U)^2 = (1-prior)(beta0^2 + gamma0^2) + prior (beta1^2 + gamma1^2)."""
    sc = check_scenario(scenario)
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


def general_coordinates(
    sc: BinaryGMM, budget: float, b0: float, b1: float, g0: float, g1: float
) -> np.ndarray:
    """Inverse of :func:`general_parameters` for a mechanism on the boundary (budget > 0)."""
    theta = np.arctan2(np.hypot(b0, g0) * np.sqrt(1 - sc.prior), np.hypot(b1, g1) * np.sqrt(sc.prior))
    return np.tan(0.5 * np.array([theta, np.arctan2(g0, b0), np.arctan2(g1, b1)]))

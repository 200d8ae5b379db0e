"""Exact f-divergence informations and exact smallest IP / strong-IP / DP deltas of a joint."""

from __future__ import annotations

import numpy as np
from scipy.special import rel_entr

from ..measures import mutual_information
from .checks import check_divergence, check_eps, check_joint, disparity, joint_parts, thresholds

__all__ = ["dp_delta", "ip_delta", "ip_tails", "kl_information", "strong_divergences", "strong_ip_delta",
           "tv_information"]


def tv_information(p_sz: np.ndarray) -> float:
    """TV(P_SZ, P_S P_Z) = sum_{s,z} |P(s,z) - P(s)P(z)| (paper convention, in [0, 2]).

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf P(S=s, Z=z); every row must have positive mass.
    """
    p, p_s, p_z = joint_parts(p_sz)
    return float(np.abs(p - np.outer(p_s, p_z)).sum())


def kl_information(p_sz: np.ndarray) -> float:
    """KL(P_SZ || P_S P_Z) = I(S; Z) in nats; ``p_sz`` of shape (n_s, n_z).

    The validated :func:`privbench.theory.measures.mutual_information`.
    """
    return mutual_information(check_joint(p_sz))


def strong_divergences(p_sz: np.ndarray, f: str) -> float:
    """max_s D_f(P_Z || P_{Z|S=s}) of eq (17); ``inf`` when P_Z is not << P_{Z|S=s}.

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf.
    f : {"tv", "kl", "chi2"}
        The divergence (TV without the factor 1/2).
    """
    check_divergence(f)
    p, p_s, p_z = joint_parts(p_sz)
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
    e = float(check_eps(eps))
    p, p_s, p_z = joint_parts(p_sz)
    d = disparity(p, p_s, p_z)
    pos = p > 0  # zero-probability cells are null events
    lo, hi = thresholds(e)
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
    e = float(check_eps(eps))
    p, p_s, p_z = joint_parts(p_sz)
    d = disparity(p, p_s, p_z)
    lo, hi = thresholds(e)
    bad = np.any((d <= 0) | (d < lo) | (d > hi), axis=0)  # d = 0 even if e^-eps underflows
    return float(min(1.0, p_z[bad].sum()))


def dp_delta(p_sz: np.ndarray, eps: float) -> float:
    """Smallest delta with (eps, delta)-DP of Definition 2 (all s != s' are neighbours).

    ``max_{s != s'} sum_z max(0, P(z|s) - e^eps P(z|s'))``; 0 when n_s = 1.
    ``p_sz`` has shape (n_s, n_z). e^eps is widened by ``RTOL`` (an error of at
    most 1e-12, so that equal rows give exactly 0).
    """
    e = float(check_eps(eps))
    p, p_s, _ = joint_parts(p_sz)
    cond = p / p_s[:, None]
    hi = thresholds(e)[1]  # e^eps (1 + RTOL): rounding never makes equal rows differ
    scaled = np.where(cond > 0, hi * np.where(cond > 0, cond, 1.0), 0.0)  # no inf * 0
    gap = np.clip(cond[:, None, :] - scaled[None, :, :], 0.0, None).sum(axis=2)
    np.fill_diagonal(gap, 0.0)
    return float(min(1.0, gap.max()))

"""Smooth leakages of P(S, Z), their partial derivatives and linear minorants.

Both are functions of P_SZ with P(S) fixed (P(Z) = column sums). For each, any
conditional q(s|z) (one pmf per z) gives a linear minorant valid at every P_SZ
with that P(S) -- the certificates of the first-order solver rest on it:

* ``mi``   I(S;Z) = sum P(s,z) log(P(s,z) / (P(s) P(z)))
           >= sum P(s,z) log(q(s|z) / P(s))                  (Gibbs' inequality);
* ``chi2`` sum P(s,z)^2 / (P(s) P(z)) - 1
           >= sum P(s,z) (2 q(s|z) / P(s) - sum_s' q(s'|z)^2 / P(s')) - 1
           (expand sum_s (P(s|z) - q(s|z))^2 / P(s) >= 0).

With q = P(S|Z) of the current point both are tangent: the slopes are the
partial derivatives (up to a constant per s, which cancels on row-stochastic
channels). A column that is (numerically) unused gets q = P(S) there, so the
minorant never rests on rounding noise; :data:`MINORANT_SLOPES` gives the
slope of any q, so that a solver may pick a better q for such columns.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from scipy.special import rel_entr

__all__ = ["MINORANT_SLOPES", "Q_OF_SLOPE", "SMOOTH_LEAKAGES", "Linearisation", "UNUSED"]

UNUSED = 1e-9  # a column with P(z) below this times max P(z) gets q = P(S) in the minorant, then the
# best of fill_unused's candidates (its own posterior among them: never a worse bound than the tangent;
# an interior point leaves ~1e-12 on releases it does not use, where the tangent is a poor minorant)


class Linearisation(NamedTuple):
    """value L(P); deriv dL/dP(s,z) (shape (n_s, n_z)); L(P') >= offset + <slope, P'> for all P';
    ``used`` marks the columns whose q is P(S|z) (the others have q = P(S)); ``posterior`` is
    P(S|z) wherever P(z) > 0, however small (P(S) elsewhere)."""

    value: float
    deriv: np.ndarray
    offset: float
    slope: np.ndarray
    used: np.ndarray
    posterior: np.ndarray


def _mi_slope(q: np.ndarray, p_s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(q / p_s[:, None])


def _chi2_slope(q: np.ndarray, p_s: np.ndarray) -> np.ndarray:
    qr = q / p_s[:, None]
    return 2.0 * qr - (qr * q).sum(axis=0)[None, :]


def _conditional(p_sz: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(P(z), q(s|z) for the minorant, mask of used columns, P(S|z) where P(z) > 0)."""
    p_z = p_sz.sum(axis=0)
    used = p_z > UNUSED * max(float(p_z.max()), 0.0)
    post = np.where(p_z > 0, p_sz / np.where(p_z > 0, p_z, 1.0), p_s[:, None])
    post = post / post.sum(axis=0)
    return p_z, np.where(used, post, p_s[:, None]), used, post


def _mi(p_sz: np.ndarray, p_s: np.ndarray) -> Linearisation:
    p_z, q, used, post = _conditional(p_sz, p_s)
    ref = p_s[:, None] * p_z[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        deriv = np.log(p_sz / ref)
    deriv[:, p_z <= 0] = 0.0
    return Linearisation(float(rel_entr(p_sz, ref).sum()), deriv, 0.0, _mi_slope(q, p_s), used, post)


def _chi2(p_sz: np.ndarray, p_s: np.ndarray) -> Linearisation:
    p_z, q, used, post = _conditional(p_sz, p_s)
    safe = np.where(p_z > 0, p_z, 1.0)
    ratio = p_sz / (p_s[:, None] * safe[None, :])  # P(s,z) / (P(s) P(z))
    col = (ratio * p_sz).sum(axis=0)  # sum_s P(s,z)^2 / (P(s) P(z))
    deriv = 2.0 * ratio - (col / safe)[None, :]
    deriv[:, p_z <= 0] = 0.0
    return Linearisation(float(col.sum() - 1.0), deriv, -1.0, _chi2_slope(q, p_s), used, post)


def _mi_q(slope: np.ndarray, p_s: np.ndarray) -> np.ndarray:
    w = p_s[:, None] * np.exp(slope - slope.max(axis=0, keepdims=True))
    return w / w.sum(axis=0, keepdims=True)


def _chi2_q(slope: np.ndarray, p_s: np.ndarray) -> np.ndarray:
    return p_s[:, None] * (slope + 2.0 - p_s @ slope) / 2.0


MINORANT_SLOPES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "mi": _mi_slope,
    "chi2": _chi2_slope,
}
# a conditional q whose minorant slope is the given one where that is a minorant slope (the duals of
# a conic solver, up to its accuracy); any q gives a valid minorant, so an inexact slope costs
# only tightness
Q_OF_SLOPE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {"mi": _mi_q, "chi2": _chi2_q}
SMOOTH_LEAKAGES: dict[str, Callable[[np.ndarray, np.ndarray], Linearisation]] = {
    "mi": _mi,
    "chi2": _chi2,
}

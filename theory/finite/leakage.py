"""Smooth leakages of P(S, Z) and their partial derivatives, for the first-order solver.

Both are functions of P_SZ with P(S) fixed (P(Z) = column sums):

* ``mi``   I(S;Z) = sum P(s,z) log(P(s,z) / (P(s) P(z))),
           dI/dP(s,z) = log(P(s,z) / (P(s) P(z))) (up to a constant per s,
           which cancels on row-stochastic channels);
* ``chi2`` sum P(s,z)^2 / (P(s) P(z)) - 1,
           d/dP(s,z) = 2 P(s,z) / (P(s) P(z)) - sum_s' P(s',z)^2 / (P(s') P(z)^2).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import rel_entr

__all__ = ["SMOOTH_LEAKAGES"]


def _mi(p_sz: np.ndarray, p_s: np.ndarray) -> tuple[float, np.ndarray]:
    p_z = p_sz.sum(axis=0)
    ref = p_s[:, None] * p_z[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        deriv = np.log(p_sz / ref)
    deriv[:, p_z <= 0] = 0.0
    return float(rel_entr(p_sz, ref).sum()), deriv


def _chi2(p_sz: np.ndarray, p_s: np.ndarray) -> tuple[float, np.ndarray]:
    p_z = p_sz.sum(axis=0)
    safe = np.where(p_z > 0, p_z, 1.0)
    ratio = p_sz / (p_s[:, None] * safe[None, :])  # P(s,z) / (P(s) P(z))
    col = (ratio * p_sz).sum(axis=0)  # sum_s P(s,z)^2 / (P(s) P(z))
    deriv = 2.0 * ratio - (col / safe)[None, :]
    deriv[:, p_z <= 0] = 0.0
    return float(col.sum() - 1.0), deriv


SMOOTH_LEAKAGES: dict[str, Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]] = {
    "mi": _mi,
    "chi2": _chi2,
}

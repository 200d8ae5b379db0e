"""The data of a finite privacy-utility program, in the shapes the fast solvers use.

For a joint P(S, U), an observation (``useful``: W = U, ``full``: W = (S, U),
or a kernel P(W | S, U)) and a distortion matrix d(u, z), the program

    minimise_C  L(P_SZ)   subject to   C row-stochastic,  <A, C> <= budget

has P_SZ = G_s C and E d = <A, C> with G_s[s, w] = P(S=s, W=w) (sparse) and
A[w, z] = sum_u P(U=u, W=w) d(u, z).  Observations that never occur
(P(W=w) = 0) and sensitive values that never occur (P(S=s) = 0) are dropped;
``live`` marks the kept rows of W.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["FiniteData", "finite_data"]


@dataclass(frozen=True)
class FiniteData:
    """Sparse marginals of one finite program (live rows only).

    Attributes
    ----------
    g_s : sparse matrix, shape (n_s', n_w')
        P(S=s, W=w) for the sensitive values and observations that occur.
    p_s : ndarray, shape (n_s',)
    p_w : ndarray, shape (n_w',)
    cost : ndarray, shape (n_w', n_z)
        A[w, z] = sum_u P(U=u, W=w) d(u, z): E d(U, Z) = sum(A * C).
    live : ndarray of bool, shape (n_w,)
    min_distortion : float
        The smallest E d any channel achieves (each w its cheapest z).
    """

    g_s: sp.csr_matrix
    p_s: np.ndarray
    p_w: np.ndarray
    cost: np.ndarray
    live: np.ndarray
    min_distortion: float

    @property
    def shape(self) -> tuple[int, int]:
        return self.cost.shape


def _marginals(joint: np.ndarray, observation: str | np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """G_s (n_s x n_w) and G_u (n_u x n_w) as sparse matrices, without a dense kernel."""
    n_s, n_u = joint.shape
    if isinstance(observation, str) and observation == "full":
        w = np.arange(n_s * n_u)
        vals = joint.ravel()
        g_s = sp.csr_matrix((vals, (w // n_u, w)), shape=(n_s, n_s * n_u))
        g_u = sp.csr_matrix((vals, (w % n_u, w)), shape=(n_u, n_s * n_u))
        return g_s, g_u
    if isinstance(observation, str):  # useful: W = U
        return sp.csr_matrix(joint), sp.diags(joint.sum(axis=0)).tocsr()
    p_suw = joint.reshape(-1, 1) * observation
    n_w = observation.shape[1]
    g_s = p_suw.reshape(n_s, n_u, n_w).sum(axis=1)
    g_u = p_suw.reshape(n_s, n_u, n_w).sum(axis=0)
    return sp.csr_matrix(g_s), sp.csr_matrix(g_u)


def finite_data(joint: np.ndarray, distortion: np.ndarray, observation: str | np.ndarray) -> FiniteData:
    """Build :class:`FiniteData`; ``observation`` is ``useful``, ``full`` or a validated kernel."""
    g_s, g_u = _marginals(np.asarray(joint, dtype=float), observation)
    p_w = np.asarray(g_s.sum(axis=0)).ravel()
    live = p_w > 0
    p_s = np.asarray(g_s.sum(axis=1)).ravel()
    g_s = g_s[p_s > 0][:, live].tocsr()
    cost = np.asarray((g_u[:, live].T @ np.asarray(distortion, dtype=float)))
    return FiniteData(g_s, p_s[p_s > 0], p_w[live], cost, live, float(cost.min(axis=1).sum()))

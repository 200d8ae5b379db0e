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


def _csr(vals: np.ndarray, cols: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix from arrays already in canonical form (sorted, no duplicates), unchecked."""
    out = sp.csr_matrix(shape, dtype=float)
    out.data, out.indices, out.indptr = vals, cols.astype(np.int32), indptr.astype(np.int32)
    return out


def _dense_s(joint: np.ndarray, observation: str) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray] | None:
    """(G_s, P(W), A without the distortion: P(U=u, W=w) as (n_w,) weights and u indices) for the
    named observations, built from the joint's arrays directly (no sparse algebra): the useful
    observation's G_s is the joint itself, the full observation's puts row s of the joint in
    columns s n_u .. (s + 1) n_u; both give every w a single u. None for a kernel."""
    n_s, n_u = joint.shape
    if observation == "full":
        w = np.arange(n_s * n_u)
        keep = joint.ravel() != 0  # a sparse matrix holds no explicit zeros
        vals = joint.ravel()[keep]
        indptr = np.r_[0, np.cumsum(np.count_nonzero(joint, axis=1))]
        return _csr(vals, w[keep], indptr, (n_s, n_s * n_u)), joint.ravel(), w % n_u
    rows, cols = np.nonzero(joint)
    indptr = np.r_[0, np.cumsum(np.count_nonzero(joint, axis=1))]
    return _csr(joint[rows, cols], cols, indptr, (n_s, n_u)), joint.sum(axis=0), np.arange(n_u)


def _marginals(joint: np.ndarray, observation: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """G_s (n_s x n_w) and G_u (n_u x n_w) of an observation kernel as sparse matrices."""
    n_s, n_u = joint.shape
    p_suw = joint.reshape(-1, 1) * observation
    n_w = observation.shape[1]
    g_s = p_suw.reshape(n_s, n_u, n_w).sum(axis=1)
    g_u = p_suw.reshape(n_s, n_u, n_w).sum(axis=0)
    return sp.csr_matrix(g_s), sp.csr_matrix(g_u)


def finite_data(joint: np.ndarray, distortion: np.ndarray, observation: str | np.ndarray) -> FiniteData:
    """Build :class:`FiniteData`; ``observation`` is ``useful``, ``full`` or a validated kernel."""
    joint = np.asarray(joint, dtype=float)
    distortion = np.asarray(distortion, dtype=float)
    if isinstance(observation, str):  # every w carries a single u: A[w] = P(W=w) d(u(w), .)
        g_s, p_w, u_of_w = _dense_s(joint, observation)
        cost = p_w[:, None] * distortion[u_of_w]
    else:
        g_s, g_u = _marginals(joint, observation)
        p_w = np.asarray(g_s.sum(axis=0)).ravel()
        cost = np.asarray(g_u.T @ distortion)
    live = p_w > 0
    p_s = joint.sum(axis=1)
    if not (live.all() and (p_s > 0).all()):
        g_s = g_s[p_s > 0][:, live].tocsr()
        cost = cost[live]
    return FiniteData(g_s, p_s[p_s > 0], p_w[live], cost, live, float(cost.min(axis=1).sum()))

"""The y-space Newton system of ``interior_full.py`` solved through the structure of the Hessian, for
full-observation programs too large for its dense LU (n_s n_z above ``FULL_MAX_N``).

The system is (I + P H_y) dy = v with P block-diagonal by s (n_z x n_z blocks P_s)
and H_y block-diagonal by z (n_s x n_s blocks). Each of H_y's blocks is a diagonal
plus a matrix of rank k (:data:`LOW_RANK`):

* mi:   H_z = diag(1 / y_z) - 1 1^T / P(z)                          (k = 1),
* chi2: H_z = (2 / P(z)) (diag(1 / P(S)) - r 1^T - 1 r^T + Q 1 1^T)   (k = 2: the span of r and 1),

so H_y = Diag(h) + U W U^T, with U's column (z, a) the vector V[:, z, a] placed on
release z. Then I + P H_y = A + (P U) W U^T with A = I + P Diag(h) block-diagonal
by s (A_s = I + P_s diag(h[s, :])), and by the Woodbury identity

    (I + P H_y)^-1 v = t - A^-1 P U (I + W U^T A^-1 P U)^-1 W U^T t,    t = A^-1 v,

where (A^-1 P U)[(s, y), (z, b)] = (A_s^-1 P_s)[y, z] V[s, z, b] and the capacitance
matrix has k n_z rows. A step costs about 3 n_s n_z^3 flops (n_s inverses and
products of n_z x n_z blocks) instead of (n_s n_z)^3 / 3: at m = 100 (n_s = n_z =
100) 3e8 flops against 3e11.

A_s is similar to I + diag(h_s)^1/2 P_s diag(h_s)^1/2 (P_s and h are >= 0), so its
eigenvalues are >= 1 and it is invertible; I + P H_y is too, for the same reason,
and with it the capacitance matrix. The identity subtracts nearly equal terms
where H_y is nearly singular (mi: H_z y_z = 0), so late in the iteration its
answer alone leaves residuals up to 1e-5 of the right-hand side (against 1e-10 for
the dense LU) and the certificate fails; each solve is therefore refined (x += solve
of the residual, the residual from the explicit product P (H_y x), at most REFINE
times) to REFINE_TOL. On random joints (full observation, m = 6-50) the iteration then takes
the dense LU's steps and certifies alike; unrefined it stopped at relative gaps of 1e-6 to 4e-5.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgWarning, lu_factor, lu_solve

from .interior_dense import chi2_ratios, mi_slope
from .interior_full import FullSystem

__all__ = ["LOW_RANK", "LowRankHessian", "LowRankSystem"]

REFINE = 10  # refinement steps at most ...
REFINE_TOL = 1e-14  # ... until the residual of the N x N system is below this times the right-hand side


class LowRankHessian(NamedTuple):
    """H_y = Diag(h) + U W U^T (module docstring)."""

    h: np.ndarray  # (n_s, n_z)
    v: np.ndarray  # (n_s, n_z, k)
    w: np.ndarray  # (n_z, k, k)


def _mi_low_rank(y: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, LowRankHessian]:
    """(slope log(P(s|z) / P(s)), H_y = diag(1 / y_z) - 1 1^T / P(z) per release)."""
    p_z = y.sum(axis=0)
    n_s, n_z = y.shape
    return mi_slope(y, p_s, p_z), LowRankHessian(1.0 / y, np.ones((n_s, n_z, 1)), (-1.0 / p_z)[:, None, None])


def _chi2_low_rank(y: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, LowRankHessian]:
    """(slope 2 r - Q, H_y = (2 / P(z)) (diag(1 / P(S)) - r 1^T - 1 r^T + Q 1 1^T) per release)."""
    p_z = y.sum(axis=0)
    r, q = chi2_ratios(y, p_s, p_z)
    c = 2.0 / p_z
    w = np.zeros((p_z.size, 2, 2))
    w[:, 0, 1] = w[:, 1, 0] = -c
    w[:, 1, 1] = c * q
    v = np.stack([r, np.ones_like(r)], axis=2)
    return 2.0 * r - q[None, :], LowRankHessian(c[None, :] / p_s[:, None], v, w)


LOW_RANK = {"mi": _mi_low_rank, "chi2": _chi2_low_rank}


def _capacitance(hess: LowRankHessian, q: np.ndarray) -> np.ndarray:
    """W U^T A^-1 P U as (n_z, k, n_z, k): sum_c W[y, a, c] sum_s V[s, y, c] Q_s[y, z] V[s, z, b], one
    batched product over y per b (3 ms at n_s = n_z = 100, k = 2, where one einsum took 21)."""
    n_z, k = hess.w.shape[0], hess.w.shape[1]
    vt = hess.v.transpose(1, 2, 0)  # (y, c, s)
    m = np.empty((n_z, k, n_z, k))
    for b in range(k):
        m[:, :, :, b] = vt @ (q * hess.v[:, None, :, b]).transpose(1, 0, 2)
    return (hess.w @ m.reshape(n_z, k, n_z * k)).reshape(n_z, k, n_z, k)


class LowRankSystem(FullSystem):
    """:class:`~.interior_full.FullSystem` with the y-space system solved by the Woodbury identity
    (module docstring)."""

    #: Stop at perfect privacy (``solve_interior``'s ``floor``): there H_y is singular along P(S) on every
    #: release, and the iteration, having reached leakage 1e-12, stepped away to 8e-3 and did not return
    #: in 80 steps (random joint, full, m = 10, budget 0.6; m = 30, budget 0.47).
    stops_at_zero = True

    def __init__(self, privacy: str, g_s: sp.spmatrix, p_s: np.ndarray, cost: np.ndarray) -> None:
        super().__init__(privacy, g_s, p_s, cost)
        self.hessian = LOW_RANK[privacy]

    def h_times(self, hess: Any, v: np.ndarray) -> np.ndarray:
        """H_y v = h v + U W U^T v, for v of shape (n_s, n_z)."""
        u = np.einsum("sza,sz->za", hess.v, v)
        return hess.h * v + np.einsum("sza,za->sz", hess.v, np.einsum("zab,zb->za", hess.w, u))

    def y_solver(self, p: np.ndarray, hess: Any) -> Callable[[np.ndarray], np.ndarray] | None:
        """v -> (I + P H_y)^-1 v by the Woodbury identity; None where a system is singular or not finite."""
        n_s, n_z = p.shape[0], p.shape[1]
        k = hess.v.shape[2]
        a = p * hess.h[:, None, :]
        a[:, np.arange(n_z), np.arange(n_z)] += 1.0
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(hess.v)) and np.all(np.isfinite(hess.w))):
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", LinAlgWarning)
                a_inv = np.linalg.inv(a)
                q = a_inv @ p  # (n_s, n_z, n_z): A_s^-1 P_s
                cap = _capacitance(hess, q).reshape(n_z * k, n_z * k)
                cap[np.arange(n_z * k), np.arange(n_z * k)] += 1.0
                lu = lu_factor(cap, check_finite=False)
        except (np.linalg.LinAlgError, LinAlgWarning, ValueError):
            return None

        def woodbury(v: np.ndarray) -> np.ndarray:
            t = (a_inv @ v[:, :, None])[:, :, 0]
            wu = np.einsum("zab,zb->za", hess.w, np.einsum("sza,sz->za", hess.v, t))
            c = lu_solve(lu, wu.ravel(), check_finite=False).reshape(n_z, k)
            vc = np.einsum("szb,zb->sz", hess.v, c)
            return t - (q @ vc[:, :, None])[:, :, 0]

        def solve(v: np.ndarray) -> np.ndarray:
            x = woodbury(v)
            scale = np.abs(v).max()
            for _ in range(REFINE):
                r = v - x - (p @ self.h_times(hess, x)[:, :, None])[:, :, 0]
                err = np.abs(r).max()
                if not err > REFINE_TOL * scale:
                    break
                x = x + woodbury(r)
            return x

        return solve

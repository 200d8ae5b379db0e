"""The chi-square program on a support as one compact second-order-cone program (Clarabel).

    minimise  sum_z t_z - 1   over the allowed entries x[w, z] = P(w) C[w, z] >= 0, P(z), t
    subject to  sum_z x[w, z] = P(w),   P(z) = sum_w x[w, z],   sum A[w, z] / P(w) x[w, z] <= D,
                (t_z + P(z), t_z - P(z), 2 P(., z) / sqrt(P(S)))  in the second-order cone, one per z,

with P(s, z) = sum_w P(s | w) x[w, z] written into the cone's rows directly: no variables and no
equality rows for P(S, Z) (the form of ``active_set.py`` has n_s n_z of each, and the same
nonzeros). The leakage's slope at the optimum, dL/dP(s, z) up to a constant per z (which cancels
in every minorant on row-stochastic channels), is read off the cones' duals u: -2 u[z, s] / sqrt(P(s)).
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp

from .data import FiniteData

__all__ = ["chi2_program", "chi2_slope"]


def _entry_rows(data: FiniteData, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each allowed entry k (row w[k]): the (entry, s, P(s | w)) triples of its column of G_s."""
    gcsc = data.g_s.tocsc()
    counts = np.diff(gcsc.indptr)[w]
    kk = np.repeat(np.arange(w.size), counts)
    offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.repeat(gcsc.indptr[w], counts) + offs
    return kk, gcsc.indices[pos], gcsc.data[pos] / data.p_w[w[kk]]


def chi2_program(data: FiniteData, w: np.ndarray, z: np.ndarray, budget: float
                 ) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray, list, int]:
    """(A, b, q, cones, budget row) of the program on the entries (w[k], z[k]) (module docstring).

    Variables: the k entries, then P(z) (n_z), then t (n_z); rows: the n_w row sums and the n_z
    column sums (zero cone), the k signs and the budget (nonnegative cone), then the n_z cones.
    """
    n_w, n_z = data.shape
    n_s = data.g_s.shape[0]
    k = w.size
    p0, t0 = k, k + n_z
    n = t0 + n_z
    ks, zs = np.arange(k), np.arange(n_z)
    dim = n_s + 2
    c0 = n_w + n_z + k + 1  # the first cone row
    kk, s_idx, cond = _entry_rows(data, w)
    base = c0 + dim * zs
    rows = [w, n_w + z, n_w + zs, n_w + n_z + ks, np.full(k, n_w + n_z + k),
            base, base, base + 1, base + 1, c0 + dim * z[kk] + 2 + s_idx]
    cols = [ks, ks, p0 + zs, ks, ks, t0 + zs, p0 + zs, t0 + zs, p0 + zs, kk]
    vals = [np.ones(k), -np.ones(k), np.ones(n_z), -np.ones(k), data.cost[w, z] / data.p_w[w],
            -np.ones(n_z), -np.ones(n_z), -np.ones(n_z), np.ones(n_z), -2.0 * cond / np.sqrt(data.p_s[s_idx])]
    a = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(c0 + dim * n_z, n))
    a.eliminate_zeros()  # explicit zeros (d(u, u) = 0 in the budget row) make Clarabel slower
    b = np.zeros(a.shape[0])
    b[:n_w] = data.p_w
    b[n_w + n_z + k] = budget
    q = np.zeros(n)
    q[t0:] = 1.0
    cones = [clarabel.ZeroConeT(n_w + n_z), clarabel.NonnegativeConeT(k + 1)]
    cones += [clarabel.SecondOrderConeT(dim)] * n_z
    return a, b, q, cones, n_w + n_z + k


def chi2_slope(duals: np.ndarray, data: FiniteData, k: int) -> np.ndarray:
    """The leakage's slope dL/dP(s, z) (up to a constant per z) from the cones' duals, shape (n_s, n_z)."""
    n_w, n_z = data.shape
    n_s = data.g_s.shape[0]
    u = duals[n_w + n_z + k + 1:].reshape(n_z, n_s + 2)[:, 2:]
    return (-2.0 * u / np.sqrt(data.p_s)[None, :]).T

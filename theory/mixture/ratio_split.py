"""Split each bin of the relaxation by the likelihood ratio of the release (the objective's refinement).

In a bounded bin B = [c - h/2, c + h/2] let nu_s be the measure of class s's release
(nu_s(B) = q_s, first moment about c: Y_s = int (z - c) d nu_s).  For thresholds
0 < lambda_1 < ... < lambda_L fixed in advance, cut B into the parts

    P_i = {z in B : lambda_i < d nu_1 / d nu_0 <= lambda_{i+1}},   i = 0..L   (lambda_0 = 0, lambda_{L+1} = inf),

a function of Z, so reporting (bin, part) leaks no more than Z (data processing) and
the objective may be evaluated on the parts' masses x_si = nu_s(P_i).  They satisfy

* sum_i x_si = q_s, and lambda_i x_0i <= x_1i <= lambda_{i+1} x_0i (the ratio on P_i);
* for each threshold lambda = lambda_l, since nu_1 - lambda nu_0 is >= 0 on the parts
  above l and <= 0 on the others, and |z - c| <= h/2 on B,

      |Y_1 - lambda Y_0| = |int (z - c) d(nu_1 - lambda nu_0)| <= (h/2) sum_i |x_1i - lambda x_0i|,

  with the sign of each term known, so the right side is linear.

Why: the release's two classes may sit at different places inside one bin (the
distortion side of the relaxation sees the bin's first moments Y_s), and a bin that
is not split lets them do so for free.  With the single threshold lambda = 1 (the
split of the first version) the free offset is (h/2)|q_1 - q_0|, first order in h
wherever the classes' masses differ; with a threshold near the bin's own ratio
q_1 / q_0 it is (h/2)|q_1 - lambda q_0|, which vanishes as the threshold approaches the
ratio.  The thresholds are therefore placed around a guess of each bin's ratio
(:func:`guess_thresholds`: the previous, coarser solution's ratio at the bin; the
prior odds with a wide spread where there is none), always with lambda = 1, where the
MAP objective changes its guess.  Any thresholds give a valid
lower end; good ones give a tight one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lazy import cvxpy as cp

__all__ = ["COARSE_OFFSETS", "FINE_OFFSETS", "guess_thresholds", "ratio_parts"]

#: log-offsets of the thresholds around the guessed ratio: without a previous solution (the prior odds) ...
COARSE_OFFSETS = (-3.0, -1.5, -0.5, 0.0, 0.5, 1.5, 3.0)
#: ... and around a previous solution's ratio at the bin.
FINE_OFFSETS = (-1.0, -0.25, -0.05, 0.05, 0.25, 1.0)
#: Guessed ratios are clipped to this range of log odds.
LOG_CLIP = 12.0


def guess_thresholds(edges: np.ndarray, weights: np.ndarray,
                     previous: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Thresholds (n_bounded_bins, L) for the bounded bins of ``edges`` (sorted, each row increasing).

    Always 1 (the MAP guess changes where the classes' masses cross; the first version's only threshold)
    and the offsets around a guessed ratio.

    ``previous``: (bin edges, p_sz of shape (2, len(edges) + 1)) of an earlier solution; each new bin
    takes the ratio of the old bin holding its centre.  Without it: the prior odds ``weights[1] / weights[0]``.
    """
    centres = 0.5 * (edges[:-1] + edges[1:])
    if previous is None:
        base = np.full(centres.size, np.log(weights[1] / weights[0]))
        offsets = np.array(COARSE_OFFSETS)
    else:
        old_edges, p_sz = previous
        with np.errstate(divide="ignore", invalid="ignore"):
            log_r = np.log(np.clip(p_sz[1], 1e-300, None)) - np.log(np.clip(p_sz[0], 1e-300, None))
        idx = np.searchsorted(np.asarray(old_edges), centres)  # interval i of the old grid: (e_{i-1}, e_i]
        base = log_r[idx]
        offsets = np.array(FINE_OFFSETS)
    base = np.clip(np.nan_to_num(base, nan=0.0), -LOG_CLIP, LOG_CLIP)
    around = np.exp(base[:, None] + offsets[None, :])
    return np.sort(np.hstack([around, np.ones((centres.size, 1))]), axis=1)


def ratio_parts(centred: list[Any], q_fin: list[Any], h: np.ndarray,
                lam: np.ndarray) -> tuple[list[Any], list[Any]]:
    """Part masses and their constraints (see the module notes).

    ``centred``: [Y_0, Y_1] per bounded bin (cvxpy expressions, shape (n,)); ``q_fin``: [q_0, q_1] per
    bounded bin; ``h``: (n,) bin widths; ``lam``: (n, L) thresholds, increasing along each row.

    Returns ``[x_0, x_1]`` (cvxpy variables of shape (n, L + 1)) and the constraints.
    """
    n, n_thr = lam.shape
    x = [cp.Variable((n, n_thr + 1), nonneg=True) for _ in (0, 1)]
    cons = [cp.sum(x[s], axis=1) == q_fin[s] for s in (0, 1)]
    for i in range(n_thr + 1):
        if i >= 1:  # part i lies above threshold i - 1 (0-based columns of lam)
            cons.append(x[1][:, i] >= cp.multiply(lam[:, i - 1], x[0][:, i]))
        if i < n_thr:
            cons.append(x[1][:, i] <= cp.multiply(lam[:, i], x[0][:, i]))
    for ell in range(n_thr):
        lam_l = lam[:, ell]
        gaps = [x[1][:, i] - cp.multiply(lam_l, x[0][:, i]) for i in range(n_thr + 1)]
        spread = sum(gaps[i] for i in range(ell + 1, n_thr + 1)) - sum(gaps[i] for i in range(ell + 1))
        offset = centred[1] - cp.multiply(lam_l, centred[0])
        cons += [offset <= cp.multiply(h / 2, spread), offset >= -cp.multiply(h / 2, spread)]
    return x, cons

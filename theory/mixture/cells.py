"""Cells of U, bins of Z and the exact per-cell facts of a 1-D Gaussian class model.

The certified sandwich (:mod:`.certified`) discretises the line twice: cells
``C_j`` of U (what a piecewise-constant mechanism sees) and bins ``B_k`` of Z (what
the relaxation keeps of a release).  Both are the intervals of one sorted edge
array ``e_0 < ... < e_m`` closed by two unbounded intervals, ``(-inf, e_0]`` and
``(e_m, inf)``.  Class ``s`` is ``weight_s N(mean_s, sd_s^2)``; everything here is a
closed form of the normal CDF/pdf (truncated-normal moments), tails included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

__all__ = ["Grid", "cell_moments", "interval_gaps", "log_ratio", "log_ratio_coeffs", "moment_coupling", "ratio_range",
           "ratio_tangents", "uniform_edges"]

_SQRT2PI = np.sqrt(2.0 * np.pi)


@dataclass(frozen=True)
class Grid:
    """Intervals of the line from sorted finite ``edges`` (m + 1 of them): m + 2 intervals.

    ``lo[i]``, ``hi[i]`` are the ends of interval i (``lo[0] = -inf``, ``hi[-1] = inf``);
    ``atom[i]`` is a point of interval i (its midpoint; the finite end for the tails).
    """

    edges: np.ndarray

    @property
    def lo(self) -> np.ndarray:
        return np.concatenate([[-np.inf], self.edges])

    @property
    def hi(self) -> np.ndarray:
        return np.concatenate([self.edges, [np.inf]])

    @property
    def atom(self) -> np.ndarray:
        e = self.edges
        return np.concatenate([[e[0]], 0.5 * (e[:-1] + e[1:]), [e[-1]]])

    def __len__(self) -> int:
        return len(self.edges) + 1


def uniform_edges(means: np.ndarray, sds: np.ndarray, step: float, tails: float = 6.5) -> np.ndarray:
    """Edges with spacing ``step`` covering every class mean +- ``tails`` sd (outside: tail cells)."""
    lo = float(np.min(means - tails * sds))
    hi = float(np.max(means + tails * sds))
    n = max(2, int(np.ceil((hi - lo) / step)))
    mid = 0.5 * (lo + hi)
    return mid + step * (np.arange(n + 1) - n / 2)


def _pdf(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(x), np.exp(-0.5 * np.square(np.where(np.isfinite(x), x, 0.0))) / _SQRT2PI, 0.0)


def _x_pdf(x: np.ndarray) -> np.ndarray:
    """x phi(x), 0 at +-inf."""
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0.0)
    return np.where(finite, xf * _pdf(xf), 0.0)


def cell_moments(grid: Grid, mean: float, sd: float, weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """weight * (P(U in C), E[U; U in C], E[U^2; U in C]) per cell for U ~ N(mean, sd^2).

    Truncated-normal identities with a = (lo - mean)/sd, b = (hi - mean)/sd:
    P = Phi(b) - Phi(a); E[U; C] = mean P + sd (phi(a) - phi(b));
    E[U^2; C] = (mean^2 + sd^2) P + 2 mean sd (phi(a) - phi(b)) + sd^2 (a phi(a) - b phi(b)).
    Masses use the upper tail (1 - Phi(-x)) where that is more accurate.
    """
    a = (grid.lo - mean) / sd
    b = (grid.hi - mean) / sd
    mass = np.where(a > 0, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))
    dphi = _pdf(a) - _pdf(b)
    m1 = mean * mass + sd * dphi
    m2 = (mean**2 + sd**2) * mass + 2 * mean * sd * dphi + sd**2 * (_x_pdf(a) - _x_pdf(b))
    return weight * mass, weight * m1, weight * m2


def interval_gaps(cells: Grid, bins: Grid) -> np.ndarray:
    """min |z - u| over u in cell j, z in bin k (0 where they touch), shape (n_cells, n_bins)."""
    left = bins.lo[None, :] - cells.hi[:, None]  # bin entirely above the cell
    right = cells.lo[:, None] - bins.hi[None, :]  # bin entirely below the cell
    with np.errstate(invalid="ignore"):
        gap = np.maximum(np.maximum(left, right), 0.0)
    return np.nan_to_num(gap, nan=0.0)


def log_ratio(u: np.ndarray, m: tuple[float, float], s: tuple[float, float]) -> np.ndarray:
    """log N(u; m1, s1^2) - log N(u; m0, s0^2), finite u."""
    return (np.log(s[0] / s[1]) - 0.5 * ((u - m[1]) / s[1]) ** 2 + 0.5 * ((u - m[0]) / s[0]) ** 2)


def log_ratio_coeffs(m: tuple[float, float], s: tuple[float, float]) -> tuple[float, float]:
    """(a, b) of :func:`log_ratio` = a u^2 + b u + const."""
    return 0.5 / s[0] ** 2 - 0.5 / s[1] ** 2, m[1] / s[1] ** 2 - m[0] / s[0] ** 2


def ratio_range(cells: Grid, means: tuple[float, float], sds: tuple[float, float],
                log_offset: float) -> tuple[np.ndarray, np.ndarray]:
    """Range (lo, hi) over u in each cell of kappa(u) = exp(log_offset) N(u; m1, s1^2) / N(u; m0, s0^2).

    With log_offset = log(P(S=1) / P(S=0)), kappa is the ratio of the two classes'
    weighted densities; its log is quadratic in u, so the extremes are at the
    cell ends or the vertex.  Unbounded tail cells give 0 or inf where it diverges.
    """
    lo, hi = cells.lo, cells.hi
    a, b = log_ratio_coeffs(means, sds)  # log ratio = a u^2 + b u + c
    vals = [log_ratio(np.clip(x, -1e150, 1e150), means, sds) for x in (lo, hi)]
    vals = [np.where(np.isfinite(x), v, _limit(a, b, x)) for v, x in zip(vals, (lo, hi))]
    cand = np.stack(vals)
    if a != 0:
        vertex = -b / (2 * a)
        inside = (lo < vertex) & (vertex < hi)
        vv = np.where(inside, log_ratio(np.full(lo.shape, vertex), means, sds), np.nan)
        cand = np.vstack([cand, vv[None, :]])
    with np.errstate(over="ignore", invalid="ignore"):
        rlo = np.exp(np.nanmin(cand, axis=0) + log_offset)
        rhi = np.exp(np.nanmax(cand, axis=0) + log_offset)
    return rlo, rhi


def _limit(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """Limit of a u^2 + b u at u = x = +-inf (only used where x is infinite)."""
    sign = np.sign(x)
    lead = np.where(a != 0, np.sign(a) * np.ones_like(x), np.sign(b) * sign)
    return np.where(lead > 0, np.inf, np.where(lead < 0, -np.inf, 0.0))


def _mass(lo: np.ndarray, hi: np.ndarray, mean: float, sd: float, weight: float) -> np.ndarray:
    a, b = (lo - mean) / sd, (hi - mean) / sd
    return weight * np.where(a > 0, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))


def ratio_tangents(cells: Grid, weights: np.ndarray, means: np.ndarray, sds: np.ndarray,
                   theta: float) -> dict[str, np.ndarray]:
    """Tangents of the Neyman-Pearson region of each bounded cell at the point t = lo + theta (hi - lo).

    For kappa(u) = P(S=1) p1(u) / (P(S=0) p0(u)) monotone on the cell, and any
    kernel r(u) in [0, 1], the pair a = int_C P(S=0) p0 r, b = int_C P(S=1) p1 r satisfies

        b_bot - kappa(t) a_bot <= b - kappa(t) a <= b_top - kappa(t) a_top,

    where (a_top, b_top) are the class masses of the part of the cell where
    kappa > kappa(t) (an interval, by monotonicity) and (a_bot, b_bot) of the rest:
    b - kappa(t) a = int (p1' - kappa(t) p0') r is largest for r the indicator of
    {kappa > kappa(t)} and smallest for that of its complement.

    Returns arrays of shape (n,): ``kappa``, ``top`` (= b_top - kappa a_top),
    ``bot`` (= b_bot - kappa a_bot) and ``valid`` (bounded cell, kappa monotone on
    it, kappa(t) finite and positive).
    """
    lo, hi = cells.lo, cells.hi
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo_f, hi_f = np.where(bounded, lo, 0.0), np.where(bounded, hi, 1.0)
    t = lo_f + theta * (hi_f - lo_f)
    a, b = log_ratio_coeffs(means, sds)
    slope_lo, slope_hi = 2 * a * lo_f + b, 2 * a * hi_f + b  # derivative of log kappa at the ends
    increasing = (slope_lo >= 0) & (slope_hi >= 0)
    decreasing = (slope_lo <= 0) & (slope_hi <= 0)
    with np.errstate(over="ignore"):
        kappa = np.exp(log_ratio(t, (means[0], means[1]), (sds[0], sds[1])) + np.log(weights[1] / weights[0]))
    upper_lo, upper_hi = np.where(increasing, t, lo_f), np.where(increasing, hi_f, t)
    lower_lo, lower_hi = np.where(increasing, lo_f, t), np.where(increasing, t, hi_f)
    mass = [[_mass(x, y, means[s], sds[s], weights[s]) for s in (0, 1)]
            for x, y in ((upper_lo, upper_hi), (lower_lo, lower_hi))]
    valid = bounded & (increasing | decreasing) & np.isfinite(kappa) & (kappa > 0)
    return {"kappa": kappa, "top": mass[0][1] - kappa * mass[0][0], "bot": mass[1][1] - kappa * mass[1][0],
            "valid": valid}


def moment_coupling(cells: Grid, weights: np.ndarray, means: np.ndarray, sds: np.ndarray,
                    m1: np.ndarray, mass: np.ndarray) -> dict[str, np.ndarray]:
    """Coupling of the two classes' U-moments under a shared kernel, per bounded cell.

    With c the cell's midpoint, lambda = kappa(c) and kappa monotone on the cell,
    (u - c)(P(S=1) p1(u) - lambda P(S=0) p0(u)) has one sign on the whole cell
    (both factors change sign at c), so for any kernel r(u) in [0, 1]

        L(r) = int (u - c)(p1' - lambda p0') r du  lies between 0 and L(1),

    where L(r) = (v_1 - c pi_1) - lambda (v_0 - c pi_0) in terms of the pair's masses
    pi_s and U-moments v_s.  ``m1``, ``mass``: (2, n) weighted cell moments.

    Returns arrays of shape (n,): ``lam``, ``centre``, ``lo``, ``hi`` (the range of L)
    and ``valid``.
    """
    lo, hi = cells.lo, cells.hi
    bounded = np.isfinite(lo) & np.isfinite(hi)
    c = np.where(bounded, 0.5 * (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0)), 0.0)
    a, b = log_ratio_coeffs(means, sds)
    slope_lo = 2 * a * np.where(bounded, lo, 0.0) + b
    slope_hi = 2 * a * np.where(bounded, hi, 0.0) + b
    increasing = (slope_lo >= 0) & (slope_hi >= 0)
    decreasing = (slope_lo <= 0) & (slope_hi <= 0)
    with np.errstate(over="ignore"):
        lam = np.exp(log_ratio(c, (means[0], means[1]), (sds[0], sds[1])) + np.log(weights[1] / weights[0]))
    whole = (m1[1] - c * mass[1]) - lam * (m1[0] - c * mass[0])
    zero = np.zeros_like(whole)
    valid = bounded & (increasing | decreasing) & np.isfinite(lam) & (lam > 0)
    return {"lam": lam, "centre": c, "lo": np.where(increasing, zero, whole),
            "hi": np.where(increasing, whole, zero), "valid": valid}

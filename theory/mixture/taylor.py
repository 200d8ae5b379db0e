"""Second-order coupling of the two classes' pair moments under a shared kernel (useful observation).

Under ``useful`` observation the mechanism sees U only, so a (cell, bin) pair's class masses and
moments are integrals of one kernel r(u) in [0, 1] against the two weighted class densities
w_s(u) = P(S=s) p_s(u):

    pi_s = int_C w_s r,   v_s - c pi_s = int_C (u - c) w_s r,   W_s = int_C (u - c)^2 w_s r,

with c the cell's midpoint.  Expanding the density ratio kappa = w_b / w_a of the two classes
(a, b) = (0, 1) or (1, 0) about c (Taylor with Lagrange remainder, xi(u) in the cell):

    kappa(u) = kappa(c) + kappa'(c) (u - c) + kappa''(xi) (u - c)^2 / 2,

so that, for every kernel,

    pi_b - kappa(c) pi_a - kappa'(c) (v_a - c pi_a)  lies in  [k2_lo W_a / 2, k2_hi W_a / 2],
    (v_b - c pi_b) - kappa(c) (v_a - c pi_a) - kappa'(c) W_a  lies in  [-M h W_a / 2, M h W_a / 2],

where [k2_lo, k2_hi] holds kappa'' on the cell, M = max |kappa''| there and h the cell's half-width
(|u - c| <= h).  W_a <= h^2 pi_a, so the slack of the first line is of second order in the cell width
(the ratio range and the Neyman-Pearson tangents of :mod:`.cells` leave first-order slack: a bin that
takes the left part of a cell gets that part's ratio, which they do not see).

The range of kappa'' on a cell is exact: log kappa = g is quadratic (g(u) = A u^2 + B u + const),
kappa'' = kappa (g'^2 + 2 A) and (kappa'')' = kappa g' (g'^2 + 6 A), so its extremes lie at the cell's
ends or at the roots of g' = 0 and g'^2 = -6 A inside it.  (The product of the two factors' ranges, the
first version, was 1.46 times wider at the median cell with kappa(c) in [1e-3, 1e3] on prior 0.5, sigma0 2,
cells 0.4, for kappa = w_1 / w_0; as wide for w_0 / w_1.)
"""

from __future__ import annotations

import numpy as np

from .cells import Grid, log_ratio, log_ratio_coeffs

__all__ = ["TOUCH_POINTS", "taylor_coupling"]

#: Besides the expansion about the midpoint, quadratic minorants and majorants of kappa touching it at
#: c + theta h for each theta here (h the half-width): kappa(c + t) >= kappa(t0) + kappa'(t0) (t - t0)
#: + k2_lo (t - t0)^2 / 2 on the cell (and <= with k2_hi), so a kernel concentrated near c + t0 is held
#: to its own ratio, not the midpoint's.
TOUCH_POINTS = (-0.5, 0.5)


def _direction(cells: Grid, weights: np.ndarray, means: np.ndarray, sds: np.ndarray, a: int, b: int
               ) -> dict[str, np.ndarray]:
    lo, hi = cells.lo, cells.hi
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo_f, hi_f = np.where(bounded, lo, 0.0), np.where(bounded, hi, 0.0)
    c, h = 0.5 * (lo_f + hi_f), 0.5 * (hi_f - lo_f)
    pair_m, pair_s = (means[a], means[b]), (sds[a], sds[b])
    big_a, big_b = log_ratio_coeffs(pair_m, pair_s)  # log (w_b / w_a)(u) = A u^2 + B u + const
    offset = float(np.log(weights[b] / weights[a]))

    def kappa(u: np.ndarray) -> np.ndarray:
        return np.exp(log_ratio(u, pair_m, pair_s) + offset)

    def second(u: np.ndarray) -> np.ndarray:  # kappa'' = kappa (g'^2 + g'')
        return kappa(u) * ((2 * big_a * u + big_b) ** 2 + 2 * big_a)

    # (kappa'')' = kappa g' (g'^2 + 6 A): the extremes of kappa'' on a cell are at its ends or where
    # g' = 0 or g'^2 = -6 A
    roots = [] if big_a == 0 else [-big_b / (2 * big_a)]
    if big_a < 0:
        roots += [(r - big_b) / (2 * big_a) for r in (np.sqrt(-6 * big_a), -np.sqrt(-6 * big_a))]
    with np.errstate(over="ignore", invalid="ignore"):
        kc = kappa(c)
        d1 = kc * (2 * big_a * c + big_b)  # kappa'(c)
        cand = [second(lo_f), second(hi_f)]
        cand += [np.where((lo_f < r) & (r < hi_f), second(np.full_like(c, r)), np.nan) for r in roots]
        cand = np.stack(cand)
        k2_lo, k2_hi = np.nanmin(cand, axis=0), np.nanmax(cand, axis=0)
        third = np.where(bounded, np.maximum(np.abs(k2_lo), np.abs(k2_hi)) * h, np.inf)
        touch = []
        for theta in TOUCH_POINTS:  # quadratic minorant and majorant of kappa touching it at c + t0
            t0 = theta * h
            k0 = kappa(c + t0)
            k1 = k0 * (2 * big_a * (c + t0) + big_b)
            touch.append({f"{k}_{end}": v for end, k2 in (("lo", k2_lo), ("hi", k2_hi))
                          for k, v in (("alpha", k0 - k1 * t0 + 0.5 * k2 * t0**2), ("beta", k1 - k2 * t0),
                                       ("gamma", 0.5 * k2))})
    valid = bounded & np.isfinite(kc) & (kc > 0) & np.isfinite(d1) & np.isfinite(k2_lo) & np.isfinite(k2_hi)
    return {"kappa": kc, "d1": d1, "k2_lo": k2_lo, "k2_hi": k2_hi, "third": third, "centre": c,
            "valid": valid, "touch": touch}


def taylor_coupling(cells: Grid, weights: np.ndarray, means: np.ndarray, sds: np.ndarray
                    ) -> list[tuple[int, int, dict[str, np.ndarray]]]:
    """Per bounded cell, the coefficients of the module's two couplings for both directions:
    ``[(a, b, table)]`` with table arrays of shape (n,): ``kappa`` (kappa(c)), ``d1`` (kappa'(c)),
    ``k2_lo`` / ``k2_hi`` (the range of kappa'' on the cell), ``third`` (M h), ``centre`` (c) and
    ``valid``."""
    return [(a, b, _direction(cells, weights, means, sds, a, b)) for a, b in ((0, 1), (1, 0))]

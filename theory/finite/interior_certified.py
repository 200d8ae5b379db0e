"""The mi and chi2 programs by the interior point of ``interior_dense.py`` (with the Newton system of
``interior_full.py`` where each w has one s), certified over every entry.

The interior point leaves each release the optimum does not use with a vanishing
mass (P(z) ~ 1e-10) whose posterior, and so whose tangent, is noise: the tangent
bound of such a channel is loose by as much as 3e-2. So the channel is cleaned
first (a release is dropped where every entry is headed for 0, C P(w) below its
dual, or where its P(z) is below VANISH times the largest; rows renormalised; the
budget met exactly by mixing with each row's cheapest used release), the tangent
taken on the releases it uses, and each dropped release z priced by the pmf q whose minorant slope keeps
every row's score sum_s P(s, w) m_s(q) + lambda A[w, z] (m: the minorant slope of
``leakage.py``) above the row's minimum over the used releases: a q that clears them found by the dual
steps of ``unused.clearing_qs`` (such a q is a mixture of the rows' posteriors P(S|w)), else the best q of
``unused.best_unused_qs`` (Clarabel). Pricing each dropped release
against the used ones only (not against the other dropped ones, whose q is not
settled yet) is what makes the bound close: at the optimum every unused release
has such a q (strong duality). The bound is :func:`~.certificate.linearised_bound`
of those slopes, recomputed from the channel; nothing of the interior point is trusted.
"""

from __future__ import annotations

import numpy as np

from .active_set import meet_budget
from .certificate import linearised_bound
from .data import FiniteData
from .interior_dense import DenseSystem, InteriorResult, solve_interior
from .interior_full import FULL_MAX_N, FullSystem, one_s_per_w
from .interior_lowrank import LowRankSystem
from .leakage import MINORANT_SLOPES, SMOOTH_LEAKAGES
from .mirror import SmoothResult
from .size import memory_limit
from .unused import best_unused_qs, clearing_qs

__all__ = ["INTERIOR_MAX_W", "VANISH", "interior_system", "solve_interior_certified"]

VANISH = 1e-7  # releases with P(z) below this times the largest are dropped from the channel
INTERIOR_MAX_W = 400  # observation alphabets up to this size: a step's n_z blocks of n_w x n_w
GAPS = (1e-9, 1e-11, 1e-13)  # the barrier gaps tried in turn (an intermediate 1e-10, measured 2026-11-28 over the
# 48 programs of interior_dense's _STEP note: 877 -> 864 steps, 1.36 -> 1.33 s in all, noise; random useful chi2
# m = 30 at 0.3 fails its certificate at 1e-9 (gap 0.26: a release of mass 1e-8 dropped, its pricing skipped) and
# at 1e-10, and certifies at 1e-11 after 34 steps)
LOW_RANK_ARRAYS = 5  # (n_s, n_z, n_z) arrays of the low-rank solve (P's blocks, A, its inverse, A^-1 P, a product)
IPM_BYTES_PER_UNKNOWN = 200  # the interior point's (n_w, n_z) arrays (measured: 176 MB above the data's
# 143 MB peak at 1e6 unknowns, random joint, full, m = 100, mi and chi2); with the dense G and the blocks
# above, the low-rank interior point runs only within ``size.memory_limit()``


def _price_dropped(data: FiniteData, privacy: str, g: np.ndarray, scores: np.ndarray, dropped: np.ndarray,
                   lam: float) -> np.ndarray:
    """Scores with each dropped release's column made to clear the used releases' row minima: by the q of
    :func:`~.unused.clearing_qs`, else the best q of :func:`~.unused.best_unused_qs` (Clarabel)."""
    shifts = lam * data.cost
    used_min = (scores + shifts)[:, ~dropped].min(axis=1)
    out = scores.copy()
    short = [z for z in np.flatnonzero(dropped) if not np.all(out[:, z] + shifts[:, z] >= used_min)]
    if not short:
        return out
    qs, cleared = clearing_qs(privacy, g, data.p_s, used_min, shifts[:, short])
    out[:, np.asarray(short)[cleared]] = g.T @ MINORANT_SLOPES[privacy](qs[:, cleared], data.p_s)
    short = list(np.asarray(short)[~cleared])
    if not short:
        return out
    qs = best_unused_qs(privacy, g, data.p_s, used_min, shifts[:, short])
    if qs is None:
        return out
    cols = g.T @ MINORANT_SLOPES[privacy](qs, data.p_s)
    better = (np.minimum(used_min[:, None], cols + shifts[:, short]).sum(axis=0)
              > np.minimum(used_min[:, None], out[:, short] + shifts[:, short]).sum(axis=0))
    out[:, np.asarray(short)[better]] = cols[:, better]
    return out


def interior_system(data: FiniteData, privacy: str) -> DenseSystem | FullSystem | None:
    """The interior point's Newton system for this program, or None where none fits. Where each w has one s:
    the y-space one of ``interior_full.py`` (n_s n_z <= FULL_MAX_N), above that its low-rank solve of
    ``interior_lowrank.py`` (where its n_s blocks of n_z x n_z, the dense G and its (n_w, n_z) arrays fit in
    the memory limit of ``size.py``); else the dense one of ``interior_dense.py`` (n_w <= INTERIOR_MAX_W)."""
    n_w, n_z = data.shape
    if n_z < 2:
        return None
    if one_s_per_w(data.g_s):
        n_s = data.p_s.size
        if n_s * n_z <= FULL_MAX_N:
            return FullSystem(privacy, data.g_s, data.p_s, data.cost)
        if 8 * (LOW_RANK_ARRAYS * n_s * n_z * n_z + n_s * n_w) + IPM_BYTES_PER_UNKNOWN * n_w * n_z > memory_limit():
            return None
        return LowRankSystem(privacy, data.g_s, data.p_s, data.cost)
    if n_w > INTERIOR_MAX_W:
        return None
    return DenseSystem(privacy, np.asarray(data.g_s.todense()), data.p_s, data.cost)


def solve_interior_certified(data: FiniteData, budget: float, privacy: str, tol: float,
                             beta0: float | None = None) -> SmoothResult | None:
    """(channel, value, bound, multiplier) of the interior point's answer, or None where it fails.

    The interior point stops at the barrier gaps of GAPS in turn, each time going on from where it
    stopped, until the certificate's relative gap is within ``tol``: the gap of the tangent bound
    can be a hundred times the barrier's (chi2, random joint, useful m = 50). ``beta0``: a guess of the
    budget's multiplier to start from (``interior_dense.solve_interior``).
    """
    system = interior_system(data, privacy)
    if system is None:
        return None
    g = system.g_dense
    best: SmoothResult | None = None
    r = None
    for gap in GAPS:
        r = solve_interior(privacy, g, data.p_s, data.cost, budget, gap, r, system=system,
                           floor=tol if system.stops_at_zero else None, beta0=beta0)
        if r is None:
            return best
        s = _certify(data, privacy, g, r, budget, tol)
        if s is not None and (best is None or s.value - s.bound < best.value - best.bound):
            best = s
        if best is not None and best.value - best.bound <= tol * max(1.0, abs(best.value)):
            break
    return best


def _certify(data: FiniteData, privacy: str, g: np.ndarray, r: InteriorResult, budget: float, tol: float
             ) -> SmoothResult | None:
    """The interior point's channel cleaned of the releases it is emptying, and its tangent bound.

    The dropped releases are priced only where the bound could then certify to ``tol``: pricing can only
    lower the bound without them (a column adds min(row minimum, its score) to each row), so where that
    bound falls short the tangent's own (valid, looser) scores of the dropped releases are kept (random
    joint, useful, chi2: the first barrier gap's pricing, 7 ms at m = 30 and 42 ms at m = 50, was wasted)."""
    # a release is dropped where every entry is headed for 0 (C P(w) below its dual), or its mass is negligible
    mass = (g @ r.channel).sum(axis=0)
    dropped = np.all(r.channel * data.p_w[:, None] < r.duals, axis=0) | (mass < VANISH * mass.max())
    channel = np.where(dropped[None, :], 0.0, r.channel)
    rows = channel.sum(axis=1, keepdims=True)
    if not np.all(rows > 0):
        return None
    channel = meet_budget(channel / rows, data, budget, ~dropped)
    lin = SMOOTH_LEAKAGES[privacy](g @ channel, data.p_s)
    dropped |= ~lin.used
    scores = g.T @ lin.slope
    if dropped.any() and _may_certify(lin.value, lin.offset, scores, data.cost, budget, dropped, r.multiplier, tol):
        scores = _price_dropped(data, privacy, g, scores, dropped, r.multiplier)
    bound, lam = linearised_bound(lin.offset, scores, data.cost, budget, None, r.multiplier)
    return SmoothResult(channel, lin.value, max(bound, 0.0), lam, r.iterations)


def _may_certify(value: float, offset: float, scores: np.ndarray, cost: np.ndarray, budget: float,
                 dropped: np.ndarray, lam: float, tol: float) -> bool:
    """Whether the bound with the dropped releases left out (an upper bound on any pricing's) certifies."""
    keep = np.broadcast_to(~dropped[None, :], scores.shape)
    bound, _ = linearised_bound(offset, scores, cost, budget, keep, lam)
    return value - bound <= tol * max(1.0, abs(value))

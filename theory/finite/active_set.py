"""An interior-point solver on a restricted support, certified over all entries (mi, chi2).

    minimise_C  L(G_s C)   subject to   C row-stochastic,  <A, C> <= D

An optimal channel needs few entries: given the optimal P_SZ, the channels
reaching it within the budget form a polytope whose vertices have at most
n_w + n_s n_z + 1 non-zero entries (about two per row of W, out of n_z).
This solver keeps a set of allowed entries C[w, z] (the support), solves the
program restricted to them as a conic program with Clarabel called directly
(variables: the allowed entries, P(S,Z) and P(Z); exponential cones
(-t, P(s,z), P(s) P(z)) for ``mi``, one rotated second-order cone per z for
``chi2``: |P(.,z) / sqrt(P(S))|^2 <= t_z P(z)), and prices every left-out
entry with the tangent of the leakage at the restricted optimum: the
certificate :func:`~.certificate.linearised_bound` over all n_w n_z entries
(recomputed from the returned channel, not trusted from Clarabel; at least 0,
since both leakages are) with the restricted program's budget multiplier is
the pricing. Entries whose score undercuts their row's minimum are added and the
restricted program solved again; the support only grows, so the value only
falls.

The returned channel is made exactly feasible first: Clarabel meets the
budget only to its tolerance, so the channel is mixed with each row's
cheapest release just enough to meet it.
"""

from __future__ import annotations

from dataclasses import dataclass

import clarabel
import numpy as np
import scipy.sparse as sp

from .certificate import linearised_bound
from .chi2_cone import chi2_program, chi2_slope
from .data import FiniteData
from .leakage import MINORANT_SLOPES, Q_OF_SLOPE, SMOOTH_LEAKAGES
from .mirror import SmoothResult, fill_unused
from .unused import best_unused_q

__all__ = ["ActiveSetSolver", "meet_budget"]

_TOL = 1e-12
WHOLE_TOL = _TOL  # the whole program: as tight as the support's (the channel, not only the value, is then accurate)
_MAX_ROUNDS = 12
_CLEAN = 1e-9
_SHRINK = 1e-6
COMPACT_PER_W = 2.0  # chi2 on a support with at most this many s per w (the full observation: 1): the compact
# program of ``chi2_cone.py`` (random joint, full, m = 100, 146,875 entries: 7.6 CPU s against 20 s for
# this module's); denser G_s (useful: m per w) keeps this module's, whose duals price the unused releases
# better there (useful m = 50: certified in 2 rounds, 0.37 s, against 3 rounds, 0.53 s)
_MAX_REFIT = 64  # unused releases whose q is refitted by a conic program, per certificate


CHANNEL_TOL = 1e-6  # the duals' bound counts only for a channel whose own tangent bound is this close
_RETRIES = ({}, {"equilibrate_enable": False}, {"max_step_fraction": 0.9})  # settings tried in turn


def _settings(tol: float = _TOL, **changes: object) -> clarabel.DefaultSettings:
    s = clarabel.DefaultSettings()
    s.verbose = False
    s.tol_gap_abs = s.tol_gap_rel = s.tol_feas = tol
    s.tol_ktratio = 1e-8
    s.max_iter = 200
    for name, value in changes.items():
        setattr(s, name, value)
    return s


@dataclass
class _Layout:
    """Column offsets of the restricted program's variables: entries, P(S,Z), P(Z), t."""

    k: int
    n_s: int
    n_z: int
    n_t: int

    @property
    def y0(self) -> int:
        return self.k

    @property
    def p0(self) -> int:
        return self.k + self.n_s * self.n_z

    @property
    def t0(self) -> int:
        return self.p0 + self.n_z

    @property
    def n(self) -> int:
        return self.t0 + self.n_t


def _linear_rows(data: FiniteData, w: np.ndarray, z: np.ndarray, lay: _Layout, budget: float
                 ) -> tuple[list[sp.coo_matrix], list[np.ndarray], list]:
    """Row sums, P(S,Z) = G_s C, P(Z) = column sums of P(S,Z) (zero cone); C >= 0, budget (nonneg).

    The unknowns are the joint entries x = P(w) C[w, z] (rows summing to P(w)), so that every
    coefficient is a conditional probability or a distortion: well scaled however rare w is.
    """
    n_w = data.shape[0]
    k, n_s, n_z, n = lay.k, lay.n_s, lay.n_z, lay.n
    ks = np.arange(k)
    p_w = data.p_w
    rowsum = sp.coo_matrix((np.ones(k), (w, ks)), shape=(n_w, n))
    gcsc = data.g_s.tocsc()
    counts = np.diff(gcsc.indptr)[w]
    kk = np.repeat(ks, counts)
    starts = np.repeat(gcsc.indptr[w], counts)
    offs = np.arange(counts.sum()) - np.repeat(np.r_[0, np.cumsum(counts)[:-1]], counts)
    pos = starts + offs
    s_idx = gcsc.indices[pos]
    y_rows = s_idx * n_z + z[kk]
    sz = np.arange(n_s * n_z)
    ysz = sp.coo_matrix((np.r_[np.ones(n_s * n_z), -gcsc.data[pos] / p_w[w[kk]]], (np.r_[sz, y_rows], np.r_[lay.y0 + sz, kk])),
                        shape=(n_s * n_z, n))
    zs = np.arange(n_z)
    pz = sp.coo_matrix((np.r_[np.ones(n_z), -np.ones(n_s * n_z)],
                        (np.r_[zs, sz % n_z], np.r_[lay.p0 + zs, lay.y0 + sz])), shape=(n_z, n))
    nonneg = sp.coo_matrix((-np.ones(k), (ks, ks)), shape=(k, n))
    brow = sp.coo_matrix((data.cost[w, z] / p_w[w], (np.zeros(k, dtype=int), ks)), shape=(1, n))
    mats = [rowsum, ysz, pz, nonneg, brow]
    rhs = [p_w, np.zeros(n_s * n_z), np.zeros(n_z), np.zeros(k), np.array([budget])]
    cones = [clarabel.ZeroConeT(n_w + n_s * n_z + n_z), clarabel.NonnegativeConeT(k + 1)]
    return mats, rhs, cones


def _mi_cones(p_s: np.ndarray, lay: _Layout, present: np.ndarray) -> tuple[sp.coo_matrix, np.ndarray, list]:
    """(-t, P(s,z), P(s) P(z)) in the exponential cone: t >= P(s,z) log(P(s,z) / (P(s) P(z))).

    Only for the pairs (s, z) the support can reach (``present``, flat indices s n_z + z): the
    others are 0 by the equality rows, and a cone with no interior point stalls the interior point.
    """
    n_z = lay.n_z
    sz = present
    r = 3 * np.arange(sz.size)
    rows = np.r_[r, r + 1, r + 2]
    cols = np.r_[lay.t0 + np.arange(sz.size), lay.y0 + sz, lay.p0 + sz % n_z]
    vals = np.r_[np.ones(sz.size), -np.ones(sz.size), -p_s[sz // n_z]]
    mat = sp.coo_matrix((vals, (rows, cols)), shape=(3 * sz.size, lay.n))
    return mat, np.zeros(3 * sz.size), [clarabel.ExponentialConeT()] * sz.size


def _chi2_cones(p_s: np.ndarray, lay: _Layout, present: np.ndarray) -> tuple[sp.coo_matrix, np.ndarray, list]:
    """(t_z + P(z), t_z - P(z), 2 P(.,z) / sqrt(P(S))) in the second-order cone, one per z."""
    n_s, n_z = lay.n_s, lay.n_z
    dim = n_s + 2
    zs = np.arange(n_z)
    base = dim * zs
    rows = [base, base, base + 1, base + 1]
    cols = [lay.t0 + zs, lay.p0 + zs, lay.t0 + zs, lay.p0 + zs]
    vals = [-np.ones(n_z), -np.ones(n_z), -np.ones(n_z), np.ones(n_z)]
    s_idx, z_idx = np.divmod(np.arange(n_s * n_z), n_z)
    rows.append(dim * z_idx + 2 + s_idx)
    cols.append(lay.y0 + s_idx * n_z + z_idx)
    vals.append(-2.0 / np.sqrt(p_s[s_idx]))
    mat = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(dim * n_z, lay.n))
    return mat, np.zeros(dim * n_z), [clarabel.SecondOrderConeT(dim)] * n_z


def _restricted(data: FiniteData, mask: np.ndarray, budget: float, privacy: str, tol: float = _TOL
                ) -> tuple[np.ndarray, float, np.ndarray] | None:
    """The restricted program's optimal channel (zeros off ``mask``), the budget's multiplier
    and the duals of the rows P(S,Z) = G_s C (the leakage's slope at the optimum, shape
    (n_s, n_z): a candidate minorant for the columns the channel leaves unused), all from
    Clarabel; None if Clarabel fails."""
    n_s, n_z = data.g_s.shape[0], data.shape[1]
    w, z = np.nonzero(mask)
    compact = privacy == "chi2" and data.g_s.nnz <= COMPACT_PER_W * data.shape[0]
    if compact:
        a, b, q, cones, budget_row = chi2_program(data, w, z, budget)
        p = sp.csc_matrix((q.size, q.size))
    else:
        present = np.flatnonzero(np.asarray(data.g_s @ mask.astype(float)).ravel() > 0)
        lay = _Layout(w.size, n_s, n_z, present.size if privacy == "mi" else n_z)
        mats, rhs, cones = _linear_rows(data, w, z, lay, budget)
        cone_mat, cone_rhs, cone_list = (_mi_cones if privacy == "mi" else _chi2_cones)(data.p_s, lay, present)
        cones = cones + cone_list
        a = sp.vstack(mats + [cone_mat]).tocsc()
        a.eliminate_zeros()  # explicit zeros (d(u, u) = 0 in the budget row) make Clarabel ~5x slower
        b = np.concatenate(rhs + [cone_rhs])
        q = np.zeros(lay.n)
        q[lay.t0:] = 1.0
        p = sp.csc_matrix((lay.n, lay.n))
        budget_row = data.shape[0] + n_s * n_z + n_z + w.size
    for changes in _RETRIES:  # Clarabel's equilibration occasionally stalls it on these cones
        sol = clarabel.DefaultSolver(p, q, a, b, cones, _settings(tol, **changes)).solve()
        if str(sol.status) in ("Solved", "AlmostSolved"):
            break
    else:
        return None
    channel = np.zeros(mask.shape)
    x = np.asarray(sol.x)[: w.size] / data.p_w[w]
    channel[w, z] = np.where(x > _CLEAN, x, 0.0)  # interior-point noise on entries that are 0 at the optimum
    sums = channel.sum(axis=1, keepdims=True)
    if not np.all(sums > 0):
        return None
    duals = np.asarray(sol.z)
    if compact:
        slope = chi2_slope(duals, data, w.size)
    else:
        slope = -duals[data.shape[0] : data.shape[0] + n_s * n_z].reshape(n_s, n_z)
    return channel / sums, max(float(duals[budget_row]), 0.0), slope


def meet_budget(channel: np.ndarray, data: FiniteData, budget: float, used: np.ndarray | None = None
                ) -> np.ndarray:
    """Mix with each row's cheapest release just enough that E d <= budget exactly.

    ``used`` (bool, shape (n_z,)): mix with each row's cheapest of these releases instead, where that
    channel meets the budget (so that no release the channel leaves empty gets a sliver of mass, whose
    posterior would be noise)."""
    dist = float((data.cost * channel).sum())
    if dist <= budget:
        return channel
    cheap = np.zeros_like(channel)
    floor = data.min_distortion
    if used is not None and used.any():
        pick = np.where(used[None, :], data.cost, np.inf).argmin(axis=1)
        floor = float(data.cost[np.arange(channel.shape[0]), pick].sum())
        if floor >= budget:
            return meet_budget(channel, data, budget)
        cheap[np.arange(channel.shape[0]), pick] = 1.0
    else:
        cheap[np.arange(channel.shape[0]), data.cost.argmin(axis=1)] = 1.0
    if dist <= floor:  # a budget a rounding error below the minimum distortion (which the
        return cheap  # solvers accept): the cheapest channel is as close as any (was a ZeroDivisionError)
    theta = (dist - budget) / (dist - floor)
    for _ in range(60):  # rounding may leave the mixture a hair over: mix a little more
        theta = min(1.0, theta)
        out = (1.0 - theta) * channel + theta * cheap
        if float((data.cost * out).sum()) <= budget or theta == 1.0:
            return out
        theta = 2.0 * theta + 1e-15
    return cheap  # pragma: no cover - theta reaches 1 first


class ActiveSetSolver:
    """The restricted conic program of one model, its support kept between budgets."""

    def __init__(self, data: FiniteData, privacy: str) -> None:
        self.data = data
        self.privacy = privacy
        n_w, n_z = data.shape
        self.base = np.zeros((n_w, n_z), dtype=bool)
        self.base[np.arange(n_w), data.cost.argmin(axis=1)] = True  # always feasible
        self.base[:, int(data.cost.sum(axis=0).argmin())] = True  # the best constant release
        self.mask = self.base.copy()
        self.lam = 0.0

    def certify(self, channel: np.ndarray, budget: float, support: np.ndarray | None = None,
                tol: float = 0.0, dual: np.ndarray | None = None) -> tuple[float, float, float, np.ndarray]:
        """(value, bound, multiplier, scores) of a feasible channel: the tangent bound over all
        entries (unused releases: the candidates of ``fill_unused``, then, while the gap exceeds
        ``tol``, the best q of ``unused.py``; where the restricted program's duals ``dual`` are
        given, the q they imply for the unused releases is tried too). The scores price the
        entries: an unused release
        whose best q still undercuts some rows is worth opening to them (the leakage of a fresh
        column is not linear in the mass moved there, so single-row derivatives would miss it)."""
        data = self.data
        lin = SMOOTH_LEAKAGES[self.privacy](np.asarray(data.g_s @ channel), data.p_s)
        slope = fill_unused(lin, data, self.privacy, self.lam, support)
        scores = np.asarray(data.g_s.T @ slope)
        bound, lam = linearised_bound(lin.offset, scores, data.cost, budget, support, self.lam)
        if dual is not None and lin.value - bound > tol * max(1.0, abs(lin.value)):
            dual_slope = MINORANT_SLOPES[self.privacy](Q_OF_SLOPE[self.privacy](dual, data.p_s), data.p_s)
            # the tangent where z is used and the duals' q where it is not; then the duals' q for every
            # z, but only for a channel whose tangent bound is within CHANNEL_TOL (P(S,Z) is off by
            # about the square root of the value's error: an exact value does not make an exact channel)
            cands = [np.where(lin.used[None, :], slope, dual_slope)] if not lin.used.all() else []
            for k, cand in enumerate(cands + [dual_slope]):
                if k == len(cands) and lin.value - bound > CHANNEL_TOL * max(1.0, abs(lin.value)):
                    break  # the duals alone bound the optimum, but the channel must be accurate too
                dscores = np.asarray(data.g_s.T @ cand)
                bound2, lam2 = linearised_bound(lin.offset, dscores, data.cost, budget, support, self.lam)
                if bound2 > bound:
                    bound, lam, scores = bound2, lam2, dscores
        if lin.value - bound > tol * max(1.0, abs(lin.value)) and not lin.used.all():
            scores = self._refit_unused(scores, ~lin.used, lam, support)
            bound2, lam2 = linearised_bound(lin.offset, scores, data.cost, budget, support, lam)
            bound, lam = (bound2, lam2) if bound2 > bound else (bound, lam)
        self.lam = lam
        return lin.value, max(bound, 0.0), lam, scores  # both leakages are >= 0

    def _refit_unused(self, scores: np.ndarray, unused: np.ndarray, lam: float,
                      support: np.ndarray | None) -> np.ndarray:
        """Scores with each unused column's q replaced by :func:`~.unused.best_unused_q` (one by one)."""
        data = self.data
        g_dense = np.asarray(data.g_s.todense())
        scores = scores.copy()
        for z in np.flatnonzero(unused)[:_MAX_REFIT]:
            total = scores + lam * data.cost
            if support is not None:
                total = np.where(support, total, np.inf)
            row_min = np.delete(total, z, axis=1).min(axis=1)
            keep = np.isfinite(row_min) & (support[:, z] if support is not None else True)
            q = best_unused_q(self.privacy, g_dense[:, keep], data.p_s, row_min[keep], lam * data.cost[keep, z])
            if q is None:
                continue
            trial = g_dense.T @ MINORANT_SLOPES[self.privacy](q[:, None], data.p_s)[:, 0]
            gain = lambda col: np.minimum(row_min[keep], col[keep] + lam * data.cost[keep, z]).sum()  # noqa: E731
            if gain(trial) > gain(scores[:, z]):
                scores[:, z] = trial
        return scores

    def solve_whole(self, budget: float, tol: float, support: np.ndarray | None = None) -> SmoothResult:
        """The program on every entry (``support``'s, if given) by one Clarabel solve, certified by
        its duals: for small programs, cheaper than guessing a support and pricing it."""
        data = self.data
        mask = np.ones(data.shape, dtype=bool) if support is None else support.copy()
        out = _restricted(data, mask, budget, self.privacy, WHOLE_TOL)
        if out is None:
            return SmoothResult(np.zeros(0), np.inf, -np.inf, 0.0, 1)
        self.lam = out[1]
        best = SmoothResult(np.zeros(0), np.inf, -np.inf, 0.0, 1)
        # the interior point leaves noise on the entries that are 0 at the optimum (a release
        # with P(z) ~ 1e-8 is a mechanism nobody wants): without them first, if that certifies
        clean = np.where(out[0] > _SHRINK, out[0], 0.0)
        for channel in (clean / clean.sum(axis=1, keepdims=True), out[0]):
            channel = meet_budget(channel, data, budget)
            value, bound, lam, _ = self.certify(channel, budget, support, tol, out[2])
            if value - bound < best.value - best.bound:
                best = SmoothResult(channel, value, bound, lam, 1)
            if value - bound <= tol * max(1.0, abs(value)):
                break
        return best

    def _certify_both(self, raw: np.ndarray, budget: float, support: np.ndarray | None, tol: float,
                      lam: float, dual: np.ndarray) -> tuple[np.ndarray, float, float, np.ndarray]:
        """(channel, value, bound, scores) of the better of the interior point's channel without its
        noise (entries below _SHRINK: a release with P(z) ~ 1e-9 has a meaningless posterior, which
        spoils its tangent) and as it is; the first that certifies to ``tol``."""
        clean = np.where(raw > _SHRINK, raw, 0.0)
        best: tuple[np.ndarray, float, float, np.ndarray] | None = None
        for channel in (clean / clean.sum(axis=1, keepdims=True), raw):
            channel = meet_budget(channel, self.data, budget)
            self.lam = lam
            value, bound, _, scores = self.certify(channel, budget, support, tol, dual)
            if best is None or value - bound < best[1] - best[2]:
                best = (channel, value, bound, scores)
            if value - bound <= tol * max(1.0, abs(value)):
                break
        assert best is not None
        return best

    def solve(self, budget: float, tol: float, support: np.ndarray | None = None,
              seed: np.ndarray | None = None, polish: float = 0.0) -> SmoothResult:
        """Grow the support until the tangent bound certifies to ``tol`` (or to ``polish``, where
        the caller finishes by a first-order polish) (module docstring)."""
        data = self.data
        self.mask = self.base | seed if seed is not None else self.base.copy()
        if support is not None:
            self.mask &= support
            self.mask[np.arange(data.shape[0]), np.where(support, data.cost, np.inf).argmin(axis=1)] = True
        best = SmoothResult(np.zeros(0), np.inf, -np.inf, 0.0, 0)
        shrunk, last = False, np.inf
        for rounds in range(1, _MAX_ROUNDS + 1):
            out = _restricted(data, self.mask, budget, self.privacy)
            if out is None:
                break
            lam = out[1]
            channel, value, bound, scores = self._certify_both(out[0], budget, support, tol, lam, out[2])
            if value < best.value or bound > best.bound:
                keep = value < best.value
                best = SmoothResult(channel if keep else best.channel, min(value, best.value),
                                    max(bound, best.bound), lam if keep else best.multiplier, rounds)
            if best.value - best.bound <= max(tol, polish) * max(1.0, abs(best.value)):
                break  # certified, or close enough that the caller's mirror-descent polish is cheaper
            total = scores + lam * data.cost
            if support is not None:
                total = np.where(support, total, np.inf)
            on = np.where(self.mask, total, np.inf).min(axis=1, keepdims=True)
            new = (total < on - 1e-12 * np.abs(on)) & ~self.mask
            if not new.any() or value >= last - 1e-12 * max(1.0, abs(value)):
                # stalled: a fresh release's leakage is not linear in the mass moved there, so the
                # prices may not show which rows gain from it together; open the unused ones to all
                empty = np.asarray(data.g_s @ channel).sum(axis=0) <= 0
                new |= empty[None, :] & ~self.mask & (support if support is not None else True)
            last = value
            if new.any():
                self.mask |= new
            elif not shrunk:  # the support is complete but the point inexact: drop the entries it
                shrunk = True  # does not use, which leaves the optimum and conditions the program better
                self.mask &= (channel > _SHRINK) | self.base
            else:
                break
        return best


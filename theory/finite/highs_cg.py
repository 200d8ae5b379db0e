"""The MAP linear program by column generation on HiGHS, warm-started across budgets.

The program of ``highs_lp.py`` (minimise sum_z t_z over row-stochastic C with
(G_s C)[s, z] <= t_z and <A, C> <= D) has n_w n_z unknowns, but an optimal
basic solution uses at most n_w + n_s n_z + 1 of them. This solver keeps a
restricted set of entries C[w, z] (each row's cheapest release and the best
constant release to start: always feasible; where G has at most 2 s per w and that round does not
finish, also the support of a short mi mirror descent at the budget; every entry for programs of at most
FULL_LP entries with one s per w, FULL_LP_DENSE nonzeros otherwise, where pricing rounds cost more
than they save), solves the restricted LP with
HiGHS, prices every left-out entry with the duals (reduced cost
(G_s^T mu + lambda A)[w, z] - y_w, with mu >= 0 the duals of the epigraph rows,
lambda >= 0 the budget's and y the row sums'), adds every entry with a negative
one (PER_ROW > 0: the PER_ROW most negative of each row), and stops when none is negative: then the restricted optimum is the full
one. The HiGHS instance keeps its basis, so the next round and the next budget
(only the budget row's bound changes) start warm.

The lower bound is :func:`~.certificate.map_dual_bound` of the final duals,
computed here over all n_w n_z entries (not trusted from HiGHS).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

import highspy
import numpy as np

from .certificate import map_dual_bound
from .data import FiniteData
from .highs_lp import LpResult, budget_row_scale
from .mirror import solve_smooth

__all__ = ["MAX_ROUNDS", "MapColumnGeneration", "quiet_stdout", "whole_lp"]

_PRICE_TOL = 1e-11
MAX_ROUNDS = 500
FULL_LP = 10_000  # programs with at most this many entries start with all of them ...
FULL_LP_DENSE = 1_000  # ... or, where the entries' columns are dense (many s per w), this many nonzeros
# (measured, random joints: useful m = 20 (400 entries, 8,000 nonzeros) 7 ms priced against 12 ms whole,
# m = 50 0.04 s against 0.7 s, m = 100 0.3 s against 29 s; full m = 20 (8,000 entries, one s per w)
# 21 ms whole against 33 ms priced)
# Dense columns are solved unscaled (DENSE_UNSCALED: ``simplex_scale_strategy`` 0; measured 2026-11-27,
# random joint, useful, three budgets 0.1 / 0.3 / 0.6 warm, least of 2-5: m = 10 2.9 -> 2.4 ms, m = 20 23 -> 15,
# m = 30 78 -> 49, m = 50 340 -> 223; the symmetric pair's useful programs 5-10% faster; the full
# observation's one-s columns 10-80% slower unscaled, so they keep HiGHS's default)
# BUDGET_ROW_SCALED: unscaled, the budget row of P(w) d(w, z) (entries down to 1e-8 under a squared distance
# on 30 values) was met only to 9e-10 over the budget, which at the multiplier 90 cost 2.4e-7 of MAP accuracy
# once the channel was made to meet it (random joint, full, m = 20, d = ((u - z) / 19)^2, budget 5e-4: the
# certificate failed and cvxpy took 2-215 s at m = 20-50); scaled, it holds to 2e-12
# HiGHS's dual simplex (its default) is kept for every program. The primal simplex (``simplex_strategy`` 4),
# measured 2026-11-28 on random useful joints at budgets 0.1 / 0.3 / 0.45 / 0.6, least of 5 (ms): m = 10
# 1.8 / 1.7 / 2.2 / 2.7 -> 1.7 / 1.9 / 1.8 / 1.7, m = 20 3.5 / 3.8 / 5.4 / 11.5 -> 3.0 / 4.2 / 4.6 / 6.8, m = 30
# 5.9 / 8.4 / 14.7 / 42.6 -> 4.9 / 6.9 / 13.7 / 47.2, m = 50 14.8 / 20.1 / 64.9 / 259 -> 12.2 / 23.2 / 68.7 / 277,
# m = 100 at 0.45 204 -> 808; the symmetric pair's within 10% either way. The whole LP (every entry at once) was
# slower than the column generation at m = 20-50 with either simplex, presolve or HiGHS's interior point (m = 30
# at 0.6: 44 ms generated, 71-89 ms whole). A test for MAP's floor max_s P(s) (the least distortion of a channel
# whose guess is one s for every z) is an LP of the same size and slower than the MAP LP (m = 30: 69 ms)
PER_ROW = 0  # entries added per row and round (0: every entry with a negative reduced cost)
SEED_STEPS = 10  # where G has at most 2 s per w and the first round does not finish (the symmetric pair's does),
SEED_TOL = 0.3  # the entries that SEED_STEPS steps of mirror descent on the mi program leave above SEED_TOL / n_z
# are added too: the optimal LP's support is mostly among them (random joint, full, m = 50: 93-96%). Random
# joint, full, budget 0.3: m = 30 0.17 -> 0.05 s, 8 -> 2 rounds; m = 50 1.34 -> 0.28 s, 12 -> 3; m = 100
# 62 -> 7.5 s, 21 -> 4 (the mi warm-up 0.8 s of it). Not for dense G (the useful observation): random, useful
# m = 100 0.38 -> 0.64 s, the same 2 rounds with more entries
SEED_MIN_MI = 1e-3  # ... and not where that channel's mi is below this: near mi's perfect privacy it is spread over
# most entries and says nothing of the MAP LP's support (random full m = 50, budget 0.6: 66,000 entries, 11 s
# against 0.63 s unseeded; budget 0.5, 9.8 entries a row: 2.9 against 1.3 s)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence file descriptor 1 (HiGHS prints a banner from C when an instance is created)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def whole_lp(data: FiniteData) -> bool:
    """Whether the program is small enough to start with every entry (FULL_LP, FULL_LP_DENSE)."""
    n_w, n_z = data.shape
    per_w = data.g_s.nnz / max(n_w, 1)
    return n_w * n_z <= FULL_LP and (per_w <= 2.0 or n_w * n_z * per_w <= FULL_LP_DENSE)


class MapColumnGeneration:
    """The MAP LP of one model on a persistent HiGHS instance (column generation)."""

    def __init__(self, data: FiniteData) -> None:
        self.data = data
        n_w, n_z = data.shape
        n_s = data.g_s.shape[0]
        self.n_epi = n_s * n_z
        self.row_scale = budget_row_scale(data.cost)  # (BUDGET_ROW_SCALED)
        self.gcsc = data.g_s.tocsc()
        with quiet_stdout():
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            h.setOptionValue(name, 1e-10)
        inf = highspy.kHighsInf
        # rows: n_w row sums (= 1), n_s n_z epigraph rows (<= 0), the budget row (<= D)
        lower = np.concatenate([np.ones(n_w), np.full(self.n_epi + 1, -inf)])
        upper = np.concatenate([np.ones(n_w), np.zeros(self.n_epi), [inf]])
        h.addRows(lower.size, lower, upper, 0, np.zeros(lower.size, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        # t_z: cost 1, free, -1 in the epigraph rows (s, z) for every s
        rows = n_w + np.arange(self.n_epi, dtype=np.int32).reshape(n_s, n_z).T.ravel()
        h.addCols(n_z, np.ones(n_z), np.full(n_z, -inf), np.full(n_z, inf), self.n_epi,
                  (np.arange(n_z) * n_s).astype(np.int32), rows.astype(np.int32), -np.ones(self.n_epi))
        self.h = h
        self.active = np.zeros((n_w, n_z), dtype=bool)
        self.seed = False  # whether a solve whose first round does not finish adds the mirror-descent seed
        self.col_w = np.zeros(0, dtype=np.int64)
        self.col_z = np.zeros(0, dtype=np.int64)
        per_w = data.g_s.nnz / max(n_w, 1)  # epigraph nonzeros per entry: 1 for the full observation
        if per_w > 2.0:  # dense columns (the useful observation): HiGHS's scaling costs more than it saves
            h.setOptionValue("simplex_scale_strategy", 0)  # (DENSE_UNSCALED)
        if whole_lp(data):  # small: every entry at once, one HiGHS solve, no pricing rounds
            h.setOptionValue("presolve", "off")  # costs more than it saves at this size (same answer)
            w, z = np.divmod(np.arange(n_w * n_z), n_z)
            self._add(w, z)
            return
        self.seed = per_w <= 2.0  # (SEED_STEPS)
        cheapest = data.cost.argmin(axis=1)
        constant = int(data.cost.sum(axis=0).argmin())
        w = np.arange(n_w)
        self._add(np.r_[w, w], np.r_[cheapest, np.full(n_w, constant)])

    def _add(self, w: np.ndarray, z: np.ndarray) -> None:
        """Add entries C[w, z] (duplicates and active ones dropped) as columns."""
        data, n_w = self.data, self.data.shape[0]
        n_z = data.shape[1]
        key = np.unique(w * n_z + z)
        w, z = key // n_z, key % n_z
        new = ~self.active[w, z]
        w, z = w[new], z[new]
        if w.size == 0:
            return
        self.active[w, z] = True
        ptr, idx, val = self.gcsc.indptr, self.gcsc.indices, self.gcsc.data
        counts = ptr[w + 1] - ptr[w]
        per_col = counts + 2  # row sum, epigraph entries, budget
        ends = np.cumsum(per_col)
        starts = ends - per_col
        before = np.cumsum(counts) - counts  # entries of G_s in the columns before each one
        offs = np.arange(counts.sum()) - np.repeat(before, counts)
        pos = np.repeat(ptr[w], counts) + offs
        col_of = np.repeat(np.arange(w.size), counts)
        rows = np.empty(ends[-1], dtype=np.int32)
        vals = np.empty(ends[-1])
        rows[starts] = w
        vals[starts] = 1.0
        inner = np.repeat(starts + 1, counts) + offs
        rows[inner] = n_w + idx[pos] * n_z + z[col_of]
        vals[inner] = val[pos]
        rows[ends - 1] = n_w + self.n_epi
        vals[ends - 1] = data.cost[w, z] * self.row_scale
        self.h.addCols(w.size, np.zeros(w.size), np.zeros(w.size), np.full(w.size, highspy.kHighsInf),
                       rows.size, starts.astype(np.int32), rows, vals)
        self.col_w = np.concatenate([self.col_w, w])
        self.col_z = np.concatenate([self.col_z, z])

    def _duals(self) -> tuple[np.ndarray, np.ndarray, float]:
        n_w = self.data.shape[0]
        dual = np.asarray(self.h.getSolution().row_dual)
        mu = np.clip(-dual[n_w : n_w + self.n_epi], 0.0, None).reshape(self.data.g_s.shape[0], -1)
        return dual[:n_w], mu, max(-float(dual[-1]), 0.0) * self.row_scale

    def solve(self, budget: float, max_rounds: int = MAX_ROUNDS) -> LpResult | None:
        """Solve at ``budget`` (warm from the last solve); RuntimeError unless HiGHS reports optimality.
        None where the restricted LP is still not optimal after ``max_rounds`` rounds (no entry is added
        after the last)."""
        data = self.data
        h = self.h
        n_w, n_z = data.shape
        h.changeRowBounds(n_w + self.n_epi, -highspy.kHighsInf, budget * self.row_scale)
        seeded = not self.seed
        for rounds in range(1, max_rounds + 1):
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
            y, mu, lam = self._duals()
            reduced = np.asarray(data.g_s.T @ mu) + lam * data.cost - y[:, None]
            reduced[self.active] = np.inf
            neg = reduced < -_PRICE_TOL
            if not neg.any():
                break
            if rounds >= max_rounds:
                return None
            if PER_ROW > 0:
                part = np.argpartition(reduced, min(PER_ROW, n_z - 1), axis=1)[:, :PER_ROW]
                take = np.zeros_like(neg)
                np.put_along_axis(take, part, True, axis=1)
                neg &= take
            w_new, z_new = np.nonzero(neg)
            self._add(w_new, z_new)
            if not seeded:  # the start did not suffice (it does for the symmetric pair): seed once
                seeded = True
                guess = solve_smooth(data, budget, "mi", tol=0.0, max_iter=SEED_STEPS, check_every=SEED_STEPS + 1)
                if guess.value >= SEED_MIN_MI:
                    self._add(*np.nonzero(guess.channel > SEED_TOL / n_z))
        x = np.asarray(h.getSolution().col_value)[n_z:]
        channel = np.zeros((n_w, n_z))
        channel[self.col_w, self.col_z] = np.clip(x, 0.0, None)
        channel /= channel.sum(axis=1, keepdims=True)
        value = float(np.asarray(data.g_s @ channel).max(axis=0).sum())
        bound = map_dual_bound(mu, data.g_s, data.cost, budget, lam)
        obj = float(h.getInfo().objective_function_value)
        return LpResult(channel, value, bound, lam, obj, obj, rounds)

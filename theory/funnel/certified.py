"""The funnel sandwich: an achievable mechanism above, a certified lower end below, refined together.

For a finite model, observation W and the log-loss distortion H(U | Z) <= D,
the optimum over all mechanisms is min sum_z p(z) cost(q_z) over splits of P_W
with sum_z p(z) h_U(q_z) <= D (:mod:`.split`).  Each round, on the vertices of a
triangulation of the simplex of posteriors (:mod:`.triangulation`) plus P_W:

* **upper end** -- the envelope LP with the true costs gives a split, hence a
  mechanism, whose exact leakage and H(U | Z) are recomputed from the model
  (:mod:`.achievable`); P_W and the posteriors of Z = U are candidates too;
* **lower end** -- the LP's dual (y, mu >= 0) gives y . P_W - mu D - M for any M >=
  max_q phi(q), phi(q) = y . q - mu h_U(q) - cost(q) (weak duality over all splits).  On
  each cell, -mu h_U is convex (<= the interpolation of its vertex values) and the
  convex cost is >= an affine minorant (the tangent / subgradient plane at the cell's
  barycentre, or the one where A_S q = P(S), whichever bounds better), so phi <= the
  largest of its vertex bounds; M is the largest cell bound (>= 0).  That is the
  piecewise-linear upper bound of g_mu on the triangulation, with its envelope by LP.

The cells whose bound is at least half of M are bisected, until ``upper - lower
<= tol`` or the time limit.  mu is the slope beta of the funnel at D (the sup over
beta of the Lagrangian bound is attained there).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .achievable import mechanism_of_split, release_measures, time_share
from .envelope import repaired_dual, solve_envelope
from .split import Split
from .triangulation import Triangulation

__all__ = ["TOL", "funnel_sandwich"]

#: Target width upper - lower (nats for mi).
TOL = 1e-4


def _initial(n: int) -> Triangulation:
    tri = Triangulation(n)
    rounds = 0
    while (2**rounds) < 4 * n:  # a few dozen cells to start
        rounds += 1
    tri.refine_all(rounds if n > 1 else 0)
    return tri


class _Minorants:
    """Per (cell, local vertex): the cell's affine minorant of the cost at that vertex, kept up to date."""

    def __init__(self, split: Split, tri: Triangulation, privacy: str) -> None:
        self.split, self.tri, self.privacy = split, tri, privacy
        self.values = self._of(np.arange(len(tri.cells)))

    def _of(self, ids: np.ndarray) -> np.ndarray:
        a, b = self.split.supporting(self.tri.centres(self.tri.cells[ids]), self.privacy)
        return np.einsum("cvn,cn->cv", self.tri.points[self.tri.cells[ids]], a) + b[:, None]

    def bisect(self, ids: np.ndarray) -> None:
        changed = self.tri.bisect(ids)
        grown = np.empty((len(self.tri.cells), self.tri.n))
        grown[: len(self.values)] = self.values
        grown[changed] = self._of(changed)
        self.values = grown


def _columns(pts: np.ndarray, cost: np.ndarray, h: np.ndarray, budget: float, p_w: np.ndarray,
             start: np.ndarray) -> tuple[Any, np.ndarray]:
    """The envelope LP by column generation: solved on the columns ``start``, then again with every
    column of positive reduced cost added, until there is none (the LP over all of ``pts``)."""
    use = np.zeros(len(pts), dtype=bool)
    use[start] = True
    while True:
        idx = np.flatnonzero(use)
        sol = solve_envelope(pts[idx], cost[idx], h[idx], p_w, budget)
        reduced = pts @ sol.y - sol.mu * h - cost  # > 0: the column would lower the objective
        enter = (reduced > 1e-12 * max(1.0, float(np.abs(cost).max()))) & ~use
        if not enter.any():
            weights = np.zeros(len(pts))
            weights[idx] = sol.weights
            return sol, weights
        use |= enter


def _achievable(split: Split, pts: np.ndarray, cost: np.ndarray, h: np.ndarray, budget: float, privacy: str,
                joint: np.ndarray, observation: str, start: np.ndarray) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The LP's split as a mechanism meeting the budget exactly: solved with a small margin below it (grown
    while the exact H(U | Z) still exceeds it, so the channel keeps the LP's <= n + 1 outputs), with time
    sharing with Z = W as the last resort.  Returns the LP solution, its weights on ``pts`` and the mechanism."""
    for margin in (1e-10, 1e-8, 1e-6):
        sol, weights = _columns(pts, cost, h, max(budget - margin * max(1.0, budget), 0.0), split.p_w, start)
        channel = mechanism_of_split(split, pts, weights)
        measured = release_measures(joint, channel, observation, privacy)
        if measured[1] <= budget:
            break
    return sol, weights, time_share(channel, measured, budget, joint, observation, privacy)


def _round(split: Split, minor: _Minorants, budget: float, privacy: str, joint: np.ndarray,
           observation: str, previous: Any) -> dict[str, Any]:
    """Both ends on the current triangulation, and the cells worth bisecting.  ``previous``: the last
    round's LP solution (its best columns start this round's column generation), or None."""
    tri = minor.tri
    pts = np.vstack([tri.points, split.anchors])
    cost, h = split.cost(pts, privacy), split.h_u_of(pts)
    if previous is None:
        start = np.arange(len(pts))
    else:  # the columns of the largest reduced costs under the last dual (its support among them), the
        # unit vectors (H(U | W = w) = 0: always feasible) and the anchors
        reduced = pts @ previous.y - previous.mu * h - cost
        best = np.argsort(-reduced, kind="stable")[: 40 * (split.p_w.size + 1)]
        start = np.concatenate([best, np.arange(split.p_w.size), np.arange(len(tri.points), len(pts))])
    sol, _, mech = _achievable(split, pts, cost, h, budget, privacy, joint, observation, start)
    y, objective = repaired_dual(sol, pts, cost, h, split.p_w, budget)
    phi = (pts @ y - sol.mu * h)[: len(tri.points)]  # y . q - mu h_U(q) at the vertices
    # >= max over the cell of phi - cost, with either affine minorant of the cost (the better one per cell)
    prior = (phi - split.prior_minorant(tri.points, privacy))[tri.cells].max(axis=1)
    bound = np.minimum((phi[tri.cells] - minor.values).max(axis=1), prior)
    top = max(0.0, float(bound.max()))
    refine = np.flatnonzero(bound >= 0.5 * top) if top > 0 else np.zeros(0, dtype=int)
    return {"lower": objective - top, "mech": mech, "refine": refine, "mu": sol.mu, "excess": top, "sol": sol}


def funnel_sandwich(split: Split, joint: np.ndarray, observation: str, budget: float, privacy: str = "mi", *,
                    tol: float = TOL, time_limit: float = 60.0, max_rounds: int = 10_000) -> dict[str, Any]:
    """lower <= min leakage subject to H(U | Z) <= budget <= upper (the leakage of ``channel``).

    Returns
    -------
    dict
        ``lower``, ``upper``, ``width``, ``converged`` (width <= tol), ``seconds``, ``rounds``,
        ``cells``, ``vertices``, ``channel`` (P(Z | W) achieving ``upper``), ``distortion``
        (its exact H(U | Z) <= budget), ``time_share`` and ``slope`` (the budget's multiplier mu:
        the curve falls by about mu per nat of budget).
    """
    start = time.perf_counter()
    if budget >= split.h_u:  # Jensen: a constant Z is optimal once the budget allows H(U | Z) = H(U)
        value = float(split.cost(split.p_w[None], privacy)[0])
        channel = np.ones((split.n_w, 1))
        return {"lower": value, "upper": value, "width": 0.0, "converged": True, "rounds": 0, "cells": 0,
                "vertices": 0, "channel": channel, "distortion": split.h_u, "time_share": 0.0, "slope": 0.0,
                "seconds": time.perf_counter() - start}
    minor = _Minorants(split, _initial(split.p_w.size), privacy)
    best: dict[str, Any] = {"lower": -np.inf, "upper": np.inf}
    rounds, previous = 0, None
    while True:
        rounds += 1
        got = _round(split, minor, budget, privacy, joint, observation, previous)
        previous = got["sol"]
        if got["lower"] > best["lower"]:
            best.update(lower=got["lower"], slope=got["mu"])
        if got["mech"]["value"] < best["upper"]:
            m = got["mech"]
            best.update(upper=m["value"], channel=m["channel"], distortion=m["distortion"],
                        time_share=m["time_share"])
        if (best["upper"] - best["lower"] <= tol or rounds >= max_rounds
                or time.perf_counter() - start > time_limit or got["refine"].size == 0):
            break
        minor.bisect(got["refine"])
    best.update(width=best["upper"] - best["lower"], converged=bool(best["upper"] - best["lower"] <= tol),
                rounds=rounds, cells=len(minor.tri.cells), vertices=len(minor.tri.points),
                seconds=time.perf_counter() - start)
    return best

"""A primal-dual interior point for the mi and chi2 programs on a small observation alphabet.

    minimise_C  L = sum_z F(G C[:, z])   subject to   C 1 = 1,  <A, C> <= D,  C >= 0,

with G = P(S, W) (dense, n_s x n_w), A the per-entry cost P(w) d(w, z), and F one
release's share of the leakage, a function of y = P(S, z) homogeneous of degree 1:

* mi:   F(y) = sum_s y_s log(y_s / (P(s) sum y)),
* chi2: F(y) = sum_s y_s^2 / (P(s) sum y)   (the leakage is sum_z F - 1).

The objective splits over the releases z, so its Hessian is block-diagonal with
one dense n_w x n_w block per z, G^T (d^2 F)(y_z) G (``TERMS``). Each step of
Mehrotra's predictor-corrector method eliminates the channel block by block and
solves the (n_w + 1) x (n_w + 1) system of the row sums and the budget; one
factorisation serves both the predictor and the corrector. The method suits
programs with few observations (the ``useful`` observation, n_w = |U|): a step
costs about n_z n_w^3 flops.

The answer is only a candidate: ``interior_certified.py`` certifies the returned
channel with the tangent bound of ``certificate.py`` (recomputed from the
channel, nothing of this solver trusted), and the caller falls back to its other
solvers where it does not certify. None is returned where the iteration fails
(a non-finite step, or no convergence in MAX_ITER steps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["GAP", "MAX_ITER", "TERMS", "DenseSystem", "InteriorResult", "Point", "chi2_ratios", "mi_slope",
           "solve_interior"]

MAX_ITER = 80
GAP = 1e-9  # stop once the total complementarity (the barrier's duality gap) is this small ...
RES_TOL = 1e-12  # ... and the row sums and the budget hold to this
_STEP = 0.95  # not 0.995: a long step empties the releases the optimum leaves unused so fast that their
# posterior (and the dual residual there) lags far behind; 0.9-0.95 took 15-29 steps on random useful m = 10-50,
# 0.99 and 0.999 up to 68 and failed at m = 50. One length for primal and dual (measured 2026-11-28 over 48
# useful programs, random joint and symmetric pair, m = 10-50, mi and chi2, budgets 0.1 / 0.3 / 0.6: separate
# lengths as IPOPT takes them, C, s, nu on the primal's and lambda, beta on the dual's, 877 -> 925 steps, and
# with nu on the dual's 1,008; random useful mi m = 10 at 0.6: 25 -> 35). The Schur system is solved by
# np.linalg.solve: scipy's LAPACK getrf / getrs (one factorisation for predictor and corrector) saves about
# 9 of some 175 microseconds a step at m = 10 but is another OpenBLAS build, so the numbers move (values by
# up to 2.5e-8: random joint, useful chi2, m = 30, at 0.1, within its certificate): not adopted


class InteriorResult(NamedTuple):
    """The channel (rows summing to 1, entries > 0), the budget's multiplier, the steps taken, and
    the duals of C >= 0 (an entry with C P(w) < its dual is headed for 0)."""

    channel: np.ndarray
    multiplier: float
    iterations: int
    duals: np.ndarray
    state: Any  # the iterate, for ``resume``


class Point(NamedTuple):
    c: np.ndarray  # channel (n_w, n_z)
    lam: np.ndarray  # duals of C >= 0
    nu: np.ndarray  # duals of the row sums (n_w,)
    s: float  # budget slack
    beta: float  # the budget's multiplier


class _Newton(NamedTuple):
    """One step's eliminated system: the blocks' inverses and the (n_w + 1) Schur complement."""

    inv: np.ndarray  # (n_z, n_w, n_w)
    inv_cost: np.ndarray  # (n_z, n_w): inv_z A[:, z]
    schur: np.ndarray  # (n_w + 1, n_w + 1)


def mi_slope(y: np.ndarray, p_s: np.ndarray, p_z: np.ndarray) -> np.ndarray:
    """dI/dP(s,z) = log(P(s|z) / P(s)) at y = P(S, Z) (P(z) = ``p_z``), shared with ``interior_full.py``."""
    with np.errstate(divide="ignore"):
        return np.log(y / (p_s[:, None] * p_z[None, :]))


def chi2_ratios(y: np.ndarray, p_s: np.ndarray, p_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(r = P(s|z) / P(s), Q = sum_s P(s) r_s^2 per z) at y = P(S, Z); the chi2 slope is 2 r - Q."""
    r = y / (p_s[:, None] * p_z[None, :])
    return r, (p_s[:, None] * r * r).sum(axis=0)


def _mi_terms(g: np.ndarray, y: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """I(S;Z): the slope dI/dP(s,z) = log(P(s|z) / P(s)) and the blocks G^T diag(1/y) G - P(W) P(W)^T / P(z)."""
    p_w, p_z = g.sum(axis=0), y.sum(axis=0)
    slope = mi_slope(y, p_s, p_z)
    blocks = (g.T[None, :, :] / y.T[:, None, :]) @ g[None, :, :]
    blocks -= (p_w[None, :, None] * p_w[None, None, :]) / p_z[:, None, None]
    return slope, blocks


def _chi2_terms(g: np.ndarray, y: np.ndarray, p_s: np.ndarray, k0: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """chi2 = sum_z sum_s y_s^2 / (P(s) P(z)) - 1: with r = P(s|z) / P(s) and Q = sum_s P(s) r_s^2, the slope
    2 r - Q and the blocks (2 / P(z)) (K0 - v 1^T - 1 v^T) with K0 = G^T diag(1/P(S)) G (``k0``, computed
    where not given) and v = G^T r - (Q / 2) P(W) (G^T 1 = P(W))."""
    p_w, p_z = g.sum(axis=0), y.sum(axis=0)
    r, q = chi2_ratios(y, p_s, p_z)
    if k0 is None:
        k0 = (g.T / p_s[None, :]) @ g
    v = (g.T @ r).T - 0.5 * q[:, None] * p_w[None, :]  # (n_z, n_w)
    outer = v[:, :, None] * p_w[None, None, :]
    blocks = k0[None, :, :] - outer
    blocks -= outer.transpose(0, 2, 1)
    blocks *= (2.0 / p_z)[:, None, None]
    return 2.0 * r - q[None, :], blocks


TERMS = {"mi": _mi_terms, "chi2": _chi2_terms}


def _factor(blocks: np.ndarray, pt: Point, cost: np.ndarray) -> _Newton | None:
    """Invert each block H_z + diag(lambda / C)[:, z]; the Schur complement of rows and budget."""
    n_w = cost.shape[0]
    diag = np.arange(n_w)
    blocks[:, diag, diag] += (pt.lam / pt.c).T
    try:
        inv = np.linalg.inv(blocks)
    except np.linalg.LinAlgError:
        return None
    inv_cost = (inv @ cost.T[:, :, None])[:, :, 0]
    schur = np.empty((n_w + 1, n_w + 1))
    schur[:n_w, :n_w] = inv.sum(axis=0)
    a = inv_cost.sum(axis=0)
    schur[:n_w, n_w] = schur[n_w, :n_w] = -a
    schur[n_w, n_w] = float((cost.T * inv_cost).sum()) + pt.s / pt.beta
    if not np.isfinite(schur.sum()):  # a sum is finite only where every entry is
        return None
    return _Newton(inv, inv_cost, schur)


def _direction(nt: _Newton, pt: Point, cost: np.ndarray, r_dual: np.ndarray, r_rows: np.ndarray,
               r_budget: float, target: float, corr: np.ndarray | float, corr_b: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float] | None:
    """(dC, dlambda, dnu, ds, dbeta) toward C lambda = target (less the corrector terms)."""
    r1 = -r_dual + (target - corr) / pt.c - pt.lam
    r3 = r_budget - (target - pt.s * pt.beta - corr_b) / pt.beta
    inv_r1 = (nt.inv @ r1.T[:, :, None])[:, :, 0]  # (n_z, n_w)
    rhs = np.empty(r_rows.size + 1)
    rhs[:-1] = r_rows - inv_r1.sum(axis=0)
    rhs[-1] = float((cost.T * inv_r1).sum()) - r3
    try:
        sol = np.linalg.solve(nt.schur, rhs)
    except np.linalg.LinAlgError:
        return None
    dnu, dbeta = sol[:-1], float(sol[-1])
    dc = (inv_r1 - nt.inv_cost * dbeta + (nt.inv @ dnu)).T
    dlam = (target - corr - pt.c * pt.lam - pt.lam * dc) / pt.c
    ds = (target - pt.s * pt.beta - corr_b - pt.s * dbeta) / pt.beta
    return dc, dlam, dnu, ds, dbeta


def _step_to_boundary(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest alpha <= 1 with x + alpha dx >= 0 (x > 0): 1 / max(-dx / x), capped at 1."""
    low = float((dx / x).min())
    return 1.0 if low >= -1.0 else -1.0 / low


def _scalar_step(x: float, dx: float) -> float:
    return -x / dx if dx < 0 else 1.0


def _lengths(pt: Point, d: tuple) -> tuple[float, float]:
    dc, dlam, _, ds, dbeta = d
    a_p = min(_step_to_boundary(pt.c, dc), _scalar_step(pt.s, ds))
    a_d = min(_step_to_boundary(pt.lam, dlam), _scalar_step(pt.beta, dbeta))
    return a_p, a_d


class DenseSystem:
    """The Newton system of a dense G: one n_w x n_w Hessian block per release (module docstring)."""

    stops_at_zero = False  # whether ``solve_interior_certified`` passes its tolerance as ``floor``

    def __init__(self, privacy: str, g: np.ndarray, p_s: np.ndarray, cost: np.ndarray) -> None:
        self.terms, self.g, self.p_s, self.cost = TERMS[privacy], g, p_s, cost
        self.extra = {"k0": (g.T / p_s[None, :]) @ g} if privacy == "chi2" else {}  # chi2's constant part
        self.g_dense = g  # G, dense (the certificate's)
        self.p_w = g.sum(axis=0)
        self.res_tol = RES_TOL

    def gradient(self, pt: Point) -> tuple[np.ndarray, Any]:
        """(dL/dC, what ``factor`` needs of this point)."""
        slope, blocks = self.terms(self.g, self.g @ pt.c, self.p_s, **self.extra)
        return self.g.T @ slope, blocks

    def factor(self, pt: Point, blocks: Any) -> _Newton | None:
        return _factor(blocks, pt, self.cost)

    def direction(self, nt: Any, pt: Point, r_dual: np.ndarray, r_rows: np.ndarray, r_budget: float,
                  target: float, corr: np.ndarray | float, corr_b: float) -> tuple | None:
        return _direction(nt, pt, self.cost, r_dual, r_rows, r_budget, target, corr, corr_b)


def _start(p_w: np.ndarray, cost: np.ndarray, budget: float, beta0: float | None = None) -> Point:
    """The uniform channel, C lambda = P(w) / n_z, a budget slack of at least 0.1 budget, and the budget's
    multiplier ``beta0`` where a guess is given, else mu / slack (centred). Over 25 programs (random and
    symmetric pair, useful m = 30 / 50 and full m = 20 / 30 at budgets 0.05 and 0.3, |u - z| at 0.002 and
    0.02) the guess took 584 steps to 538; with the slack centred on the guess instead (mu / beta0), some
    programs took more steps than without it (random useful chi2 m = 30 at 0.3: 34 -> 38)."""
    n_w, n_z = cost.shape
    c = np.full((n_w, n_z), 1.0 / n_z)
    lam = np.repeat(p_w[:, None], n_z, axis=1)
    mu = float((c * lam).sum()) / c.size
    s = max(budget - float((cost * c).sum()), 0.1 * budget, 1e-3)
    return Point(c, lam, np.zeros(n_w), s, float(beta0) if beta0 is not None and beta0 > 0 else mu / s)


def solve_interior(privacy: str, g: np.ndarray, p_s: np.ndarray, cost: np.ndarray, budget: float,
                   gap: float = GAP, resume: InteriorResult | None = None, max_iter: int = MAX_ITER,
                   system: Any = None, floor: float | None = None, beta0: float | None = None
                   ) -> InteriorResult | None:
    """The program's optimal channel by Mehrotra's predictor-corrector (module docstring).

    Parameters
    ----------
    privacy : {"mi", "chi2"}
    g : ndarray, shape (n_s, n_w)
        P(S = s, W = w), every column and row with positive mass.
    p_s : ndarray, shape (n_s,)
    cost : ndarray, shape (n_w, n_z)
        P(w) d(w, z).
    budget : float
        Above the smallest achievable distortion.
    gap : float
        Stop once the total complementarity is below this (and the rows and budget hold to RES_TOL).
    resume : InteriorResult, optional
        Go on from where an earlier call on the same program stopped (for a smaller ``gap``).
    system : optional
        The Newton system (``gradient``, ``factor``, ``direction`` as :class:`DenseSystem`'s; e.g.
        ``interior_full.FullSystem``); by default the dense one of ``g``.
    floor : float, optional
        Also stop at an iterate whose rows hold to RES_TOL, that meets the budget and whose leakage
        (<dL/dC, C>, less 1 for chi2: F is homogeneous of degree 1) is at most this: perfect privacy,
        which the caller certifies with the bound 0.
    beta0 : float, optional
        A guess of the budget's multiplier to start from (a short mirror descent's: random joint, full,
        m = 50, d = |u - z| / 49, chi2 at budget 0.005: 108.8 against the optimum's 107.1, where the
        default start's 8e-3 had to grow by about 15% a step: 48 -> 35 steps).
    """
    if system is None:
        system = DenseSystem(privacy, g, p_s, cost)
    pt = resume.state if resume is not None else _start(system.p_w, cost, budget, beta0)
    res_tol = system.res_tol
    n = pt.c.size + 1
    done = resume.iterations if resume is not None else 0
    for it in range(done + 1, done + max_iter + 1):
        grad, cache = system.gradient(pt)
        r_dual = grad + pt.beta * cost - pt.lam - pt.nu[:, None]
        r_rows = 1.0 - pt.c.sum(axis=1)
        spent = float((cost * pt.c).sum())
        r_budget = budget - spent - pt.s
        mu = (float((pt.c * pt.lam).sum()) + pt.s * pt.beta) / n
        if mu * n < gap and np.abs(r_rows).max() < res_tol and abs(r_budget) < res_tol * max(1.0, budget):
            return _result(pt, it)
        if floor is not None and spent <= budget and np.abs(r_rows).max() < res_tol and (
                float((grad * pt.c).sum()) - (1.0 if privacy == "chi2" else 0.0) <= floor):
            return _result(pt, it)
        nt = system.factor(pt, cache)
        if nt is None:
            return None
        aff = system.direction(nt, pt, r_dual, r_rows, r_budget, 0.0, 0.0, 0.0)
        if aff is None:
            return None
        a_p, a_d = _lengths(pt, aff)
        mu_aff = (float(((pt.c + a_p * aff[0]) * (pt.lam + a_d * aff[1])).sum())
                  + (pt.s + a_p * aff[3]) * (pt.beta + a_d * aff[4])) / n
        sigma = min(1.0, (mu_aff / mu) ** 3)
        d = system.direction(nt, pt, r_dual, r_rows, r_budget, sigma * mu, aff[0] * aff[1], aff[3] * aff[4])
        if d is None or not np.isfinite(d[0].sum() + d[1].sum() + d[4]):
            return None
        a_p = a_d = min(1.0, _STEP * min(_lengths(pt, d)))
        pt = Point(pt.c + a_p * d[0], pt.lam + a_d * d[1], pt.nu + a_d * d[2], pt.s + a_p * d[3],
                    pt.beta + a_d * d[4])
    return None


def _result(pt: Point, iterations: int) -> InteriorResult:
    c = np.clip(pt.c, 0.0, None)
    return InteriorResult(c / c.sum(axis=1, keepdims=True), float(pt.beta), iterations, pt.lam, pt)

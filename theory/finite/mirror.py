"""A first-order solver with a certificate for the smooth finite programs (mi, chi2).

    minimise_C  L(G_s C)   subject to   C row-stochastic,  <A, C> <= D

by mirror descent in the entropy geometry weighted by P(W=w) -- for W = S and
``mi`` with unit step this is exactly the Blahut-Arimoto iteration of
rate-distortion theory (the paper-free generalisation to a mechanism that sees
W != S).  Each step is

    C+[w, .] proportional to C[w, .] exp(-eta (grad[w, .] + nu A[w, .]) / P(w)),

with nu >= 0 the exact multiplier of the budget (a one-dimensional root, found
by safeguarded Newton), so every iterate is feasible.  I(S;Z) is 1-smooth
relative to sum_w P(w) KL(C[w] || C'[w]) (KL of the mixtures is at most the
mixture of KLs), so eta = 1 always descends; eta adapts by backtracking on
that inequality (larger steps where the leakage allows, e.g. chi2).

Cost per step (what makes it usable at |W||Z| = 1e6): the channel is carried
in logs, the projection's Newton iterations keep the exponentials unnormalised
(the rows' moments by einsum, the softmax shift bounded from the previous
multiplier), the backtracking test needs only the rows' log-normalisers (see
:func:`solve_smooth`), and where every w carries a single s (the full
observation) grad / P(w) is a gather of dL/dP(S,Z), not a sparse product.

The certificate is :func:`~.certificate.linearised_bound` with the minorants
of ``leakage.py`` at the iterates (tangents where every release is used),
checked every ``check_every`` steps at the step's own multiplier and, every
fifth check or once the gap is within 30 tol, with the multiplier searched:
the returned value is the leakage of a feasible channel and ``bound`` a proven
lower bound on the optimum; the solver stops once value - bound <= tol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .certificate import linearised_bound
from .data import FiniteData
from .leakage import MINORANT_SLOPES, SMOOTH_LEAKAGES, Linearisation

__all__ = ["SmoothResult", "TIE_TOL", "fill_unused", "solve_smooth", "support_mask"]

TIE_TOL = 1e-12  # a budget within this of the minimum distortion restricts C to each row's cheapest z


@dataclass(frozen=True)
class SmoothResult:
    """A certified solution: ``channel`` (live rows, shape (n_w', n_z)) is feasible,
    ``value`` its leakage, ``bound`` a lower bound on the optimum, ``multiplier`` the budget's."""

    channel: np.ndarray
    value: float
    bound: float
    multiplier: float
    iterations: int


def _support(per_row: np.ndarray, slack: float, budget: float) -> np.ndarray | None:
    """Entries a feasible channel may use: all, unless the budget is the minimum distortion."""
    if slack > TIE_TOL * max(1.0, budget):
        return None
    return per_row <= per_row.min(axis=1, keepdims=True) + TIE_TOL


def support_mask(data: FiniteData, budget: float) -> np.ndarray | None:
    """The entries a feasible channel may use at ``budget`` (None: all)."""
    return _support(data.cost / data.p_w[:, None], budget - data.min_distortion, budget)


def _next_nu(nu: float, step: float, lo: float, hi: float | None) -> float:
    """Safeguarded Newton: the step if it stays inside the bracket, else bisection."""
    if hi is None:
        return step if nu < step <= 4.0 * nu else 4.0 * nu
    if lo < step < hi:
        return step
    return hi / 4.0 if lo == 0.0 else (float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi))


class _Rows:
    """The per-row quantities of one model the projection reuses: A/P(w), its square, row minima."""

    def __init__(self, per_row: np.ndarray, p_w: np.ndarray) -> None:
        self.per_row = per_row
        self.sq = per_row * per_row
        self.low = per_row.min(axis=1)
        self.high = per_row.max(axis=1)
        self.p_w = p_w
        self.x = np.empty_like(per_row)  # scratch: the shifted logits, then their exponentials


def _moments(logits: np.ndarray, lmax: np.ndarray, rows: _Rows, coef: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """exp(logits - coef A/P(w) - shift) (unnormalised, in rows.x), its row sums, the rows' mean and
    second moment of A/P(w), and the shift (an upper bound on each row's maximum: max logits - coef
    times the row's least A/P(w), or its largest where coef < 0; rows where that underflows are redone
    with their exact maximum)."""
    x = rows.x
    shift = lmax - coef * (rows.low if coef >= 0 else rows.high)
    if coef:
        np.multiply(rows.per_row, -coef, out=x)
        x += logits
    else:
        np.copyto(x, logits)
    x -= shift[:, None]
    np.exp(x, out=x)
    total = x.sum(axis=1)
    bad = ~(total > 1e-200)
    if bad.any():  # the bound was loose for these rows: their exact maximum
        y = logits[bad] - coef * rows.per_row[bad]
        top = y.max(axis=1)
        y = np.exp(y - top[:, None])
        x[bad], total[bad], shift[bad] = y, y.sum(axis=1), top
    m1 = np.einsum("ij,ij->i", x, rows.per_row) / total
    m2 = np.einsum("ij,ij->i", x, rows.sq) / total
    return total, m1, m2, shift


def _project(logits: np.ndarray, rows: _Rows, budget: float, nu0: float, scale: float = 1.0
             ) -> tuple[np.ndarray, float, np.ndarray, float]:
    """C_nu = softmax(logits - scale nu A/P(w)) with the least nu >= 0 meeting the budget:
    (C, nu, log-normaliser of each row, E_C d).

    Safeguarded Newton on nu from ``nu0`` (the previous iterate's multiplier);
    the channel returned meets the budget up to 1e-13 max(1, budget). log C is
    logits - scale nu A/P(w) - the row's log-normaliser.
    """
    p_w = rows.p_w
    tol = 1e-13 * max(1.0, budget)
    nu = nu0 * 1.0 if nu0 > 0 else 0.0
    base = logits - (scale * nu) * rows.per_row if nu else logits  # the shifts are tight near nu0
    lmax = base.max(axis=1)
    lo, hi, best = 0.0, None, None
    for _ in range(300):
        total, m1, m2, shift = _moments(base, lmax, rows, scale * (nu - nu0 if nu0 > 0 else nu))
        dist = float(p_w @ m1)
        excess = dist - budget
        if excess <= tol:  # feasible up to rounding (E d <= budget + 1e-13)
            hi, best = nu, (rows.x / total[:, None], shift + np.log(total), dist)
            if excess >= -tol or nu == 0.0:
                break
        else:
            lo = nu
        if hi is not None and hi - lo <= 1e-15 * hi:
            break
        slope = scale * float(p_w @ (m2 - m1**2))
        step = nu + excess / slope if slope > 0 else np.inf
        if step <= 0.0 and lo == 0.0:
            nu = 0.0  # the budget may not bind any more
        elif nu == 0.0 and hi is None:
            nu = min(step, 1.0) if 0 < step < np.inf else 1.0
        else:
            nu = _next_nu(nu, step, lo, hi)
    if best is None:  # pragma: no cover - the budget is above the minimum distortion
        raise FloatingPointError("no multiplier meets the budget")
    return best[0], hi, best[1], best[2]


def fill_unused(lin: Linearisation, data: FiniteData, privacy: str, lam: float,
                 support: np.ndarray | None, n_rows: int = 64) -> np.ndarray:
    """The minorant's slope with a good q for each unused release z (any q is valid).

    Candidates: every column's P(S|z) (the tangent, however small P(z)), P(S),
    and the posteriors P(S|w) of the ``n_rows`` likeliest observations; for
    each unused z the candidate that lowers the rows' minima least (at
    multiplier ``lam``) is taken, then refitted to the rows it still undercuts.
    """
    slope = lin.slope
    if lin.used.all():
        return slope
    p_w = data.p_w
    g_s = data.g_s
    rows = np.argsort(-p_w)[:n_rows]
    post = np.asarray(g_s[:, rows].todense()) / p_w[rows]
    cands = np.hstack([lin.posterior, data.p_s[:, None], post])  # the first n_z: each column's own
    cand_slope = MINORANT_SLOPES[privacy](cands, data.p_s)
    cand_scores = np.asarray(g_s.T @ cand_slope)  # (n_w, k)
    total = np.asarray(g_s.T @ slope[:, lin.used]) + lam * data.cost[:, lin.used]
    if support is not None:
        total = np.where(support[:, lin.used], total, np.inf)
    row_min = total.min(axis=1)
    out = slope.copy()
    for z in np.flatnonzero(~lin.used):
        keep = support[:, z] if support is not None else np.ones(p_w.size, dtype=bool)
        shift = lam * data.cost[:, z]

        def gain(scores: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore"):
                tried = np.where(keep[:, None], np.minimum(row_min[:, None], scores + shift[:, None]),
                                 row_min[:, None])
            return np.nan_to_num(tried, nan=-np.inf, neginf=-1e300).sum(axis=0)

        k = int(np.argmax(gain(cand_scores)))
        q, best = cands[:, k], gain(cand_scores[:, [k]])[0]
        for _ in range(8):  # refit q to the rows it still undercuts (their pooled posterior)
            score = np.asarray(g_s.T @ MINORANT_SLOPES[privacy](q[:, None], data.p_s)).ravel()
            short = keep & (score + shift < row_min)
            if not short.any():
                break
            pooled = np.asarray(g_s[:, short].sum(axis=1)).ravel()
            trial = [pooled / pooled.sum(), 0.5 * (q + pooled / pooled.sum())]
            t_slope = MINORANT_SLOPES[privacy](np.column_stack(trial), data.p_s)
            t_gain = gain(np.asarray(g_s.T @ t_slope))
            if t_gain.max() <= best:
                break
            best, q = float(t_gain.max()), trial[int(np.argmax(t_gain))]
        out[:, z] = MINORANT_SLOPES[privacy](q[:, None], data.p_s)[:, 0]
    return out


def _finite_grad(grad: np.ndarray, p_w: np.ndarray) -> np.ndarray:
    """The gradient with each -inf entry (mi's tangent where P(s,z) = 0 < P(z)) replaced by a finite
    one 50 below the least finite scaled entry: the step still moves mass there, but its logits stay
    finite (an infinite one would make the projection's softmax NaN)."""
    bad = np.isneginf(grad)
    if not bad.any():
        return grad
    scaled = grad / p_w[:, None]
    fin = scaled[np.isfinite(scaled)]
    floor = (float(fin.min()) if fin.size else 0.0) - 50.0
    return np.where(bad, floor * p_w[:, None], grad)


def _bound(lin: Linearisation, data: FiniteData, privacy: str, nu: float, support: np.ndarray | None,
           budget: float, steps: int) -> float:
    """The tangent bound at ``lin`` (``linearised_bound``), its multiplier searched from ``nu``
    by ``steps`` bisections (0: only nu and its doublings, the cheap check between full ones)."""
    scores = np.asarray(data.g_s.T @ fill_unused(lin, data, privacy, nu, support))
    return linearised_bound(lin.offset, scores, data.cost, budget, support, nu, steps)[0]


class _Point(NamedTuple):
    """One iterate: its channel, log-channel, P(S,Z), linearisation, leakage and budget multiplier."""

    c: np.ndarray
    logc: np.ndarray
    p_sz: np.ndarray
    lin: Linearisation
    value: float
    nu: float


class _Stepper:
    """One model's mirror-descent steps (the step size adapts by backtracking)."""

    grow = 1.5  # the step size's growth after each step

    def __init__(self, data: FiniteData, budget: float, privacy: str) -> None:
        self.data, self.budget, self.leak = data, budget, SMOOTH_LEAKAGES[privacy]
        self.rows = _Rows(data.cost / data.p_w[:, None], data.p_w)
        self.eta = 1.0
        g = data.g_s.tocsc()
        # where every w carries a single s (the full observation), grad / P(w) is deriv[s(w)]: a gather
        self.s_of_w = g.indices.copy() if np.all(np.diff(g.indptr) == 1) else None

    def point(self, logits: np.ndarray, nu0: float, scale: float = 1.0) -> tuple[_Point, float, float]:
        """The projection of ``logits`` (module docstring) as a point, sum_w P(w) L(w) and E_C d."""
        c, nu, lnorm, dist = _project(logits, self.rows, self.budget, nu0, scale)
        logc = logits - (scale * nu) * self.rows.per_row - lnorm[:, None]
        p_sz = np.asarray(self.data.g_s @ c)
        lin = self.leak(p_sz, self.data.p_s)
        return _Point(c, logc, p_sz, lin, lin.value, nu), float(self.rows.p_w @ lnorm), dist

    def _scaled_gradient(self, x: _Point) -> tuple[np.ndarray, float]:
        """grad / P(w) (shape (n_w, n_z); grad = P(w) E[dL/dP(s,z) | w]) and <grad, C>."""
        p_w, deriv = self.data.p_w, x.lin.deriv
        if self.s_of_w is None:
            grad = np.asarray(self.data.g_s.T @ deriv)
            if np.isneginf(deriv).any():
                grad = _finite_grad(grad, p_w)
            return grad / p_w[:, None], float(np.einsum("ij,ij->", grad, x.c))
        if np.isneginf(deriv).any():  # as _finite_grad: 50 below the least finite entry
            fin = deriv[np.isfinite(deriv)]
            deriv = np.where(np.isneginf(deriv), (float(fin.min()) if fin.size else 0.0) - 50.0, deriv)
        return deriv[self.s_of_w], float(np.einsum("ij,ij->", deriv, x.p_sz))

    def step(self, x: _Point) -> _Point:
        """C+ proportional to C exp(-eta (grad + nu A) / P(w)), eta halved until it descends."""
        scaled, used = self._scaled_gradient(x)
        while True:
            eta = self.eta
            new, plnorm, dist = self.point(x.logc - eta * scaled, x.nu, eta)
            model = x.value - used - new.nu * dist - plnorm / eta
            if new.value <= model + 1e-12 * max(1.0, abs(x.value)) or eta < 1e-6:
                break
            self.eta *= 0.5
        self.eta = min(self.eta * self.grow, 1e6)
        return new


def solve_smooth(data: FiniteData, budget: float, privacy: str, warm: np.ndarray | None = None,
                 tol: float = 1e-7, max_iter: int = 20_000, check_every: int = 10, mix: float = 0.02
                 ) -> SmoothResult:
    """Mirror descent with a duality-gap stop (module docstring).

    ``warm`` is a channel on the live rows (shape (n_w', n_z)) to start from,
    e.g. the solution at a neighbouring budget; ``tol`` the gap to reach,
    relative to max(1, |value|). Returns the best certified point seen
    (its gap may exceed ``tol`` after ``max_iter`` steps: the caller decides).
    The sufficient-decrease test needs no extra pass over the channel: with
    log C+ = log C - eta (grad + nu A) / P(w) - L(w) (L the rows' log-normalisers),
    <grad, C+ - C> + KL(C+ || C) / eta = -<grad, C> - nu <A, C+> - sum_w P(w) L(w) / eta.
    """
    stepper = _Stepper(data, budget, privacy)
    support = _support(stepper.rows.per_row, budget - data.min_distortion, budget)
    start = np.ones(data.shape) if warm is None else (1.0 - mix) * warm + mix / data.shape[1]
    logits = np.log(start)
    if support is not None:
        logits = np.where(support, logits, -np.inf)
    x = stepper.point(logits, 0.0)[0]
    best = x
    bound, it, checks = -np.inf, 0, 0
    for it in range(1, max_iter + 1):
        if it % check_every == 1 or check_every == 1:
            checks += 1
            quick = _bound(x.lin, data, privacy, x.nu, support, budget, 0 if checks % 5 else 40)
            if best.value - quick <= 30.0 * tol * max(1.0, abs(best.value)) and checks % 5:
                quick = max(quick, _bound(x.lin, data, privacy, x.nu, support, budget, 40))  # close: search
            bound = max(bound, quick)
            if best.value - bound <= tol * max(1.0, abs(best.value)):
                break
        x = stepper.step(x)
        if x.value < best.value:
            best = x
    if best.value - bound > tol * max(1.0, abs(best.value)):  # the last point, its multiplier searched
        bound = max(bound, _bound(x.lin, data, privacy, x.nu, support, budget, 40))
    return SmoothResult(best.c, best.value, bound, best.nu, it)

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

The certificate is :func:`~.certificate.linearised_bound` with the minorants
of ``leakage.py`` at the iterates (tangents where every release is used):
the returned value is the leakage of a feasible channel and ``bound`` a proven
lower bound on the optimum; the solver stops once value - bound <= tol.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _softmax_at(logits: np.ndarray, per_row: np.ndarray, nu: float) -> np.ndarray:
    x = logits - nu * per_row if nu else logits.copy()
    x -= x.max(axis=1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=1, keepdims=True)
    return x


def _next_nu(nu: float, step: float, lo: float, hi: float | None) -> float:
    """Safeguarded Newton: the step if it stays inside the bracket, else bisection."""
    if hi is None:
        return step if nu < step <= 4.0 * nu else 4.0 * nu
    if lo < step < hi:
        return step
    return hi / 4.0 if lo == 0.0 else (float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi))


def _project(logits: np.ndarray, per_row: np.ndarray, p_w: np.ndarray, budget: float, nu0: float,
             scale: float = 1.0) -> tuple[np.ndarray, float]:
    """C_nu = softmax(logits - scale nu A/P(w)) with the least nu >= 0 meeting the budget: (C, nu).

    Safeguarded Newton on nu from ``nu0`` (the previous iterate's multiplier);
    the channel returned meets the budget up to 1e-13 max(1, budget).
    """
    cost_rows = per_row * scale if scale != 1.0 else per_row
    tol = 1e-13 * max(1.0, budget)
    lo, hi, c_hi = 0.0, None, None
    nu = nu0 * 1.0 if nu0 > 0 else 0.0
    for _ in range(300):
        c = _softmax_at(logits, cost_rows, nu)
        mean = (c * per_row).sum(axis=1)
        excess = float(p_w @ mean) - budget
        if excess <= tol:  # feasible up to rounding (E d <= budget + 1e-13)
            hi, c_hi = nu, c
            if excess >= -tol or nu == 0.0:
                break
        else:
            lo = nu
        if hi is not None and hi - lo <= 1e-15 * hi:
            break
        slope = scale * float(p_w @ ((c * per_row * per_row).sum(axis=1) - mean**2))
        step = nu + excess / slope if slope > 0 else np.inf
        if step <= 0.0 and lo == 0.0:
            nu = 0.0  # the budget may not bind any more
        elif nu == 0.0 and hi is None:
            nu = min(step, 1.0) if 0 < step < np.inf else 1.0
        else:
            nu = _next_nu(nu, step, lo, hi)
    if c_hi is None:  # pragma: no cover - the budget is above the minimum distortion
        raise FloatingPointError("no multiplier meets the budget")
    return c_hi, hi


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


def _inner(grad: np.ndarray, channel: np.ndarray) -> float:
    """<grad, C> over the entries C uses (grad may be -inf where C is 0)."""
    return float(np.multiply(grad, channel, out=np.zeros_like(grad), where=channel > 0).sum())


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


def _kl_rows(new: np.ndarray, old: np.ndarray, p_w: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(new > 0, new * (np.log(new) - np.log(old)), 0.0)
    return float(p_w @ terms.sum(axis=1))


def solve_smooth(data: FiniteData, budget: float, privacy: str, warm: np.ndarray | None = None,
                 tol: float = 1e-7, max_iter: int = 20_000, check_every: int = 10, mix: float = 0.02
                 ) -> SmoothResult:
    """Mirror descent with a duality-gap stop (module docstring).

    ``warm`` is a channel on the live rows (shape (n_w', n_z)) to start from,
    e.g. the solution at a neighbouring budget; ``tol`` the gap to reach,
    relative to max(1, |value|). Returns the best certified point seen
    (its gap may exceed ``tol`` after ``max_iter`` steps: the caller decides).
    """
    leak = SMOOTH_LEAKAGES[privacy]
    p_w = data.p_w
    per_row = data.cost / p_w[:, None]
    support = _support(per_row, budget - data.min_distortion, budget)
    start = np.ones(data.shape) if warm is None else (1.0 - mix) * warm + mix / data.shape[1]
    logits = np.log(start)
    if support is not None:
        logits = np.where(support, logits, -np.inf)
    c, nu = _project(logits, per_row, p_w, budget, 0.0)
    lin = leak(np.asarray(data.g_s @ c), data.p_s)
    value, deriv = lin.value, lin.deriv
    best = (value, c, nu)
    bound, eta, it = -np.inf, 1.0, 0
    for it in range(1, max_iter + 1):
        grad = _finite_grad(np.asarray(data.g_s.T @ deriv), p_w)  # (n_w, n_z): P(w) E[dL/dP(s,z) | w]
        if it % check_every == 1 or check_every == 1:
            scores = np.asarray(data.g_s.T @ fill_unused(lin, data, privacy, nu, support))
            lb, _ = linearised_bound(lin.offset, scores, data.cost, budget, support, nu)
            bound = max(bound, lb)
            if best[0] - bound <= tol * max(1.0, abs(best[0])):
                break
        scaled = grad / p_w[:, None]
        logc = np.log(np.maximum(c, 1e-300))
        if support is not None:
            logc[~support] = -np.inf
        used = _inner(grad, c)
        while True:
            new, nu_new = _project(logc - eta * scaled, per_row, p_w, budget, nu, eta)
            lin_new = leak(np.asarray(data.g_s @ new), data.p_s)
            val_new = lin_new.value
            model = value + (_inner(grad, new) - used) + _kl_rows(new, c, p_w) / eta
            if val_new <= model + 1e-15 * max(1.0, abs(value)) or eta < 1e-6:
                break
            eta *= 0.5
        c, nu, lin, value, deriv = new, nu_new, lin_new, val_new, lin_new.deriv
        eta = min(eta * 1.5, 1e6)
        if value < best[0]:
            best = (value, c, nu)
    return SmoothResult(best[1], best[0], bound, best[2], it)

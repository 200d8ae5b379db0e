"""The best mechanism of each GAP §4 family at given budgets (see the package notes).

``additive``, ``shift`` and ``shift-noise`` are vectorised over budgets and
return arrays of parameters; ``general`` searches eq (44) (corrected) at one budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.scenarios import BinaryGMM

from .accuracy import general_coordinates, general_parameters, mechanism_accuracy

__all__ = ["CLOSED", "additive_family", "general_family", "identical_budget", "shift_family",
           "shift_noise_family"]


def identical_budget(sc: BinaryGMM) -> float:
    """Least distortion making Z|S=0 and Z|S=1 identical (means meet, variances equalised)."""
    p = sc.prior
    v0, v1 = sc.sigma0**2, sc.sigma1**2
    return p * (1 - p) * (2 * sc.mu) ** 2 + (1 - p) * max(v1 - v0, 0.0) + p * max(v0 - v1, 0.0)


def _split(sc: BinaryGMM, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cheapest (beta0, beta1) with beta0 + beta1 = b: (prior b, (1-prior) b), cost prior(1-prior) b^2."""
    return sc.prior * b, (1 - sc.prior) * b


def additive_family(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    g = np.sqrt(d)
    z = np.zeros_like(d)
    return {"beta0": z, "beta1": z, "gamma0": g, "gamma1": g}


def shift_family(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    b = np.minimum(np.sqrt(d / (sc.prior * (1 - sc.prior))), 2 * sc.mu)
    b0, b1 = _split(sc, b)
    z = np.zeros_like(d)
    return {"beta0": b0, "beta1": b1, "gamma0": z, "gamma1": z}


def shift_noise_family(sc: BinaryGMM, d: np.ndarray) -> dict[str, np.ndarray]:
    c = sc.prior * (1 - sc.prior)
    b_hi = np.minimum(np.sqrt(d / c), 2 * sc.mu)
    if sc.sigma0 == sc.sigma1:
        # (42): d/db (2mu - b)/sqrt(D + s^2 - c b^2) has the sign of 2 mu c b - (D + s^2).
        with np.errstate(divide="ignore"):
            b_star = (d + sc.sigma0**2) / (2 * sc.mu * c)
        b = np.minimum(b_hi, b_star)
    else:

        def acc(bb: np.ndarray, rows: np.ndarray) -> np.ndarray:
            g = np.sqrt(np.maximum(d[rows] - c * bb**2, 0.0))
            b0, b1 = _split(sc, bb)
            return mechanism_accuracy(sc, b0, b1, g, g)

        b = _minimise_1d(acc, np.zeros_like(d), b_hi)
    g = np.sqrt(np.maximum(d - c * b**2, 0.0))
    b0, b1 = _split(sc, b)
    return {"beta0": b0, "beta1": b1, "gamma0": g, "gamma1": g}


def _minimise_1d(fun: Any, lo: np.ndarray, hi: np.ndarray, n_grid: int = 17, n_iter: int = 40) -> np.ndarray:
    """Row-wise min of fun(x, rows) over [lo, hi]: grid, then golden section around the best point."""
    k = lo.size
    rows = np.arange(k)
    t = np.linspace(0.0, 1.0, n_grid)
    xs = lo[:, None] + (hi - lo)[:, None] * t[None, :]  # (k, n_grid)
    fs = fun(xs.ravel(), np.repeat(rows, n_grid)).reshape(k, n_grid)
    i = np.argmin(fs, axis=1)
    best_x, best_f = xs[rows, i], fs[rows, i]
    a = xs[rows, np.maximum(i - 1, 0)]
    bb = xs[rows, np.minimum(i + 1, n_grid - 1)]
    r = (np.sqrt(5.0) - 1) / 2
    x1, x2 = bb - r * (bb - a), a + r * (bb - a)
    f1, f2 = fun(x1, rows), fun(x2, rows)
    for _ in range(n_iter):
        left = f1 < f2
        bb = np.where(left, x2, bb)
        a = np.where(left, a, x1)
        x_new = np.where(left, bb - r * (bb - a), a + r * (bb - a))
        f_new = fun(x_new, rows)
        x2, f2, x1, f1 = (
            np.where(left, x1, x_new), np.where(left, f1, f_new),
            np.where(left, x_new, x2), np.where(left, f_new, f2),
        )
    for x, f in ((x1, f1), (x2, f2)):
        better = f < best_f
        best_x, best_f = np.where(better, x, best_x), np.where(better, f, best_f)
    return best_x


def general_family(
    sc: BinaryGMM, budget: float, n_coarse: int = 41, n_seeds: int = 6, final_step: float = 1e-4
) -> tuple[dict[str, float], dict[str, Any]]:
    """Grid search of eq (44) (corrected) over (eps, w0, w1) in [0, 1]^3, refined to ``final_step``.

    A coarse n_coarse^3 grid; then the best ``n_seeds`` mutually distant grid points
    plus the shift-noise and additive optima (members of the family, so general is never
    worse than either) are refined by a pattern search on a local 7^3 grid: at each step
    size the centre moves to the best grid point until none is better, then the step
    shrinks by 3, down to <= final_step.  If the budget lets the two classes be made
    identical, the floor max(prior, 1-prior) is returned with that mechanism.
    """
    if budget >= identical_budget(sc):  # accuracy max(prior, 1-prior) is a lower bound for all Z
        g0 = np.sqrt(max(sc.sigma1**2 - sc.sigma0**2, 0.0))
        g1 = np.sqrt(max(sc.sigma0**2 - sc.sigma1**2, 0.0))
        b0, b1 = _split(sc, np.array(2 * sc.mu))
        mech = {"beta0": float(b0), "beta1": float(b1), "gamma0": float(g0), "gamma1": float(g1)}
        return mech, {"reason": "classes made identical", "identical_budget": identical_budget(sc)}

    def evaluate(pts: np.ndarray) -> np.ndarray:
        return mechanism_accuracy(sc, *general_parameters(budget, sc.prior, pts[:, 0], pts[:, 1], pts[:, 2]))

    t = np.linspace(0.0, 1.0, n_coarse)
    grid = np.stack(np.meshgrid(t, t, t, indexing="ij"), axis=-1).reshape(-1, 3)
    vals = evaluate(grid)
    h = t[1] - t[0]
    seeds: list[np.ndarray] = []
    for j in np.argsort(vals, kind="stable"):
        if all(np.max(np.abs(grid[j] - s)) > 2.5 * h for s in seeds):
            seeds.append(grid[j])
            if len(seeds) == n_seeds:
                break
    for fam in (shift_noise_family, additive_family):
        m = {k: float(v[0]) for k, v in fam(sc, np.array([budget])).items()}
        seeds.append(general_coordinates(sc, budget, m["beta0"], m["beta1"], m["gamma0"], m["gamma1"]))
    centres = np.array(seeds)  # (n, 3)
    offsets = np.stack(np.meshgrid(*(np.arange(-3, 4),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    n_eval = vals.size
    step = h
    while step > final_step:
        step = step / 3
        for _ in range(50):  # pattern search: move at this step until no neighbour is better
            pts = np.clip(centres[:, None, :] + step * offsets[None, :, :], 0.0, 1.0)  # (n, 343, 3)
            v = evaluate(pts.reshape(-1, 3)).reshape(pts.shape[:2])
            n_eval += v.size
            i = np.argmin(v, axis=1)  # offsets[len // 2] is the centre (0, 0, 0)
            moved = v[np.arange(len(centres)), i] < v[:, len(offsets) // 2]
            centres = np.where(moved[:, None], pts[np.arange(len(centres)), i], centres)
            if not np.any(moved):
                break
    v = evaluate(centres)
    best = centres[int(np.argmin(v))]
    params = general_parameters(budget, sc.prior, *best)
    mech = dict(zip(("beta0", "beta1", "gamma0", "gamma1"), (float(x) for x in params)))
    cert = {"eps": float(best[0]), "w0": float(best[1]), "w1": float(best[2]),
            "final_step": float(step), "evaluations": int(n_eval)}
    return mech, cert


CLOSED = {"additive": additive_family, "shift": shift_family, "shift-noise": shift_noise_family}

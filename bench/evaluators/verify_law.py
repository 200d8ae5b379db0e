"""Verification of a parametric mechanism's claimed law against its own releases.

An exact evaluator of a parametric mechanism (``linear-gaussian``,
``mixture-shift``, ``constant``) computes leakage and distortion from the
mechanism's parameters, i.e. from its claim that Z | W ~ N(m(W), C(W)).  Before
those numbers may count, the releases of the evaluation (the same Z, the same
W) are tested against that law.  With R = Z - m(W):

- in directions where the claimed covariance is zero, R must be zero (to
  1e-9 relative): a "deterministic" claim that varies is rejected at once;
- elsewhere, the whitened residuals Y = C^-1/2 R must be standard normal and
  independent of W: their mean (chi-square, d dof), their covariance (the
  likelihood-ratio test of Cov = I with known mean), each coordinate's law
  (Kolmogorov-Smirnov against N(0, 1)), their linear dependence on W (the
  correlations with each standardised W column, chi-square), and a nonlinear
  dependence (a chi-square independence test of Y's normal-quantile bins against
  quantile bins of each W column);
- fine scale: for scales delta = 10^-4 .. 10^-9 well below the spread of Z and
  well above its float resolution, the fractional part of Z / delta must be
  independent of S (chi-square on 8 x 4 bins); an honest continuous release has
  no structure there, a release that hides S in low-order digits does.

All tests together have a false-alarm rate <= :data:`LAW_ALPHA` (Bonferroni).
Rejection gives a one-line reason; :func:`~privbench.bench.evaluators.verify.checked_description`
then drops the exact evaluations and the row is ``inconsistent``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy import stats

LAW_ALPHA = 1e-4
QUIET = 1e-6  # claimed standard deviations below QUIET x scale count as no noise
MIN_CELL = 5.0  # smallest expected count of a binned test (else the test is skipped)


def linear_gaussian_law(mech: Any, s: np.ndarray, u: np.ndarray, observation: str) -> tuple[np.ndarray, Any]:
    """m(W) = A u + B s, C = noise_cov."""
    mean = u @ np.asarray(mech.A).T
    if observation == "full":
        mean = mean + s @ np.asarray(mech.B).T
    return mean, np.asarray(mech.noise_cov, dtype=float)


def mixture_shift_law(mech: Any, s: np.ndarray, u: np.ndarray, observation: str) -> tuple[np.ndarray, Any]:
    """m(W) = u + shift(S), per-row standard deviation |gamma_S| (useful: beta0, |gamma0| for all)."""
    p = mech.params()
    s1 = s.reshape(-1) == 1 if observation == "full" else np.zeros(len(s), bool)
    shift = np.where(s1, -p["beta1"], p["beta0"])
    scale = np.where(s1, abs(p["gamma1"]), abs(p["gamma0"]))
    return u.reshape(len(u), -1) + shift[:, None], scale


def constant_law(mech: Any, s: np.ndarray, u: np.ndarray, observation: str) -> tuple[np.ndarray, Any]:
    """m(W) = c, C = 0."""
    value = np.asarray(mech.value, dtype=float).reshape(1, -1)
    return np.repeat(value, len(u), axis=0), np.zeros((value.shape[1], value.shape[1]))


#: Mechanism type_name -> its claimed law (mean (n, d); covariance (d, d) or per-row std (n,)).
LAWS: dict[str, Callable[..., tuple[np.ndarray, Any]]] = {
    "linear-gaussian": linear_gaussian_law,
    "mixture-shift": mixture_shift_law,
    "constant": constant_law,
}


def law_disagreement(mech: Any, s: np.ndarray, u: np.ndarray, z: np.ndarray, observation: str) -> str | None:
    """The reason the releases ``z`` of W = (s, u) do not follow ``mech``'s claimed law; None if they do
    (or the type claims none)."""
    law = LAWS.get(getattr(mech, "type_name", ""))
    if law is None:
        return None
    s2, u2, z2 = (np.asarray(a, dtype=float).reshape(len(z), -1) for a in (s, u, z))
    mean, cov = law(mech, s2, u2, observation)
    r = z2 - mean
    tol = 1e-9 * (1.0 + np.abs(z2).max(initial=0.0) + np.abs(mean).max(initial=0.0))
    y, reason = whitened(r, cov, tol)
    if reason:
        return reason
    w = np.hstack([s2, u2]) if observation == "full" else u2
    tests = residual_tests(y, w) + fine_scale_tests(z2, s2)
    if not tests:
        return None
    name, p = min(tests, key=lambda t: t[1])
    if p < LAW_ALPHA / len(tests):
        return (f"the releases do not follow the claimed law Z | W ~ N(m(W), C): {name} "
                f"(p = {p:.2g} < {LAW_ALPHA:g}/{len(tests)})")
    return None


def whitened(r: np.ndarray, cov: Any, tol: float) -> tuple[np.ndarray, str | None]:
    """Whitened residuals (n, k) over the claimed noisy directions, or the reason a quiet one varies.

    A direction is quiet when its claimed standard deviation is below :data:`QUIET` times the release's
    scale (whitening there would divide float rounding by almost nothing); a quiet direction's residual
    must stay within ``tol`` plus 10 claimed standard deviations (exceeded with probability < 1e-22).
    """
    cov = np.asarray(cov, dtype=float)
    scale = QUIET * tol / 1e-9  # tol is 1e-9 times the release's scale
    if cov.ndim == 1:  # per-row standard deviation (scalar Z)
        quiet = cov <= scale
        off = np.abs(r[quiet, 0]) - tol - 10.0 * cov[quiet]
        if quiet.any() and off.max() > 0:
            return r, (f"the claimed noise is (nearly) 0 but the release differs from its mean by "
                       f"{np.abs(r[quiet]).max():.3g}")
        return (r[~quiet] / cov[~quiet, None]), None
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    sd = np.sqrt(np.clip(vals, 0.0, None))
    quiet = sd <= scale
    off = (np.abs(r @ vecs[:, quiet]) - tol - 10.0 * sd[quiet]).max(initial=-1.0)
    if off > 0:
        return r, (f"the claimed covariance has (nearly) no noise in {int(quiet.sum())} direction(s) but the "
                   f"release varies there by {np.abs(r @ vecs[:, quiet]).max():.3g}")
    return (r @ vecs[:, ~quiet]) / sd[~quiet], None


def residual_tests(y: np.ndarray, w: np.ndarray) -> list[tuple[str, float]]:
    """(name, p-value) of the tests that whitened residuals ``y`` are N(0, I) and independent of ``w``."""
    n, k = y.shape
    if n < 50 or k == 0 or len(w) != n:
        return []
    out = [("mean of the residuals", float(stats.chi2.sf(n * float(y.mean(axis=0) @ y.mean(axis=0)), k)))]
    sample = y.T @ y / n
    sign, logdet = np.linalg.slogdet(sample)
    lrt = n * (np.trace(sample) - logdet - k) if sign > 0 else np.inf
    out.append(("covariance of the residuals", float(stats.chi2.sf(lrt, k * (k + 1) // 2))))
    for j in range(k):
        out.append((f"law of residual {j} (KS against N(0, 1))", float(stats.kstest(y[:, j], "norm").pvalue)))
    sd = w.std(axis=0)
    cols = w[:, sd > 0]
    if cols.shape[1]:
        corr = (y.T @ ((cols - cols.mean(axis=0)) / cols.std(axis=0))) / n  # (k, d_w), each ~ N(0, 1/n)
        out.append(("linear dependence of the residuals on W", float(stats.chi2.sf(n * float((corr**2).sum()),
                                                                                  corr.size))))
    yb = np.digitize(y, stats.norm.ppf([0.125 * i for i in range(1, 8)]))
    for i in range(cols.shape[1]):
        wb = quantile_bins(cols[:, i], 4)
        for j in range(k):
            p = independence_p(yb[:, j], wb, 8, 4)
            if p is not None:
                out.append((f"dependence of residual {j} on W column {i}", p))
    return out


def fine_scale_tests(z: np.ndarray, s: np.ndarray) -> list[tuple[str, float]]:
    """(name, p-value) of the independence of Z's fine-scale digits from S (module docstring)."""
    out = []
    for i in range(min(s.shape[1], 5)):
        col = s[:, i]
        sb = quantile_bins(col, 4) if len(np.unique(col)) > 4 else np.unique(col, return_inverse=True)[1]
        out += fine_scale_vs(z, sb.reshape(-1), f"S column {i}")
    return out


def fine_scale_vs(z: np.ndarray, sb: np.ndarray, what: str) -> list[tuple[str, float]]:
    """(name, p-value) of the independence of each Z column's fine-scale digits from the labels ``sb``."""
    n_s = int(sb.max(initial=0)) + 1
    out = []
    for j in range(z.shape[1]):
        col = z[:, j]
        spread, size = float(col.std()), float(np.abs(col).max(initial=0.0))
        for e in range(4, 10):
            delta = 10.0**-e
            if not (delta * 1e3 < spread and delta > 1e4 * np.spacing(max(size, 1e-300))):
                continue
            frac = np.floor(np.mod(col / delta, 1.0) * 8).astype(np.int64).clip(0, 7)
            p = independence_p(frac, sb, 8, n_s)
            if p is not None:
                out.append((f"digits of Z column {j} at scale 1e-{e} depend on {what}", p))
    return out


def quantile_bins(x: np.ndarray, bins: int) -> np.ndarray:
    """Labels 0..bins-1 of ``x`` by its sample quantiles."""
    edges = np.quantile(x, [i / bins for i in range(1, bins)])
    return np.searchsorted(edges, x, side="right")


def independence_p(a: np.ndarray, b: np.ndarray, na: int, nb: int) -> float | None:
    """p-value of the chi-square independence test of labels ``a`` and ``b``; None when cells are too small."""
    table = np.bincount(a * nb + b, minlength=na * nb).reshape(na, nb).astype(float)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return None
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
    if expected.min() < MIN_CELL:
        return None
    return float(stats.chi2_contingency(table, correction=False)[1])

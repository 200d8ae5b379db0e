"""The ``fine-scale-attacker`` evaluator: an attacker that looks at the low-order digits of a release.

The other sample evaluators (Gaussian approximation, post-hoc MLP, KSG, linear, kNN and boosted
attackers on standardised Z) are smooth in Z at the scale of Z's spread: S written into digits
far below that scale (``z = round(y, 6) + 1e-7 * bit``) is invisible to all of them, and they
agree on the same wrong number.  This attacker builds, for every coordinate z_j and every scale
delta in :data:`SCALES` (decimal 1e-1 .. 1e-9 and binary 2^-4 .. 2^-36), the residue
r = frac(z_j / delta) in [0, 1) (where the column's float resolution carries it: :func:`resolvable`);
it screens each residue for dependence on S beyond what its coordinate's coarse value explains,
on the training half (:func:`screen`: a chi-square test of the residue's 8 bins against S's label
or quartiles within 16 quantile strata of z_j; Bonferroni-corrected p < :data:`ALPHA`) and, when some residues pass, trains the bench's post-hoc
attacker (:func:`.attacker.posthoc_attacker`, the same early stopping) on Z plus (r, sin 2 pi r,
cos 2 pi r) of the selected residues; for a continuous S also a classifier of S's quantile bin
(:func:`binned_bound`) and the smooth Gaussian cut in two on S's first column where the residue tells
most, re-weighted by a classifier of the half (:func:`split_bound`).  When none passes it returns no evaluation (the release
shows no fine-scale dependence; the other evaluators cover it).

What the bench can see (the largest credible evaluator, :func:`.headline.headline`):

- smooth dependence of S on Z (linear, Gaussian, heteroscedastic, monotone transforms, spirals,
  interactions) up to the attackers' capacity and the sample size;
- information in the sign, parity or residue of one coordinate at a decimal or binary scale of
  :data:`SCALES` (rounding grids, digits or mantissa bits in those positions), when it moves the
  distribution of S (its label or quartiles) across the residue's bins within narrow strata of
  z_j, and the scale is at least 64 times the float spacing at the column's largest |z|
  (float32 releases: only the coarser scales).

What it cannot see: information spread over several coordinates' digits jointly (e.g. the
parity of a sum of digits, an XOR of two coordinates' bits) with no marginal trace in one
residue; digits at scales outside :data:`SCALES` (e.g. base 3, or below 2^-36 of the value);
information in the order or ranks of rows (the evaluators treat rows as i.i.d.); keyed or
pseudo-random encodings (a cipher of S in the digits is indistinguishable from noise without
the key); and any dependence too weak for the sample size.  A release with such channels is
under-read; the bench does not certify it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from scipy.special import log_ndtr, logsumexp

from .attacker import attacker_rows, posthoc_attacker
from .evaluation import Evaluation, make_evaluation

SCALES: tuple[float, ...] = tuple(10.0 ** -k for k in range(1, 10)) + tuple(2.0 ** -k for k in range(4, 37, 4))
N_BINS = 8
N_STRATA = 16
ALPHA = 1e-6  # family-wise false-selection rate of the screening (Bonferroni)
MAX_SELECTED = 8
N_S_BINS = 16  # bins of a continuous S for fine-scale-binned


def resolvable(col: np.ndarray, scales: tuple[float, ...]) -> list[float]:
    """The scales whose residues the column's floating-point resolution can carry.

    A column whose values are all exactly float32 has 24 significant bits, else 53; a residue at
    scale delta is kept only if the spacing of representable numbers at the column's largest |z|
    is at most delta / 64.  Otherwise the residue is set by the number format and |z| (a float32
    release has zero residues at 2^-28 for |z| >= 1 but not for small |z|), which would look like
    dependence on S wherever |z| depends on S.
    """
    top = float(np.max(np.abs(col))) if col.size else 0.0
    if top == 0.0:
        return list(scales)
    bits = 24 if np.array_equal(col.astype(np.float32).astype(float), col) else 53
    ulp = 2.0 ** (math.floor(math.log2(top)) - (bits - 1))
    return [d for d in scales if ulp <= d / 64]


def residues(z: np.ndarray, scales: tuple[float, ...] = SCALES) -> tuple[np.ndarray, list[tuple[int, float]]]:
    """frac(z_j / delta) for every column j and every scale delta its resolution carries (:func:`resolvable`):
    (n, m) and the (j, delta) of each of the m columns."""
    cols: list[np.ndarray] = []
    names: list[tuple[int, float]] = []
    for j in range(z.shape[1]):
        for d in resolvable(z[:, j], scales):
            q = z[:, j] / d
            cols.append(q - np.floor(q))
            names.append((j, d))
    if not cols:
        return np.zeros((len(z), 0)), names
    return np.clip(np.stack(cols, axis=1), 0.0, 1.0 - 1e-12), names


def screen(r: np.ndarray, z: np.ndarray, cols: list[int], s: np.ndarray, discrete: bool) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the residue columns that depend on S beyond their coordinate's coarse value, and every
    column's p-value.

    A stratified chi-square test per residue column: the rows are split into :data:`N_STRATA` quantile
    strata of the coordinate z_j the residue comes from; within each stratum, the residue's
    :data:`N_BINS` bins are tested against S (its label, or for a continuous S the quartile of each
    coordinate); the Pearson statistics and degrees of freedom add up over strata.  Dependence that
    runs through z_j itself (a coarse residue near z_j = 0 is a smooth function of z_j) stays within
    a stratum's width and is not selected; information written into the digits is.  Bonferroni over
    the columns at family-wise rate :data:`ALPHA`.
    """
    n, m = r.shape
    if discrete:
        y = s.astype(np.int64).reshape(n)[:, None]
    else:
        s2 = s.reshape(n, -1)
        y = np.stack([np.searchsorted(np.quantile(c, [0.25, 0.5, 0.75]), c) for c in s2.T], axis=1)
    n_y = int(y.max()) + 1
    rb = np.minimum((r * N_BINS).astype(np.int64), N_BINS - 1)
    p = np.ones(m)
    strata = {}
    for j in set(cols):
        edges = np.quantile(z[:, j], np.linspace(0, 1, N_STRATA + 1)[1:-1])
        strata[j] = np.searchsorted(edges, z[:, j])
    for k in range(m):
        stat, dof = 0.0, 0
        for i in range(y.shape[1]):
            idx = (strata[cols[k]] * N_BINS + rb[:, k]) * n_y + y[:, i]
            cnt = np.bincount(idx, minlength=N_STRATA * N_BINS * n_y).reshape(N_STRATA, N_BINS, n_y).astype(float)
            tot = cnt.sum(axis=(1, 2), keepdims=True)
            exp = cnt.sum(axis=2, keepdims=True) * cnt.sum(axis=1, keepdims=True) / np.maximum(tot, 1.0)
            ok = exp > 0
            stat += float((((cnt - exp) ** 2)[ok] / exp[ok]).sum())
            used_r, used_y = (cnt.sum(axis=2) > 0).sum(axis=1), (cnt.sum(axis=1) > 0).sum(axis=1)
            dof += int(np.maximum(used_r - 1, 0) @ np.maximum(used_y - 1, 0))
        p[k] = float(stats.chi2.sf(stat, dof)) if dof > 0 else 1.0
    chosen = np.flatnonzero(p < ALPHA / max(m, 1))
    return chosen[np.argsort(p[chosen], kind="stable")][:MAX_SELECTED], p


def fine_scale_attacker(z: np.ndarray, s: np.ndarray, *, discrete: bool, log_p_s: np.ndarray, h_s: float,
                        seed: int) -> list[Evaluation]:
    """The fine-scale attacker's ``mi`` (and, for a discrete S, ``map``) lower bounds; [] when no residue
    depends on S (module docstring).  Screening uses the training half only (the first n // 2 rows)."""
    z = z.reshape(len(z), -1).astype(float)
    n_tr = len(z) // 2
    r, names = residues(z)
    if r.shape[1] == 0:
        return []
    chosen, pmin = screen(r[:n_tr], z[:n_tr], [j for j, _ in names], s[:n_tr], discrete)
    if chosen.size == 0:
        return []
    sel = r[:, chosen]
    feats = np.hstack([z, sel, np.sin(2 * math.pi * sel), np.cos(2 * math.pi * sel)])
    att = posthoc_attacker(feats, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=seed)
    detail: dict[str, Any] = {"selected": [[names[k][0], names[k][1], float(pmin[k])] for k in chosen],
                              "note": "post-hoc attacker on Z plus the residues frac(z_j / delta) that depend on S"}
    acc = att.pop("accuracy", None)
    out = [make_evaluation("mi", att.pop("bound"), "fine-scale-attacker", "lower-bound", att.pop("bound_stderr"),
                           **att, **detail)]
    if discrete and acc is not None:
        out.append(make_evaluation("map", acc, "fine-scale-attacker", "lower-bound",
                                   math.sqrt(acc * (1 - acc) / att["n_test"]), **att, **detail))
    if not discrete:
        c = best_split(s.reshape(len(s), -1)[:n_tr, 0], sel[:n_tr, 0])
        out += [binned_bound(feats, s, seed, detail), split_bound(z, feats, s, log_p_s, seed, c, detail)]
    return out


def binned_bound(feats: np.ndarray, s: np.ndarray, seed: int, detail: dict[str, Any]) -> Evaluation:
    """``fine-scale-binned``: I(S;Z) >= I(q(S); Z) for q the :data:`N_S_BINS` quantile bins of S's first
    column (data processing), bounded by a classifier of q(S) on the same features.

    A Gaussian Q(S|Z) cannot follow a posterior that a digit cuts in two (S's sign hidden below the
    release's resolution: a truncated Gaussian); a classifier of binned S can.  The bins are the
    training half's quantiles and their probabilities p(q) are estimated there; the bound
    E[log Q(q|Z) - log p(q)] on the test half is then biased up by KL(p || p_hat), about
    (K - 1) / (2 n_train), which is subtracted.
    """
    n_tr = int(len(s) * 0.5)
    col = s.reshape(len(s), -1)[:, 0]
    edges = np.quantile(col[:n_tr], [i / N_S_BINS for i in range(1, N_S_BINS)])
    q = np.searchsorted(edges, col, side="right").astype(np.int64)
    p_hat = np.bincount(q[:n_tr], minlength=N_S_BINS) / n_tr
    log_p = np.log(np.maximum(p_hat[q], 1.0 / n_tr))
    h_q = float(-(p_hat[p_hat > 0] * np.log(p_hat[p_hat > 0])).sum())
    att = posthoc_attacker(feats, q, discrete=True, log_p_s=log_p, h_s=h_q, seed=seed)
    att.pop("accuracy", None)
    correction = (N_S_BINS - 1) / (2.0 * n_tr)
    return make_evaluation("mi", att.pop("bound") - correction, "fine-scale-binned", "lower-bound",
                           att.pop("bound_stderr"), **att, selected=detail["selected"], bins=N_S_BINS,
                           kl_correction=correction,
                           note="classifier of S's quantile bin on Z plus the selected residues: a lower bound "
                                "on I(q(S); Z) <= I(S; Z)")


def best_split(s1: np.ndarray, r: np.ndarray) -> float:
    """The threshold c on S's first column (training rows) whose half [s_1 >= c] the residue ``r`` (the most
    significant selected one, in :data:`N_BINS` bins) tells most about: the plug-in I([s_1 >= c]; bin of r),
    maximised over the midpoints between consecutive values of s_1 (a single pass of cumulative counts).
    Where a digit carries S's sign this is the gap around 0; the median would cut through one sign."""
    order = np.argsort(s1, kind="stable")
    rb = np.minimum((r[order] * N_BINS).astype(np.int64), N_BINS - 1)
    n = len(s1)
    below = np.cumsum(np.eye(N_BINS)[rb], axis=0)[:-1]  # counts of each bin among the k + 1 smallest
    above = below[-1] + np.eye(N_BINS)[rb[-1]] - below
    k = np.arange(1, n)[:, None].astype(float)
    tot = below + above

    def part(cnt: np.ndarray, size: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(cnt > 0, cnt * np.log(cnt * n / (size * tot)), 0.0).sum(axis=1)

    mi = part(below, k) + part(above, n - k)
    i = int(np.argmax(mi))
    ss = s1[order]
    return float(0.5 * (ss[i] + ss[i + 1]))


def split_bound(z: np.ndarray, feats: np.ndarray, s: np.ndarray, log_p_s: np.ndarray, seed: int, c: float,
                detail: dict[str, Any]) -> Evaluation:
    """``fine-scale-split``: E[log Q(S|Z) - log p(S)] for Q the smooth attacker's Gaussian cut at c (on the
    training half, :func:`best_split`) on S's first column and re-weighted by a classifier of the half
    h = [s_1 >= c] on Z plus the residues:

        Q(s | z) = P(h(s) | z, residues) G(s | z) / G(s_1 in h(s) | z),

    a density for any classifier and any Gaussian G (each half's mass is P(h)), so the bound holds in
    expectation.  G is :func:`.attacker.posthoc_attacker`'s Gaussian on Z alone (the posterior given the
    smooth part of the release), P the post-hoc classifier of h.  Where a digit carries S's sign, P is
    (nearly) certain and Q is the posterior truncated to the sign, which a Gaussian Q cannot follow and
    ``fine-scale-binned`` follows only up to its bins.  All three are fitted on the training half only.
    """
    n = len(s)
    y = s.reshape(n, -1).astype(float)
    _, g = attacker_rows(z, y, discrete=False, log_p_s=log_p_s, h_s=0.0, seed=seed)
    n_tr = g["n_tr"]
    half = (y[:, 0] >= c).astype(np.int64)
    att, p = attacker_rows(feats, half, discrete=True, log_p_s=np.zeros(n), h_s=0.0, seed=seed)
    m, sd = g["model"].first_marginal(slice(n_tr, n))
    c_std = (c - y[:n_tr, 0].mean()) / y[:n_tr, 0].std()
    sign = np.where(half[n_tr:] == 1, 1.0, -1.0)[:, None]
    log_mass = logsumexp(log_ndtr(sign * (m - c_std) / sd), axis=1) - math.log(m.shape[1])
    diff = p["log_q"] + g["log_q"] - log_mass - log_p_s[n_tr:]
    ok = bool(np.all(np.isfinite(diff))) and att["credible"]
    nan = float("nan")
    return make_evaluation("mi", float(diff.mean()) if ok else nan, "fine-scale-split", "lower-bound",
                           float(diff.std(ddof=1) / math.sqrt(diff.size)) if ok else nan, n_train=n_tr,
                           n_test=int(diff.size), credible=ok, split_at=c, selected=detail["selected"],
                           classifier_best_step=att["best_step"],
                           note="the smooth attacker's Gaussian cut at a threshold on S's first column, its halves "
                                "re-weighted by a classifier on Z plus the selected residues")

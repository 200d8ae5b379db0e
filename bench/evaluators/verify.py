"""Verification of a mechanism's account of itself against its own fresh releases.

The bench scores what a mechanism releases.  An exact evaluator may use a
mechanism's description (its ``channel()``) only after that description has
passed a goodness-of-fit test against releases drawn through ``release()``:

- every value w of W with probability >= :data:`MIN_ROW_MASS` under the
  scenario is released :func:`draws_needed` times, all rows interleaved in a
  random order, in chunks (fresh arrays, a random stream of its own, so the
  evaluators' numbers do not move and no call holds one repeated value that
  the release could recognise), and the counts of Z are G-tested against the
  claimed row P(Z | W = w);
- the number of draws is the smallest for which a row whose true law is at
  total-variation distance :data:`TV` from the claim (chi-square divergence
  >= 4 TV^2) is rejected with probability >= :data:`POWER`, at a false-alarm
  rate <= :data:`ALPHA` over all tested rows (Bonferroni);
- a Z the claim gives probability 0 is an immediate rejection.

On rejection the description is ignored: the finite evaluators fall back to
the plug-in estimates of fresh (S, Z), and the verdict (an Evaluation of metric
``consistency``, value 0) makes the runner store the row as ``inconsistent``
with a one-line reason.  A passed test is recorded with value 1.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.stats import chi2, ncx2

from .evaluation import Evaluation, make_evaluation

ALPHA = 1e-4
POWER = 0.999
TV = 0.01
MIN_ROW_MASS = 0.01
CHUNK = 1 << 18  # releases per call of the verification
EVALUATOR = "channel-gof"
CONSISTENCY = "consistency"


@functools.lru_cache(maxsize=256)
def draws_needed(df: int, rows: int, alpha: float = ALPHA, power: float = POWER, tv: float = TV) -> int:
    """Releases per tested row so that a TV discrepancy ``tv`` is caught with ``power`` (G-test, df dof)."""
    if df < 1:
        return 2000  # a deterministic claimed row: any other Z rejects at once; a few draws suffice
    crit = chi2.isf(alpha / rows, df)
    delta = 4.0 * tv * tv
    lo, hi = 1, 10**9
    while lo < hi:
        mid = (lo + hi) // 2
        if ncx2.sf(crit, df, mid * delta) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def w_marginal(sc: Any, observation: str) -> np.ndarray:
    """P(W = w) of a finite scenario: U's marginal (``useful``) or the flat joint s * n_u + u (``full``)."""
    joint = sc.joint()
    return joint.sum(axis=0) if observation == "useful" else joint.ravel()


def verify_channel(mech: Any, channel: np.ndarray, p_w: np.ndarray, n_z: int, seed: int) -> Evaluation:
    """G-test the claimed ``channel`` (n_w, n_z) against fresh releases of ``mech`` (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x76657269]))  # "veri": its own stream
    rows = [w for w in range(len(p_w)) if p_w[w] >= MIN_ROW_MASS]
    draws = [draws_needed(int((channel[w] > 0).sum()) - 1, len(rows)) for w in rows]
    counts = mixed_releases(mech, rows, draws, n_z, rng)
    if isinstance(counts, str):
        return verdict(False, counts, rows=len(rows))
    worst: dict[str, Any] = {"p_value": 1.0, "row": None}
    for w, n, row_counts in zip(rows, draws, counts):
        reason = row_test(channel[w], row_counts, n, w, len(rows), worst)
        if reason:
            return verdict(False, reason, rows=len(rows), **worst)
    return verdict(True, "", rows=len(rows), **worst)


def mixed_releases(mech: Any, rows: list[int], draws: list[int], n_z: int,
                   rng: np.random.Generator) -> np.ndarray | str:
    """Counts of Z per tested row (len(rows), n_z), or the reason the releases are malformed.

    The tested values of W are released interleaved, in a random order and in chunks of
    :data:`CHUNK`, each from a fresh array: no call holds one repeated value that a release could
    recognise as the verification.
    """
    w_all = np.repeat(np.asarray(rows, dtype=np.int64), draws)[rng.permutation(int(sum(draws)))]
    index = np.full(int(max(rows, default=0)) + 1, -1, dtype=np.int64)
    index[rows] = np.arange(len(rows))
    counts = np.zeros(len(rows) * n_z, dtype=np.int64)
    for lo in range(0, len(w_all), CHUNK):
        w = w_all[lo:lo + CHUNK]
        z = np.asarray(mech.release(w.copy(), rng))
        if z.shape != w.shape or z.dtype.kind not in "iu" or (len(z) and (z.min() < 0 or z.max() >= n_z)):
            return (f"release() gave {z.dtype} of shape {z.shape}, not {len(w)} labels in 0..{n_z - 1}")
        counts += np.bincount(index[w] * n_z + z, minlength=len(rows) * n_z)
    return counts.reshape(len(rows), n_z)


def row_test(claim: np.ndarray, counts: np.ndarray, n: int, w: int, n_rows: int,
             worst: dict[str, Any]) -> str | None:
    """G-test one row's ``counts`` of Z against the claimed row; updates ``worst``; a reason on rejection."""
    support = claim > 0
    if counts[~support].any():
        bad = int(np.flatnonzero(counts * ~support)[0])
        worst.update(row=w, n=n)
        return (f"channel() does not describe release(): it says P(Z={bad} | W={w}) = 0 but release() gave "
                f"Z={bad} {int(counts[bad])} times in {n}")
    expected = n * claim[support]
    obs = counts[support]
    g = 2.0 * float(np.sum(np.where(obs > 0, obs * np.log(np.where(obs > 0, obs, 1) / expected), 0.0)))
    df = int(support.sum()) - 1
    p = float(chi2.sf(g, df)) if df > 0 else 1.0
    if p < worst["p_value"]:
        worst.update(p_value=p, row=w, g=g, n=n, row_tv=0.5 * float(np.abs(counts / n - claim).sum()))
    if p < ALPHA / n_rows:
        return (f"channel() does not describe release(): row W={w} differs by total variation "
                f"{worst['row_tv']:.3g} over {n} releases (G-test p = {p:.2g})")
    return None


def verdict(ok: bool, reason: str, **detail: Any) -> Evaluation:
    """The ``consistency`` evaluation: value 1 (the description was verified) or 0 (with the reason)."""
    return make_evaluation(CONSISTENCY, 1.0 if ok else 0.0, EVALUATOR, "exact", reason=reason, alpha=ALPHA,
                           power=POWER, tv=TV, min_row_mass=MIN_ROW_MASS, **detail)


def inconsistency(evals: list[Evaluation]) -> str | None:
    """The reason of the first failed consistency check among ``evals``, or None."""
    for e in evals:
        if e.metric == CONSISTENCY and e.value < 1:
            return str(e.detail.get("reason") or f"{e.evaluator} failed")
    return None


def distortion_disagreement(exact: Evaluation, sample: Evaluation, sigmas: float = 5.0) -> str | None:
    """A reason when an exact distortion and the sample distortion of the same releases disagree
    beyond ``sigmas`` standard errors (false alarm < 1e-6 for an honest description); else None."""
    tol = sigmas * float(sample.stderr) + 1e-9 * max(1.0, abs(float(exact.value)))
    if math.isfinite(exact.value) and abs(float(exact.value) - float(sample.value)) > tol:
        return (f"exact distortion {exact.value:.6g} ({exact.evaluator}) disagrees with the sample distortion "
                f"{sample.value:.6g} +- {sample.stderr:.2g} of the same releases")
    return None


def checked_description(leak: list[Evaluation], exact_d: list[Evaluation], sample_d: Evaluation,
                        law: str | None = None) -> tuple[list[Evaluation], list[Evaluation], list[Evaluation]]:
    """(leakage, exact distortion, verdicts) after checking a parametric description against the same
    releases: its exact distortion against their sample distortion, and (``law``, the reason from
    :func:`~privbench.bench.evaluators.verify_law.law_disagreement`) its claimed law.  On failure the
    description's exact evaluations are dropped and a failed ``consistency`` verdict carries the reason;
    a verified description is recorded with a passed verdict."""
    if not exact_d:
        return leak, exact_d, []
    reason = distortion_disagreement(exact_d[0], sample_d) or law
    if reason is None:
        return leak, exact_d, [verdict(True, "", evaluator_note="exact distortion and claimed law verified")]
    return [], [], [verdict(False, f"the mechanism's parameters do not describe release(): {reason}")]

"""The sample evaluators of a continuous release's leakage: an ensemble of lower bounds and estimates.

:func:`sample_leakage` runs every evaluator that needs only fresh (S, Z) pairs and the true
log-density of S; the headline (:func:`.headline.headline`) takes the largest credible one, so
the headline is never below any credible lower bound the ensemble holds:

========================  =========  ==========================================================
evaluator                 kind       what
========================  =========  ==========================================================
gaussian-approx           lower-     PPAN III-B1 (Gaussian S only: it is no bound otherwise)
                            bound
posthoc-attacker          lower-     h(S) + E log Q(S|Z), an MLP trained to convergence
                            bound      (attacker.py); ``mixture-fresh-classifier`` its accuracy
ksg                       estimate   Kraskov et al., every row (continuous S only)
polynomial-attacker       lower-     cross-fitted Gaussian Q(S|Z), its mean a stacked ridge regression on
                            bound      polynomial, radial and iterated-quadratic bases of Z (polyreg.py;
                                       continuous S only)
ensemble-linear           lower-     the mismatch study's linear attacker (mismatch_families.py)
                            bound
ensemble-knn              lower-     the study's k-nearest-neighbour attacker
                            bound
ensemble-gbt              lower-     the study's gradient-boosted trees (discrete S only)
                            bound
fine-scale-attacker       lower-     residues of Z's digits at fine scales (finescale.py);
                            bound      only where a residue depends on S (also ``-binned`` and
                                       ``-split`` for a continuous S)
========================  =========  ==========================================================

The study's wide MLP is left out (it costs 1-4 s a case and, trained on the same features,
adds nothing the converged post-hoc MLP does not see; the study still runs it).  The ensemble
attackers are seeded from their own stream, so adding them leaves the other numbers unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .attacker import posthoc_attacker
from .evaluation import Evaluation, make_evaluation
from .finescale import fine_scale_attacker
from .gaussian_approx import gaussian_approx_mi
from .ksg import ksg_mi
from .mismatch_families import attack_gbt, attack_knn, attack_linear
from .polyreg import polynomial_attacker

FAMILIES = {"linear": attack_linear, "knn": attack_knn, "gbt": attack_gbt}


def sample_leakage(z: np.ndarray, s: np.ndarray, *, discrete: bool, log_p_s: np.ndarray, h_s: float, seed: int,
                   rng: np.random.Generator, gaussian_approx: bool) -> list[Evaluation]:
    """Every sample evaluator of I(S;Z) (and, for a discrete S, of the MAP accuracy), module table.

    Parameters
    ----------
    z : ndarray, shape (n, d_z)
    s : ndarray, shape (n,) labels (``discrete``) or (n, d_s) values
    log_p_s : ndarray, shape (n,)
        The TRUE log p(s) of each row (the attackers' bounds are E[log Q(S|Z) - log p(S)]).
    h_s : float
        The entropy of S (differential for a continuous S), recorded with the post-hoc bound.
    seed : int
        Seeds the attackers (torch seed of the post-hoc attacker; the others derive theirs).
    rng : numpy.random.Generator
        KSG's jitter.
    gaussian_approx : bool
        Run the Gaussian approximation (a lower bound only for a Gaussian S; the Gaussian
        scenarios' evaluator runs it before this, also where the headline is exact).
    """
    z = z.reshape(len(z), -1)
    out = [gaussian_approx_mi(s, z)] if gaussian_approx else []
    att = posthoc_attacker(z, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=seed)
    if discrete:
        acc = att.pop("accuracy")
        out.append(make_evaluation("map", acc, "mixture-fresh-classifier", "lower-bound",
                                   math.sqrt(acc * (1 - acc) / att["n_test"]), **att,
                                   note="held-out accuracy of a classifier trained from scratch; <= MAP accuracy"))
    out.append(make_evaluation("mi", att.pop("bound"), "posthoc-attacker", "lower-bound", att.pop("bound_stderr"),
                               **att, note="h(S) + E log Q(S|Z) on held-out releases, h(S) exact from the model"))
    if not discrete:
        out.append(ksg_mi(s, z, rng=rng))
        out += polynomial_attacker(z, s, log_p_s, seed)
    out += family_attackers(z, s, discrete, log_p_s, seed)
    out += fine_scale_attacker(z, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=seed)
    return out


def family_attackers(z: np.ndarray, s: np.ndarray, discrete: bool, log_p_s: np.ndarray,
                     seed: int) -> list[Evaluation]:
    """``ensemble-linear``, ``ensemble-knn`` and (discrete S) ``ensemble-gbt``: trained on the first half,
    scored on the second, as E[log Q(S|Z) - log p(S)] (and held-out accuracy for a discrete S)."""
    from threadpoolctl import threadpool_limits

    n_tr = len(z) // 2
    s2 = s.reshape(len(s)).astype(np.int64) if discrete else s.reshape(len(s), -1).astype(float)
    seq = np.random.SeedSequence([int(seed), 0x656E73])  # "ens": a stream of its own
    seeds = [int(x) for x in seq.generate_state(len(FAMILIES))]
    out: list[Evaluation] = []
    with threadpool_limits(1):
        for (fam, run), fam_seed in zip(FAMILIES.items(), seeds):
            if fam == "gbt" and not discrete:
                continue
            res = run(z[:n_tr], s2[:n_tr], z[n_tr:], s2[n_tr:], log_p_s[n_tr:], discrete=discrete, seed=fam_seed)
            out += family_evaluations(f"ensemble-{fam}", res, log_p_s[n_tr:], discrete)
    return out


def family_evaluations(name: str, res: dict[str, Any], log_p_te: np.ndarray, discrete: bool) -> list[Evaluation]:
    """The mi (and map) evaluations of one attacker's held-out ``log_q`` (mismatch_families' result dict)."""
    lq = res["log_q"]
    diff = lq - res.get("log_scale", 0.0) - log_p_te[:len(lq)]
    ok = bool(np.all(np.isfinite(diff)))
    nan = float("nan")
    detail = {"n_train": res["n_train"], "n_test": int(diff.size), **res.get("params", {})}
    if not ok:
        detail["credible"] = False
    out = [make_evaluation("mi", float(diff.mean()) if ok else nan, name, "lower-bound",
                           float(diff.std(ddof=1) / math.sqrt(diff.size)) if ok else nan, **detail,
                           note="E[log Q(S|Z) - log p(S)] on held-out releases")]
    if discrete and res.get("accuracy") is not None:
        acc = float(res["accuracy"])
        out.append(make_evaluation("map", acc, name, "lower-bound", math.sqrt(max(acc * (1 - acc), 0.0) / diff.size),
                                   **detail, note="held-out accuracy of argmax Q(s|Z); <= the MAP accuracy"))
    return out

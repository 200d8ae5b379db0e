"""Fresh attackers of several architectures: the attacker-mismatch study.

A learner's privacy is trained against ONE adversary architecture.  The
mismatch study asks whether it survives others: each family below is trained
from scratch on held-out releases (the first half of fresh (Z, S) pairs; the
second half scores it), with no access to the learner or its adversary.  Every
family gives a lower bound on the leakage (up to estimation error):

- the variational MI bound H(S) + E log Q(S|Z), estimated as the held-out mean of
  log Q(S|Z) - log p(S) with p the TRUE marginal (same expectation as with the
  exact H(S), smaller variance; any Q gives a lower bound, the gap being
  E KL(P(S|Z) || Q));
- for a discrete S also the held-out accuracy of the decision argmax Q(s|Z),
  which never exceeds the MAP accuracy.

=====================  ===========================================================
evaluator              Q(S|Z)
=====================  ===========================================================
attacker-linear        discrete: multinomial logistic regression (sklearn, lbfgs,
                       C = 1 on standardised Z); continuous: linear-Gaussian,
                       S ~ N(A Z + b, Sigma) by least squares, Sigma the residual
                       covariance
attacker-mlp-wide      3 hidden layers of 256 ReLU (torch, Adam 1e-3, minibatches
                       of 256, at most 20 epochs, early stopping on a 20%
                       validation split of the training half); softmax head, or a
                       diagonal Gaussian head (mean, log-variance) on standardised S
attacker-knn           k-nearest neighbours (k = round(sqrt(n_train)), Euclidean on
                       standardised Z): class frequencies among the neighbours with
                       add-0.5 smoothing (a floor, so log Q is finite); continuous:
                       N(neighbour mean of S, Sigma), Sigma the leave-one-out
                       residual covariance on the training half
attacker-gbt           discrete S only: sklearn HistGradientBoostingClassifier
                       (at most 100 iterations, early stopping on 20% of the
                       training half), probabilities floored at 1e-6
=====================  ===========================================================

The ``mlp`` family of the study is the bench's standard post-hoc attacker
(:func:`privbench.bench.evaluators.attacker.posthoc_attacker`, evaluators ``posthoc-attacker`` and
``mixture-fresh-classifier``), which already runs on every case; it is not run
twice.  :func:`mismatch_evaluations` accepts ``include_mlp=True`` for callers
(e.g. labelled/image scenarios) whose standard evaluators do not include it:
it then adds ``attacker-mlp`` from that same function.

Every evaluation carries ``detail["study"] = "mismatch"``, and
:func:`privbench.bench.evaluators.headline` skips such evaluations: a case is
scored the same with or without the study, so runs with and without it stay
comparable (and an extra attacker can never move a gap).

Cost (one core, n_eval = 20000, i.e. 10000 training and 10000 test releases,
measured on this project's shared 2-core machine, seconds per family):

==========================  =======  ========  =====  =====
release                     linear   mlp-wide  knn    gbt
==========================  =======  ========  =====  =====
binary-gmm, scalar Z        0.1-0.5  1.8-3.5   0.1    0.1-2
gaussian, 5-dim S and Z     < 0.01   1.2       0.7    --
10 classes, 64-dim Z        0.7      1.0       1.4    6.2
==========================  =======  ========  =====  =====

so the study adds 2-7 s to an evaluation of a scalar or 5-dimensional release
(the standard evaluators take about as long).  Boosting grows with the number
of classes times features: for image-sized releases pass ``families`` without
``gbt`` or subsample.  kNN and GBT use at most ``MAX_N_TRAIN`` = 10000 training and
``MAX_N_TEST`` = 10000 test rows (the first ones of each half), kNN brute-force
distances in blocks once Z has more than 16 columns.  Torch and sklearn/OpenMP
run single-threaded (threadpoolctl), which also keeps them deterministic.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.validate import check_int

from .attacker import posthoc_attacker
from .evaluation import Evaluation, log_p_and_entropy, make_evaluation
from .mismatch_families import attack_gbt, attack_knn, attack_linear, attack_mlp_wide

STUDY = "mismatch"
ATTACKER_FAMILIES = ("linear", "mlp-wide", "knn", "gbt")
def mismatch_evaluations(z: Any, s: Any, discrete: bool, log_p_s: Any, h_s: float, seed: int, *,
                         families: tuple[str, ...] = ATTACKER_FAMILIES, include_mlp: bool = False) -> list[Evaluation]:
    """Fresh attackers of several architectures on the same held-out releases.

    Parameters
    ----------
    z : array_like, shape (n,) or (n, d_z)
        Releases of fresh samples (any continuous or integer-valued array).
    s : array_like, shape (n,) integer labels (``discrete``) or (n, d_s) / (n,) values
        The sensitive attribute of the same rows.
    discrete : bool
        S is a label in 0..n_s-1.
    log_p_s : array_like, shape (n,)
        The TRUE log p(S) of each row (log prior of its label, or the log density
        of a continuous S), so that the bound is E[log Q(S|Z) - log p(S)].
    h_s : float
        H(S) (nats, exact from the model); recorded with the bound.
    seed : int
        Seeds the networks and boosting (>= 0).
    families : tuple of str
        A subset of :data:`ATTACKER_FAMILIES` (``gbt`` is skipped for a continuous S).
    include_mlp : bool
        Also run the bench's standard post-hoc attacker as ``attacker-mlp``.

    Returns
    -------
    list of Evaluation
        Per family ``mi`` (kind ``lower-bound``) and, for a discrete S, ``map``
        (held-out accuracy, kind ``lower-bound``); ``detail`` holds ``study``,
        the family's hyper-parameters, ``n_train`` and ``n_test``.

    Raises
    ------
    InputError
        Mismatched shapes, fewer than 20 rows, an unknown family or a bad seed.
    """
    z, s, log_p_s = check_inputs(z, s, discrete, log_p_s, seed, families)
    n = len(z)
    n_tr = n // 2
    split = (z[:n_tr], s[:n_tr], z[n_tr:], s[n_tr:], log_p_s[n_tr:])
    seq = np.random.SeedSequence([int(seed), 0x6D69736D])  # "mism": independent of the standard evaluators
    fam_seeds = dict(zip(ATTACKER_FAMILIES, (int(x) for x in seq.generate_state(len(ATTACKER_FAMILIES)))))
    runners: dict[str, Callable[..., dict[str, Any]]] = {"linear": attack_linear, "mlp-wide": attack_mlp_wide,
                                                         "knn": attack_knn, "gbt": attack_gbt}
    out: list[Evaluation] = []
    if include_mlp:
        att = posthoc_attacker(z, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=int(seed))
        res = {"log_q": None, "bound": att.pop("bound"), "bound_stderr": att.pop("bound_stderr"),
               "accuracy": att.pop("accuracy", None), "n_train": att.pop("n_train"), "n_test": att.pop("n_test"),
               "credible": att.pop("credible"), "params": {"model": "posthoc-attacker", **att}}
        out += _evaluations("mlp", res, discrete, h_s)
    from threadpoolctl import threadpool_limits

    from privbench.learners.nn import torch_threads

    with threadpool_limits(1), torch_threads(1):
        for fam in families:
            if fam == "gbt" and not discrete:
                continue
            res = runners[fam](*split, discrete=discrete, seed=fam_seeds[fam])
            lq = res.pop("log_q")
            diff = lq - res.pop("log_scale", 0.0) - split[4][:len(lq)]
            ok = bool(np.all(np.isfinite(diff)))
            res.update(bound=float(diff.mean()) if ok else float("nan"),
                       bound_stderr=float(diff.std(ddof=1) / math.sqrt(diff.size)) if ok else float("nan"),
                       n_test=int(diff.size), credible=ok)
            out += _evaluations(fam, res, discrete, h_s)
    return out


def with_mismatch(out: list[Evaluation], sc: Any, s: np.ndarray, z: np.ndarray, seed: int) -> list[Evaluation]:
    """``out`` with the mismatch-study attackers inserted before the distortion evaluations."""
    log_p_s, h_s = log_p_and_entropy(sc, s)
    extra = mismatch_evaluations(z, s, sc.kind == "mixture", log_p_s, h_s, seed)
    cut = next((i for i, e in enumerate(out) if e.metric == "distortion"), len(out))
    return out[:cut] + extra + out[cut:]


def check_inputs(z: Any, s: Any, discrete: bool, log_p_s: Any, seed: Any,
                 families: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z as (n, d_z) floats, s as int labels or (n, d_s) floats, log_p_s as (n,)); InputError when bad."""
    z = np.asarray(z, dtype=float)
    n = len(z)
    z = z.reshape(n, -1)
    s = np.asarray(s)
    log_p_s = np.asarray(log_p_s, dtype=float).reshape(-1)
    check_int("seed", seed, 0)
    if n < 20 or len(s) != n or log_p_s.shape != (n,):
        raise InputError(f"z has {n} rows, s {len(s)} and log_p_s shape {log_p_s.shape}: need the same number "
                         "of rows, at least 20")
    bad = [f for f in families if f not in ATTACKER_FAMILIES]
    if bad:
        raise InputError(f"families={bad!r} unknown (allowed: {', '.join(ATTACKER_FAMILIES)})")
    if discrete:
        s = s.reshape(n).astype(np.int64)
        if s.min() < 0:
            raise InputError("a discrete S must hold labels >= 0")
    else:
        s = s.astype(float).reshape(n, -1)
    if not np.all(np.isfinite(z)):
        raise InputError("z has NaN or inf values (allowed: finite releases)")
    return z, s, log_p_s


def _evaluations(fam: str, res: dict[str, Any], discrete: bool, h_s: float) -> list[Evaluation]:
    detail = {"study": STUDY, "family": fam, "n_train": res["n_train"], "n_test": res["n_test"],
              "h_s": h_s, **res.get("params", {})}
    if res.get("credible") is False:
        detail["credible"] = False
    name = f"attacker-{fam}"
    out = [make_evaluation("mi", res["bound"], name, "lower-bound", res["bound_stderr"], **detail,
               note="H(S) + E log Q(S|Z) on held-out releases, as E[log Q(S|Z) - log p(S)] with the true p")]
    if discrete and res.get("accuracy") is not None:
        acc, n_te = float(res["accuracy"]), int(res["n_test"])
        out.append(make_evaluation("map", acc, name, "lower-bound", math.sqrt(max(acc * (1 - acc), 0.0) / n_te), **detail,
                       note="held-out accuracy of argmax Q(s|Z); <= the MAP accuracy"))
    return out

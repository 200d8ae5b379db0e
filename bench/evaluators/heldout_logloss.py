"""The log-loss of a continuous release, from above: a fresh classifier's held-out cross-entropy.

For a release Z with no channel to compute from (an image, a vector), H(U | Z) is bounded
from ABOVE by the cross-entropy E[-log Q(U | Z)] of ANY classifier Q, with equality at the
true posterior.  :func:`heldout_logloss` trains one from scratch (the bench's
:class:`~.classifier.FreshClassifier`) on one set of releases and reports its mean
-log Q(u | z) on other releases that took no part in training or early stopping: an
unbiased estimate of that classifier's cross-entropy, hence an upper bound on H(U | Z) up
to estimation error (``kind="upper-bound"``, the mirror of the attackers' ``lower-bound``
on leakage; stderr std / sqrt(n)).  A weak classifier makes the bound loose, never wrong.

Training: every fitting row is used; 15% of them are held back for early stopping (best
validation cross-entropy, patience :data:`FIT` ``patience`` epochs); there is no fixed step
count, only a cap (``max_epochs``) far above where early stopping ends it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import xlogy

from privbench.datasets.errors import InputError

from .classifier import FreshClassifier
from .evaluation import Evaluation, make_evaluation

EVALUATOR = "fresh-logloss"
#: Early stopping of the log-loss classifier (the rest is :data:`~.classifier.CLASSIFIER`).
FIT = {"patience": 5, "max_epochs": 2000}


def heldout_logloss(z_fit: Any, u_fit: Any, z_test: Any, u_test: Any, n_classes: int, seed: int,
                    **detail: Any) -> Evaluation:
    """Held-out cross-entropy of a fresh classifier of U from Z: an upper bound on H(U | Z) in nats.

    Parameters
    ----------
    z_fit, z_test : array_like, shape (n, d) (or (n,))
        Releases to train the classifier on (early stopping included) and to score it on.
    u_fit, u_test : array_like of int, shape (n,)
        The label U of each release, in 0..n_classes-1.
    n_classes : int
        Alphabet size of U.
    seed : int
        Seeds the classifier (initialisation, validation split, batch order).
    **detail
        Extra JSON-able facts stored with the evaluation.

    Returns
    -------
    Evaluation
        ``metric="distortion"``, ``evaluator="fresh-logloss"``, ``kind="upper-bound"``; detail
        holds the sample sizes, epochs, the test labels' plug-in entropy ``h_u`` (what a
        release with no information about U would reach) and the held-out accuracy.
    """
    n_classes = int(n_classes)
    zf, zt = (np.asarray(z, dtype=float).reshape(len(z), -1) for z in (z_fit, z_test))
    uf, ut = (np.asarray(u, dtype=np.int64).reshape(-1) for u in (u_fit, u_test))
    if len(zf) != len(uf) or len(zt) != len(ut) or zf.shape[1] != zt.shape[1]:
        raise InputError(f"releases and labels do not match: fit {zf.shape} / {uf.shape}, "
                         f"test {zt.shape} / {ut.shape}")
    if len(zf) < 8 or len(zt) < 2:
        raise InputError(f"the log-loss classifier needs at least 8 fitting and 2 test rows, got {len(zf)} and "
                         f"{len(zt)}")
    for name, u in (("fit", uf), ("test", ut)):
        if u.min() < 0 or u.max() >= n_classes:
            raise InputError(f"{name} labels lie outside 0..{n_classes - 1}")
    clf = FreshClassifier({"u": n_classes}, int(seed), **FIT).fit(zf, {"u": uf})
    log_q = clf.log_proba(zt)["u"]
    loss = -log_q[np.arange(len(ut)), ut]
    freq = np.bincount(ut, minlength=n_classes) / len(ut)
    acc = float(np.mean(log_q.argmax(axis=1) == ut))
    return make_evaluation(
        "distortion", float(loss.mean()), EVALUATOR, "upper-bound", float(loss.std(ddof=1) / math.sqrt(len(ut))),
        n_fit=int(len(zf)), n_test=int(len(ut)), epochs=int(clf.epochs_), h_u=float(-xlogy(freq, freq).sum()),
        accuracy=acc, **FIT, **detail,
        note="held-out cross-entropy of a classifier of U trained from scratch on other releases: "
             ">= H(U | Z) up to estimation error (an upper bound)")

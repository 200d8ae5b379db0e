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
(:func:`privbench.bench.evaluate._attacker`, evaluators ``posthoc-attacker`` and
``mixture-fresh-classifier``), which already runs on every case; it is not run
twice.  :func:`mismatch_evaluations` accepts ``include_mlp=True`` for callers
(e.g. labelled/image scenarios) whose standard evaluators do not include it:
it then adds ``attacker-mlp`` from that same function.

Every evaluation carries ``detail["study"] = "mismatch"``, and
:func:`privbench.bench.evaluate.headline` skips such evaluations: a case is
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

from .evaluate import Evaluation, _attacker, _ev

STUDY = "mismatch"
FAMILIES = ("linear", "mlp-wide", "knn", "gbt")
MAX_N_TRAIN = 10000
MAX_N_TEST = 10000
PROB_FLOOR = 1e-6
KNN_SMOOTHING = 0.5
MLP_WIDE = {"hidden": (256, 256, 256), "lr": 1e-3, "batch_size": 256, "max_epochs": 20, "patience": 3,
            "log_var_min": -12.0}
GBT = {"max_iter": 100, "learning_rate": 0.1, "max_leaf_nodes": 31, "validation_fraction": 0.2,
       "n_iter_no_change": 10}


def mismatch_evaluations(z: Any, s: Any, discrete: bool, log_p_s: Any, h_s: float, seed: int, *,
                         families: tuple[str, ...] = FAMILIES, include_mlp: bool = False) -> list[Evaluation]:
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
        A subset of :data:`FAMILIES` (``gbt`` is skipped for a continuous S).
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
    z = np.asarray(z, dtype=float)
    n = len(z)
    z = z.reshape(n, -1)
    s = np.asarray(s)
    log_p_s = np.asarray(log_p_s, dtype=float).reshape(-1)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed={seed!r} must be an integer >= 0")
    if n < 20 or len(s) != n or log_p_s.shape != (n,):
        raise InputError(f"z has {n} rows, s {len(s)} and log_p_s shape {log_p_s.shape}: need the same number "
                         "of rows, at least 20")
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise InputError(f"families={bad!r} unknown (allowed: {', '.join(FAMILIES)})")
    if discrete:
        s = s.reshape(n).astype(np.int64)
        if s.min() < 0:
            raise InputError("a discrete S must hold labels >= 0")
    else:
        s = s.astype(float).reshape(n, -1)
    if not np.all(np.isfinite(z)):
        raise InputError("z has NaN or inf values (allowed: finite releases)")
    n_tr = n // 2
    split = (z[:n_tr], s[:n_tr], z[n_tr:], s[n_tr:], log_p_s[n_tr:])
    seq = np.random.SeedSequence([int(seed), 0x6D69736D])  # "mism": independent of the standard evaluators
    fam_seeds = dict(zip(FAMILIES, (int(x) for x in seq.generate_state(len(FAMILIES)))))
    runners: dict[str, Callable[..., dict[str, Any]]] = {"linear": _linear, "mlp-wide": _mlp_wide,
                                                         "knn": _knn, "gbt": _gbt}
    out: list[Evaluation] = []
    if include_mlp:
        att = _attacker(z, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=int(seed))
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


def _evaluations(fam: str, res: dict[str, Any], discrete: bool, h_s: float) -> list[Evaluation]:
    detail = {"study": STUDY, "family": fam, "n_train": res["n_train"], "n_test": res["n_test"],
              "h_s": h_s, **res.get("params", {})}
    if res.get("credible") is False:
        detail["credible"] = False
    name = f"attacker-{fam}"
    out = [_ev("mi", res["bound"], name, "lower-bound", res["bound_stderr"], **detail,
               note="H(S) + E log Q(S|Z) on held-out releases, as E[log Q(S|Z) - log p(S)] with the true p")]
    if discrete and res.get("accuracy") is not None:
        acc, n_te = float(res["accuracy"]), int(res["n_test"])
        out.append(_ev("map", acc, name, "lower-bound", math.sqrt(max(acc * (1 - acc), 0.0) / n_te), **detail,
                       note="held-out accuracy of argmax Q(s|Z); <= the MAP accuracy"))
    return out


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _standardise(z_tr: np.ndarray, z_te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = z_tr.mean(axis=0), z_tr.std(axis=0)
    sd = np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    return (z_tr - mu) / sd, (z_te - mu) / sd


def _scale_s(s_tr: np.ndarray, s_te: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Standardised S (training statistics) and the log-Jacobian sum log sd."""
    mu, sd = s_tr.mean(axis=0), np.maximum(s_tr.std(axis=0), 1e-12)
    return (s_tr - mu) / sd, (s_te - mu) / sd, float(np.log(sd).sum())


def _gauss_logq(y: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(y; mean, cov) per row; cov (d, d) constant."""
    d = y.shape[1]
    chol = np.linalg.cholesky(cov + 1e-9 * np.trace(cov) / d * np.eye(d))
    r = np.linalg.solve(chol, (y - mean).T)
    return -0.5 * (r * r).sum(axis=0) - np.log(np.diag(chol)).sum() - 0.5 * d * math.log(2 * math.pi)


def _discrete_result(p: np.ndarray, s_te: np.ndarray, n_tr: int, params: dict[str, Any]) -> dict[str, Any]:
    """log Q and accuracy from class probabilities p (n_te, n_classes)."""
    p = np.maximum(p, PROB_FLOOR)
    p = p / p.sum(axis=1, keepdims=True)
    lq = np.log(p[np.arange(len(s_te)), s_te])
    acc = float(np.mean(p.argmax(axis=1) == s_te))
    return {"log_q": lq, "accuracy": acc, "n_train": n_tr, "params": params}


def _class_probs(classes: np.ndarray, proba: np.ndarray, n_classes: int) -> np.ndarray:
    """Columns of ``proba`` (for ``classes``) placed into 0..n_classes-1 (absent classes: 0)."""
    out = np.zeros((len(proba), n_classes))
    out[:, classes.astype(np.int64)] = proba
    return out


# --------------------------------------------------------------------------
# the families
# --------------------------------------------------------------------------


def _linear(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
            discrete: bool, seed: int) -> dict[str, Any]:
    x_tr, x_te = _standardise(z_tr, z_te)
    if discrete:
        n_cls = int(max(s_tr.max(), s_te.max())) + 1
        classes = np.unique(s_tr)
        if classes.size == 1:
            p = np.zeros((len(x_te), n_cls))
            p[:, classes[0]] = 1.0
        else:
            from sklearn.linear_model import LogisticRegression

            clf = LogisticRegression(C=1.0, max_iter=500).fit(x_tr, s_tr)
            p = _class_probs(clf.classes_, clf.predict_proba(x_te), n_cls)
        return _discrete_result(p, s_te, len(x_tr), {"model": "logistic-regression", "C": 1.0})
    y_tr, y_te, log_scale = _scale_s(s_tr, s_te)
    a_tr = np.hstack([x_tr, np.ones((len(x_tr), 1))])
    coef = np.linalg.lstsq(a_tr, y_tr, rcond=None)[0]
    cov = np.atleast_2d(np.cov(y_tr - a_tr @ coef, rowvar=False))
    mean = np.hstack([x_te, np.ones((len(x_te), 1))]) @ coef
    return {"log_q": _gauss_logq(y_te, mean, cov), "log_scale": log_scale, "n_train": len(x_tr),
            "params": {"model": "linear-gaussian"}}


def _mlp_wide(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
              discrete: bool, seed: int) -> dict[str, Any]:
    import torch
    from torch import nn

    from privbench.learners.nn import generator, init_module

    hp = MLP_WIDE
    x_tr, x_te = _standardise(z_tr, z_te)
    n_tr = len(x_tr)
    n_fit = (4 * n_tr) // 5
    log_scale = 0.0
    if discrete:
        n_out = int(max(s_tr.max(), s_te.max())) + 1
        y_tr, y_te = s_tr, s_te
    else:
        y_tr, y_te, log_scale = _scale_s(s_tr, s_te)
        d_s = y_tr.shape[1]
        n_out = 2 * d_s
    g = generator(seed)
    sizes = [x_tr.shape[1], *hp["hidden"], n_out]
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    net = nn.Sequential(*layers[:-1])
    init_module(net, g)
    X = torch.as_tensor(x_tr, dtype=torch.float32)
    Xte = torch.as_tensor(x_te, dtype=torch.float32)
    Y = torch.as_tensor(y_tr, dtype=torch.int64 if discrete else torch.float32)
    Yte = torch.as_tensor(y_te, dtype=torch.int64 if discrete else torch.float32)

    def log_q(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = net(x)
        if discrete:
            return torch.log_softmax(out, dim=1).gather(1, y[:, None])[:, 0]
        m, v = out[:, :d_s], out[:, d_s:].clamp(min=hp["log_var_min"], max=10.0)
        return (-0.5 * ((y - m) ** 2 * torch.exp(-v) + v).sum(1) - 0.5 * d_s * math.log(2 * math.pi))

    opt = torch.optim.Adam(net.parameters(), lr=hp["lr"])
    best = [p.detach().clone() for p in net.parameters()]
    with torch.no_grad():
        best_val = float(log_q(X[n_fit:], Y[n_fit:]).mean()) if n_fit < n_tr else -math.inf
    best_epoch, epochs = 0, 0
    for epoch in range(1, hp["max_epochs"] + 1):
        epochs = epoch
        perm = torch.randperm(n_fit, generator=g)
        for i in range(0, n_fit, hp["batch_size"]):
            idx = perm[i:i + hp["batch_size"]]
            loss = -log_q(X[idx], Y[idx]).mean()
            if not bool(torch.isfinite(loss)):
                break
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            v = float(log_q(X[n_fit:], Y[n_fit:]).mean()) if n_fit < n_tr else -math.inf
        if v > best_val:
            best_val, best_epoch = v, epoch
            best = [p.detach().clone() for p in net.parameters()]
        elif epoch - best_epoch >= hp["patience"]:
            break
    with torch.no_grad():
        for p, b in zip(net.parameters(), best):
            p.copy_(b)
        lq = log_q(Xte, Yte).double().numpy()
        params = {"model": "mlp", "hidden": list(hp["hidden"]), "activation": "relu", "lr": hp["lr"],
                  "batch_size": hp["batch_size"], "epochs": epochs, "best_epoch": best_epoch}
        if discrete:
            acc = float(np.mean(net(Xte).argmax(1).numpy() == y_te))
            return {"log_q": lq, "accuracy": acc, "n_train": n_tr, "params": params}
    return {"log_q": lq, "log_scale": log_scale, "n_train": n_tr, "params": params}


def _neighbours(x_tr: np.ndarray, x_q: np.ndarray, k: int, drop_self: bool = False) -> np.ndarray:
    """Indices (n_q, k) of the k nearest training rows (Euclidean); ``drop_self`` skips the first hit."""
    kk = k + int(drop_self)
    if x_tr.shape[1] <= 16:
        from scipy.spatial import cKDTree

        idx = cKDTree(x_tr).query(x_q, k=kk)[1].reshape(len(x_q), kk)
    else:  # brute force in blocks
        sq = (x_tr * x_tr).sum(axis=1)
        idx = np.empty((len(x_q), kk), dtype=np.int64)
        for a in range(0, len(x_q), 1024):
            d = sq[None, :] - 2.0 * x_q[a:a + 1024] @ x_tr.T
            part = np.argpartition(d, kk - 1, axis=1)[:, :kk]
            order = np.argsort(np.take_along_axis(d, part, axis=1), axis=1, kind="stable")
            idx[a:a + 1024] = np.take_along_axis(part, order, axis=1)
    return idx[:, 1:] if drop_self else idx


def _knn(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
         discrete: bool, seed: int) -> dict[str, Any]:
    z_tr, s_tr = z_tr[:MAX_N_TRAIN], s_tr[:MAX_N_TRAIN]
    z_te, s_te = z_te[:MAX_N_TEST], s_te[:MAX_N_TEST]
    x_tr, x_te = _standardise(z_tr, z_te)
    n_tr = len(x_tr)
    k = max(1, min(n_tr - 1, int(round(math.sqrt(n_tr)))))
    idx = _neighbours(x_tr, x_te, k)
    params = {"model": "knn", "k": k, "distance": "euclidean (standardised Z)"}
    if discrete:
        n_cls = int(max(s_tr.max(), s_te.max())) + 1
        counts = np.stack([(s_tr[idx] == c).sum(axis=1) for c in range(n_cls)], axis=1).astype(float)
        p = (counts + KNN_SMOOTHING) / (k + KNN_SMOOTHING * n_cls)
        return _discrete_result(p, s_te, n_tr, {**params, "smoothing": KNN_SMOOTHING})
    y_tr, y_te, log_scale = _scale_s(s_tr, s_te)
    loo = _neighbours(x_tr, x_tr, k, drop_self=True)
    resid = y_tr - y_tr[loo].mean(axis=1)
    cov = np.atleast_2d(np.cov(resid, rowvar=False))
    lq = _gauss_logq(y_te, y_tr[idx].mean(axis=1), cov)
    return {"log_q": lq, "log_scale": log_scale, "n_train": n_tr,
            "params": {**params, "head": "gaussian, leave-one-out residual covariance"}}


def _gbt(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
         discrete: bool, seed: int) -> dict[str, Any]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    z_tr, s_tr = z_tr[:MAX_N_TRAIN], s_tr[:MAX_N_TRAIN]
    z_te, s_te = z_te[:MAX_N_TEST], s_te[:MAX_N_TEST]
    n_cls = int(max(s_tr.max(), s_te.max())) + 1
    classes = np.unique(s_tr)
    if classes.size == 1:
        p = np.zeros((len(z_te), n_cls))
        p[:, classes[0]] = 1.0
    else:
        clf = HistGradientBoostingClassifier(**GBT, early_stopping=True, random_state=seed % (2**32 - 1))
        clf.fit(z_tr, s_tr)
        p = _class_probs(clf.classes_, clf.predict_proba(z_te), n_cls)
    return _discrete_result(p, s_te, len(z_tr), {"model": "hist-gradient-boosting", **GBT,
                                                  "prob_floor": PROB_FLOOR})

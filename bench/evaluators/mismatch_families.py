"""The attacker families of the mismatch study (:mod:`.mismatch`): linear, wide MLP, kNN, boosting.

Each ``attack_<family>(z_tr, s_tr, z_te, s_te, log_p_s_te, *, discrete, seed)`` trains on the first
half and returns held-out ``log_q`` (and ``accuracy`` for a discrete S) with its hyper-parameters.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MAX_N_TRAIN = 10000
MAX_N_TEST = 10000
PROB_FLOOR = 1e-6
KNN_SMOOTHING = 0.5
MLP_WIDE = {"hidden": (256, 256, 256), "lr": 1e-3, "batch_size": 256, "max_epochs": 20, "patience": 3,
            "log_var_min": -12.0}
GBT = {"max_iter": 100, "learning_rate": 0.1, "max_leaf_nodes": 31, "validation_fraction": 0.2,
       "n_iter_no_change": 10}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def standardise(z_tr: np.ndarray, z_te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = z_tr.mean(axis=0), z_tr.std(axis=0)
    sd = np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    return (z_tr - mu) / sd, (z_te - mu) / sd


def scale_s(s_tr: np.ndarray, s_te: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Standardised S (training statistics) and the log-Jacobian sum log sd."""
    mu, sd = s_tr.mean(axis=0), np.maximum(s_tr.std(axis=0), 1e-12)
    return (s_tr - mu) / sd, (s_te - mu) / sd, float(np.log(sd).sum())


def gauss_logq(y: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(y; mean, cov) per row; cov (d, d) constant."""
    d = y.shape[1]
    chol = np.linalg.cholesky(cov + 1e-9 * np.trace(cov) / d * np.eye(d))
    r = np.linalg.solve(chol, (y - mean).T)
    return -0.5 * (r * r).sum(axis=0) - np.log(np.diag(chol)).sum() - 0.5 * d * math.log(2 * math.pi)


def discrete_result(p: np.ndarray, s_te: np.ndarray, n_tr: int, params: dict[str, Any]) -> dict[str, Any]:
    """log Q and accuracy from class probabilities p (n_te, n_classes)."""
    p = np.maximum(p, PROB_FLOOR)
    p = p / p.sum(axis=1, keepdims=True)
    lq = np.log(p[np.arange(len(s_te)), s_te])
    acc = float(np.mean(p.argmax(axis=1) == s_te))
    return {"log_q": lq, "accuracy": acc, "n_train": n_tr, "params": params}


def class_probs(classes: np.ndarray, proba: np.ndarray, n_classes: int) -> np.ndarray:
    """Columns of ``proba`` (for ``classes``) placed into 0..n_classes-1 (absent classes: 0)."""
    out = np.zeros((len(proba), n_classes))
    out[:, classes.astype(np.int64)] = proba
    return out


# --------------------------------------------------------------------------
# the families
# --------------------------------------------------------------------------


def attack_linear(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
            discrete: bool, seed: int) -> dict[str, Any]:
    x_tr, x_te = standardise(z_tr, z_te)
    if discrete:
        n_cls = int(max(s_tr.max(), s_te.max())) + 1
        classes = np.unique(s_tr)
        if classes.size == 1:
            p = np.zeros((len(x_te), n_cls))
            p[:, classes[0]] = 1.0
        else:
            from sklearn.linear_model import LogisticRegression

            clf = LogisticRegression(C=1.0, max_iter=500).fit(x_tr, s_tr)
            p = class_probs(clf.classes_, clf.predict_proba(x_te), n_cls)
        return discrete_result(p, s_te, len(x_tr), {"model": "logistic-regression", "C": 1.0})
    y_tr, y_te, log_scale = scale_s(s_tr, s_te)
    a_tr = np.hstack([x_tr, np.ones((len(x_tr), 1))])
    coef = np.linalg.lstsq(a_tr, y_tr, rcond=None)[0]
    cov = np.atleast_2d(np.cov(y_tr - a_tr @ coef, rowvar=False))
    mean = np.hstack([x_te, np.ones((len(x_te), 1))]) @ coef
    return {"log_q": gauss_logq(y_te, mean, cov), "log_scale": log_scale, "n_train": len(x_tr),
            "params": {"model": "linear-gaussian"}}


def attack_mlp_wide(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
              discrete: bool, seed: int) -> dict[str, Any]:
    import torch
    from torch import nn

    from privbench.learners.nn import generator, init_module
    from privbench.learners.nn.flat_adam import FlatAdam

    hp = MLP_WIDE
    x_tr, x_te = standardise(z_tr, z_te)
    n_tr = len(x_tr)
    n_fit = (4 * n_tr) // 5
    log_scale = 0.0
    if discrete:
        n_out = int(max(s_tr.max(), s_te.max())) + 1
        y_tr, y_te = s_tr, s_te
    else:
        y_tr, y_te, log_scale = scale_s(s_tr, s_te)
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

    opt = FlatAdam(list(net.parameters()), hp["lr"], shared=True)
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
            opt.step(loss)
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


def neighbours(x_tr: np.ndarray, x_q: np.ndarray, k: int, drop_self: bool = False) -> np.ndarray:
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


def attack_knn(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
         discrete: bool, seed: int) -> dict[str, Any]:
    z_tr, s_tr = z_tr[:MAX_N_TRAIN], s_tr[:MAX_N_TRAIN]
    z_te, s_te = z_te[:MAX_N_TEST], s_te[:MAX_N_TEST]
    x_tr, x_te = standardise(z_tr, z_te)
    n_tr = len(x_tr)
    k = max(1, min(n_tr - 1, int(round(math.sqrt(n_tr)))))
    idx = neighbours(x_tr, x_te, k)
    params = {"model": "knn", "k": k, "distance": "euclidean (standardised Z)"}
    if discrete:
        n_cls = int(max(s_tr.max(), s_te.max())) + 1
        counts = np.stack([(s_tr[idx] == c).sum(axis=1) for c in range(n_cls)], axis=1).astype(float)
        p = (counts + KNN_SMOOTHING) / (k + KNN_SMOOTHING * n_cls)
        return discrete_result(p, s_te, n_tr, {**params, "smoothing": KNN_SMOOTHING})
    y_tr, y_te, log_scale = scale_s(s_tr, s_te)
    loo = neighbours(x_tr, x_tr, k, drop_self=True)
    resid = y_tr - y_tr[loo].mean(axis=1)
    cov = np.atleast_2d(np.cov(resid, rowvar=False))
    lq = gauss_logq(y_te, y_tr[idx].mean(axis=1), cov)
    return {"log_q": lq, "log_scale": log_scale, "n_train": n_tr,
            "params": {**params, "head": "gaussian, leave-one-out residual covariance"}}


def attack_gbt(z_tr: np.ndarray, s_tr: np.ndarray, z_te: np.ndarray, s_te: np.ndarray, _lp: np.ndarray, *,
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
        p = class_probs(clf.classes_, clf.predict_proba(z_te), n_cls)
    return discrete_result(p, s_te, len(z_tr), {"model": "hist-gradient-boosting", **GBT,
                                                  "prob_floor": PROB_FLOOR})

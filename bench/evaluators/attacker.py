"""The ``posthoc-attacker`` evaluator: a network Q(S|Z) trained from scratch on held-out releases.

h(S) + E log Q(S|Z) is a lower bound on I(S;Z) in expectation; for a discrete S the held-out
accuracy of argmax Q is a lower bound on the MAP accuracy (``mixture-fresh-classifier``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtri


def normal_scores(z: np.ndarray, n_fit: int) -> np.ndarray:
    """Phi^-1 of each column's empirical CDF (mid-ranks) on the first n_fit rows, shape (n, d)."""
    out = np.empty_like(z)
    for j in range(z.shape[1]):
        vals, counts = np.unique(z[:n_fit, j], return_counts=True)
        cdf = (np.cumsum(counts) - 0.5 * counts) / n_fit
        out[:, j] = ndtri(np.interp(z[:, j], vals, cdf)) if vals.size > 1 else 0.0
    return out


#: Hyper-parameters.  Training runs until :func:`converged` (validation checked every ``check_every``
#: steps; stop when ``patience`` steps brought less than ``min_delta`` nats), at most ``max_steps``.
#: ``members`` networks are trained side by side (one wide model) and averaged in density: 2 or 4 read
#: about 0.01 nats closer to the truth on the hard ground-truth tasks, at 1.7 or 3 times the cost a step.
ATTACKER = {"hidden": 16, "members": 1, "max_steps": 4000, "check_every": 10, "patience": 200, "min_delta": 1e-3,
            "min_gain_se": 2.0, "lr": 0.01, "log_var_min": -18.0, "train_fraction": 0.5,
            "determined_nats": 4.0}


def posthoc_attacker(z: np.ndarray, s: np.ndarray, *, discrete: bool, log_p_s: np.ndarray, h_s: float,
                     seed: int) -> dict[str, Any]:
    """Train Q(S|Z) on the first half of (Z, S), score on the second half.

    Inputs: Z, for two or more columns two radial features (the Euclidean norm of the standardised Z and of its
    normal scores: a rotation by an angle that depends on |z| is then a product of a
    function of one input with Z), the normal scores of all of these (each column through the
    empirical CDF of the fitting rows, then the standard normal quantile: invariant to monotone
    transforms such as Z = U^3), and Z^2 for a discrete S; all standardised.
    Network: a linear map of the inputs plus a tanh MLP (2 hidden layers of 16, last layer
    starting at 0; 32 over-fits sooner), full-batch Adam, float32, seeded init
    (``torch.Generator``), one thread.  With ``members`` > 1 (default 1), that many such models
    are trained side by side as one wide model, each on its own likelihood, and Q is their
    average density (a mixture).
    Trained to convergence: the training half is split 80/20; the parameters with the
    best validation loss of Q (checked every 10 steps) are kept; training stops
    once 200 steps improved the validation log-likelihood by less than 1e-3 nats
    (:func:`converged`), at most 4000 steps; for a continuous S also once the validation log Q
    of the standardised S exceeds 4 nats per dimension (the release pins S to about 2% of its
    spread: the bound, already above 5 nats per dimension, would only grow towards the variance
    floor).  The trained model replaces the starting fit only if its validation gain is
    significant (> 2 standard errors of the paired per-sample gain).
    Discrete S: logits (bias starting at the log class frequencies).  Continuous
    S: Q(S|Z) = N(mu(Z), (W diag(exp -v(Z)) W^T)^-1) with W a learned constant upper-triangular
    whitening factor (no triangular solve per step), mu
    the linear map plus the MLP and the log-variances v affine in the inputs (an MLP log-variance
    head over-fits: about 0.02 nats lost on the 5-dimensional ground-truth spirals); training
    starts from the least-squares fit (mu affine in the inputs, W the inverse of the Cholesky factor of the
    residual covariance, transposed), so a jointly Gaussian (S, Z) is fitted from step 0 and the MLP only
    adds what is nonlinear.  Everything is fitted on the training half only.

    The bound h(S) + E log Q(S|Z) equals E[log Q(S|Z) - log p(S)] (h(S) =
    -E log p(S), p the TRUE marginal), estimated by the held-out mean of that
    difference: same expectation, much smaller variance.  Any Q gives a lower
    bound on I(S;Z) in expectation (the gap is E KL(P(S|Z) || Q)).

    Returns
    -------
    dict
        ``bound``, ``bound_stderr``, ``h_plus_mean_log_q`` (the same bound with
        h(S) exact plus the mean log Q), ``n_train``, ``n_test``, ``credible``
        (False when training produced NaN), hyper-parameters, and ``accuracy``
        (discrete S).
    """
    out, _ = attacker_rows(z, s, discrete=discrete, log_p_s=log_p_s, h_s=h_s, seed=seed)
    return out


def attacker_rows(z: np.ndarray, s: np.ndarray, *, discrete: bool, log_p_s: np.ndarray, h_s: float,
                  seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`posthoc_attacker`'s result and its held-out rows: ``log_q`` (log Q(S|Z) in S's own units,
    float64), the trained ``model``, its inputs ``inp`` and ``n_tr`` (the test rows are ``n_tr:``)."""
    from privbench.learners.nn import torch_threads

    n = len(z)
    n_tr = int(n * ATTACKER["train_fraction"])
    n_fit = (4 * n_tr) // 5
    inp = attacker_inputs(z, s, discrete, n_tr, n_fit)
    with torch_threads(1):
        model = AttackerModel(inp, discrete, seed)
        best_step, credible, steps_run = train_attacker(model, n_fit, n_tr)
        lq, acc = model.held_out(n_tr, n)
    diff = lq - inp["log_scale"] - log_p_s[n_tr:]  # log q in S's own units, minus the true log p(S)
    credible = credible and bool(np.all(np.isfinite(diff)))
    nan = float("nan")
    out: dict[str, Any] = {
        "bound": float(diff.mean()) if credible else nan,
        "bound_stderr": float(diff.std(ddof=1) / math.sqrt(diff.size)) if credible else nan,
        "h_plus_mean_log_q": float(h_s + lq.mean() - inp["log_scale"]) if credible else nan,
        "n_train": n_tr, "n_test": n - n_tr, "best_step": best_step, "steps_run": steps_run, "credible": credible,
        **ATTACKER,
    }
    if discrete:
        out["accuracy"] = acc
    return out, {"log_q": lq - inp["log_scale"], "model": model, "inp": inp, "n_tr": n_tr}


def radial(z: np.ndarray, n_fit: int) -> np.ndarray:
    """The Euclidean norms of the standardised rows of ``z`` and of their normal scores, shape (n, 2)."""
    mu, sd = z[:n_fit].mean(axis=0), z[:n_fit].std(axis=0)
    x = (z - mu) / np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    ns = normal_scores(z, n_fit)
    return np.stack([np.sqrt((x * x).sum(axis=1)), np.sqrt((ns * ns).sum(axis=1))], axis=1)


def attacker_inputs(z: np.ndarray, s: np.ndarray, discrete: bool, n_tr: int, n_fit: int) -> dict[str, Any]:
    """Standardised features ``x`` of Z, targets ``y``, and the starting fit (``w0``, ``b0``, ``white0``).

    Discrete S: logits start at 0 weights and the log class frequencies of the training half.
    Continuous S: standardised S, and the least-squares fit on the fitting rows (mean affine in the
    features; ``white0`` = Li with log-diagonal, Li the lower-triangular inverse of the Cholesky
    factor of the residual covariance, so that (S - mu) Li^T is white).
    """
    n = len(z)
    z = z.reshape(n, -1).astype(float)
    if z.shape[1] >= 2:  # one column's norm is |z|, which the MLP sees (extra inputs over-fit at small n)
        z = np.hstack([z, radial(z, n_fit)])
    feats = np.hstack([z, z * z, normal_scores(z, n_fit)] if discrete else [z, normal_scores(z, n_fit)])
    mu, sd = feats[:n_fit].mean(axis=0), feats[:n_fit].std(axis=0)
    x = (feats - mu) / np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    d_in = x.shape[1]
    if discrete:
        n_out = max(int(s.max()) + 1, 2)
        y_all = s.astype(np.int64)
        freq = np.bincount(y_all[:n_tr], minlength=n_out) + 1.0
        return {"x": x, "y": y_all, "log_scale": 0.0, "n_out": n_out, "w0": np.zeros((n_out, d_in)),
                "b0": np.log(freq / freq.sum()), "white0": None}
    y = s.reshape(n, -1).astype(float)
    ym, scale = y[:n_tr].mean(axis=0), y[:n_tr].std(axis=0)
    y_all = (y - ym) / scale
    n_out = y.shape[1]
    xt = np.hstack([x[:n_fit], np.ones((n_fit, 1))])
    coef = np.linalg.lstsq(xt, y_all[:n_fit], rcond=None)[0]  # (d_in + 1, n_out)
    resid = y_all[:n_fit] - xt @ coef
    c_r = np.atleast_2d(np.cov(resid, rowvar=False)) + math.exp(ATTACKER["log_var_min"]) * np.eye(n_out)
    Li = np.linalg.inv(np.linalg.cholesky(c_r))  # lower-triangular: (S - mu) Li^T is white
    return {"x": x, "y": y_all, "log_scale": float(np.log(scale).sum()), "n_out": n_out,
            "w0": np.vstack([coef[:-1].T, np.zeros((n_out, d_in))]),
            "b0": np.concatenate([coef[-1], np.zeros(n_out)]),
            "white0": np.tril(Li, -1) + np.diag(np.log(np.diag(Li)))}


def tanh(a: Any) -> Any:
    """tanh as 2 sigmoid(2a) - 1: the same function, about 3 times faster forward and backward than
    ``torch.tanh`` on this project's CPU build of torch (which does not vectorise it)."""
    import torch

    return 2.0 * torch.sigmoid(2.0 * a) - 1.0


class AttackerModel:
    """Q(S|Z): the average density of ``members`` models, each a linear map of the features plus a tanh
    MLP whose last layer starts at 0 (seeded init); parameters (members, fan_in, fan_out)."""

    def __init__(self, inp: dict[str, Any], discrete: bool, seed: int) -> None:
        import torch

        from privbench.learners.nn import generator

        x, n_out = inp["x"], inp["n_out"]
        self.discrete, self.n_out = discrete, n_out
        d_in, h, k = x.shape[1], ATTACKER["hidden"], ATTACKER["members"]
        g = generator(seed)
        f32 = torch.float32

        def layer(fan_in: int, fan_out: int) -> list[Any]:  # PyTorch's default Linear init, per member
            b = 1.0 / math.sqrt(fan_in)
            return [(torch.rand(k, fan_in, fan_out, generator=g) * 2 - 1) * b,
                    (torch.rand(k, 1, fan_out, generator=g) * 2 - 1) * b]

        n_lin = n_out if discrete else 2 * n_out  # continuous: means, then log-variances (affine only)
        lin_w = torch.as_tensor(inp["w0"].T, dtype=f32).expand(k, d_in, n_lin)
        lin_b = torch.as_tensor(inp["b0"], dtype=f32).expand(k, 1, n_lin)
        w = [lin_w, lin_b] + layer(d_in, h) + layer(h, h) + [torch.zeros(k, h, n_out), torch.zeros(k, 1, n_out)]
        self.params = [torch.nn.Parameter(p.clone().contiguous().to(f32)) for p in w]
        self.white = None
        if not discrete:
            self.white = torch.nn.Parameter(torch.as_tensor(inp["white0"], dtype=f32).expand(k, n_out, n_out).clone())
            self.params.append(self.white)
        self.X = torch.as_tensor(x, dtype=f32)
        self.Y = torch.as_tensor(inp["y"], dtype=torch.int64 if discrete else f32)
        self.y = inp["y"]

    def outputs(self, idx: slice) -> tuple[Any, Any]:
        """(rows, members, .) outputs of the linear maps and of the MLPs for the rows ``idx``.

        The members run as one wide network (block-diagonal weights): a few large matrix products
        per step rather than many small ones."""
        import torch

        lw, lb, w1, b1, w2, b2, w3, b3 = self.params[:8]
        k = lw.shape[0]

        def wide(w: Any) -> Any:  # (k, fan_in, fan_out) -> (fan_in, k * fan_out), members side by side
            return w.transpose(0, 1).reshape(w.shape[1], -1)

        x = self.X[idx]
        hid = tanh(x @ wide(w1) + b1.reshape(-1))
        hid = tanh(hid @ torch.block_diag(*w2) + b2.reshape(-1))
        n = x.shape[0]
        return (torch.addmm(lb.reshape(-1), x, wide(lw)).view(n, k, -1),
                torch.addmm(b3.reshape(-1), hid, torch.block_diag(*w3)).view(n, k, -1))

    def member_log_q(self, idx: slice) -> Any:
        """log Q_m(S|Z) of each member m for the rows ``idx``, shape (rows, members) (torch)."""
        import torch

        lin, mlp = self.outputs(idx)
        n_out = self.n_out
        if self.discrete:
            lab = self.Y[idx][:, None, None].expand(-1, lin.shape[1], 1)
            return torch.log_softmax(lin + mlp, dim=2).gather(2, lab)[..., 0]
        m, v = lin[..., :n_out] + mlp, lin[..., n_out:].clamp(min=ATTACKER["log_var_min"], max=10.0)
        diag = torch.diagonal(self.white, dim1=1, dim2=2)  # the log-diagonal of the whitening factor
        w = torch.triu(self.white.transpose(1, 2), 1) + torch.diag_embed(torch.exp(diag))  # upper-triangular
        e = self.Y[idx][:, None, :] - m
        r = (e.reshape(e.shape[0], -1) @ torch.block_diag(*w)).view(e.shape)
        return (-0.5 * (r * r * torch.exp(-v)).sum(2) - 0.5 * v.sum(2)
                + diag.sum(1) - 0.5 * n_out * math.log(2 * math.pi))

    def first_marginal(self, idx: slice) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of the first coordinate of each member's Gaussian Q (standardised
        units), each (rows, members): the covariance is (W diag(exp -v) W^T)^-1."""
        import torch

        with torch.no_grad():
            lin, mlp = self.outputs(idx)
            n_out = self.n_out
            m = (lin[..., :n_out] + mlp)[..., 0].double().numpy()
            v = lin[..., n_out:].clamp(min=ATTACKER["log_var_min"], max=10.0).double().numpy()
            diag = torch.diagonal(self.white, dim1=1, dim2=2)
            w = (torch.triu(self.white.transpose(1, 2), 1) + torch.diag_embed(torch.exp(diag))).double().numpy()
        prec = np.einsum("kij,nkj,klj->nkil", w, np.exp(-v), w)  # (rows, members, d, d)
        var = np.linalg.inv(prec)[..., 0, 0]
        return m, np.sqrt(var)

    def log_q(self, idx: slice) -> Any:
        """log of the members' average density Q(S|Z) for the rows ``idx`` (torch)."""
        import torch

        lq = self.member_log_q(idx)
        return torch.logsumexp(lq, dim=1) - math.log(lq.shape[1])

    def held_out(self, n_tr: int, n: int) -> tuple[np.ndarray, float | None]:
        """log Q on the test half (float64) and, for a discrete S, the held-out accuracy."""
        import torch

        te = slice(n_tr, n)
        with torch.no_grad():
            lq = self.log_q(te).double().numpy()
            acc = None
            if self.discrete:
                lin, mlp = self.outputs(te)
                pred = torch.softmax(lin + mlp, dim=2).mean(1).argmax(1).numpy()
                acc = float(np.mean(pred == self.y[n_tr:]))
        return lq, acc


def train_attacker(model: AttackerModel, n_fit: int, n_tr: int) -> tuple[int, bool, int]:
    """Full-batch Adam until the validation loss stops improving (:func:`converged`); keeps the start
    unless the trained network's validation gain is significant.  Returns (best step, credible, steps run)."""
    import torch

    from privbench.learners.nn.flat_adam import FlatAdam

    params = model.params
    opt = FlatAdam(params, ATTACKER["lr"], shared=True)  # the attacker is the bench's own
    fit, val = slice(0, n_fit), slice(n_fit, n_tr)
    credible, best_step, history, step = True, 0, [], 0
    with torch.no_grad():
        start_val = model.log_q(val)
    best_val = float(start_val.mean())
    start = best = [p.detach().clone() for p in params]
    pinned = ATTACKER["determined_nats"] * model.n_out if model.white is not None else math.inf
    for step in range(1, ATTACKER["max_steps"] + 1 if best_val <= pinned else 0):
        loss = -model.member_log_q(fit).mean(0).sum()  # each member on its own likelihood
        if not bool(torch.isfinite(loss)):
            credible = False
            break
        opt.step(loss)
        if step % ATTACKER["check_every"] == 0:
            with torch.no_grad():
                v = float(model.log_q(val).mean())
            if not math.isfinite(v):
                break  # the validation likelihood broke down (e.g. a release that pins S): keep the best so far
            history.append(v)
            if v > best_val:
                best_val, best_step = v, step
                best = [p.detach().clone() for p in params]
            if converged(history) or v > pinned:
                break  # a plateau, or the release pins S down (continuous S: the bound grows as the variance shrinks)
    with torch.no_grad():
        for p, b in zip(params, best):
            p.copy_(b)
        gain = model.log_q(val) - start_val  # paired per-sample gain over the starting fit
        if float(gain.mean()) <= ATTACKER["min_gain_se"] * float(gain.std()) / math.sqrt(len(gain)):
            best_step = 0  # not a significant gain: keep the start (no selection on noise)
            for p, b in zip(params, start):
                p.copy_(b)
    return best_step, credible, step


def converged(history: list[float]) -> bool:
    """Early stopping on the validation log-likelihood ``history`` (one value per check).

    Stops once the best value of the last ``patience`` steps is not above the best value before
    them by more than ``min_delta`` nats (a plateau, or over-fitting); never while the validation
    likelihood still improves by more than that over a window.  The step cap ``max_steps`` bounds
    the cost.
    """
    w = ATTACKER["patience"] // ATTACKER["check_every"]
    if len(history) <= w:
        return False
    return max(history[-w:]) <= max(history[:-w]) + ATTACKER["min_delta"]

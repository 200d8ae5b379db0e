"""PPAN with the log-loss utility on finite alphabets (PPAN paper, Appendix D): the privacy funnel.

Three softmax tables, trained on the *exact* expectation over the empirical joint of the
training samples (as :mod:`.ppan_finite`): the mechanism C[w, z] = P(Z=z | W=w), the privacy
adversary Q(S | Z) and the variational utility posterior R(U | Z).  With G[s, w] = P^(S=s, W=w)
and H[u, w] = P^(U=u, W=w),

    min_{C, R}  max_Q   sum_{s,z} (G C)[s, z] log Q(s|z)            (= I^(S;Z) - H^(S) at the best Q)
    subject to  D_R = -sum_{u,z} (H C)[u, z] log R(u|z) <= budget    (>= H^(U|Z), equal at the best R).

Appendix D weighs the two terms with a fixed lambda; here lambda is the multiplier of the
budget constraint (PHR augmented Lagrangian with dual ascent, one multiplier per budget),
so each budget gets its point of the tradeoff.  Because D_R >= H^(U | Z), meeting the
constraint in training means the training channel's empirical H(U | Z) meets the budget;
where the last iterate still overshoots, it is mixed with Z = W (:func:`to_budget`, on the
training joint) until it does.  The mechanism starts at Z = W (H(U | Z) = 0, feasible for
every budget).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from privbench.datasets.tasks import Task

from .base import Learner, Mechanism
from .mechanisms import FiniteChannel
from .nn.core import torch_threads
from .registry import register
from .serves import Serves


@register
class PPANLogLoss(Learner):
    """PPAN's Appendix D on finite alphabets: mechanism, privacy adversary Q(S|Z), utility posterior R(U|Z).

    Parameters
    ----------
    steps : int
        Full-batch rounds (one adversary, one posterior and one mechanism Adam step each).
    lr : float
        Adam learning rate of all three tables.
    penalty : float
        rho of the augmented Lagrangian (rho/2) [max(0, D_R - b + mu/rho)^2 - (mu/rho)^2].
    dual_lr : float
        Step of the multiplier: mu <- max(0, mu + dual_lr (D_R - b)).
    init_scale : float
        Logit of the Z = W entry of the initial channel (the rest 0, plus N(0, 0.01) noise).
    threads : int or None
        torch intra-op threads while training.
    """

    name = "ppan-logloss"
    summary = ("PPAN appendix D (finite, logloss): softmax channel vs softmax adversary Q(S|Z), with a "
               "variational posterior R(U|Z) for H(U|Z), exact expectation")
    serves = Serves(kinds=("finite",))
    observations = ("useful", "full")
    privacies = ("mi",)
    distortions = ("logloss",)
    test_params = {"steps": 200}

    def __init__(self, steps: int = 3000, lr: float = 0.05, penalty: float = 20.0, dual_lr: float = 2.0,
                 init_scale: float = 4.0, threads: int | None = 1) -> None:
        self.steps = steps
        self.lr = lr
        self.penalty = penalty
        self.dual_lr = dual_lr
        self.init_scale = init_scale
        self.threads = threads

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        n = len(samples)
        w = task.observe(samples)
        g_sw = np.bincount(samples.s * task.n_w + w, minlength=task.n_s * task.n_w).reshape(task.n_s, task.n_w) / n
        h_uw = np.bincount(samples.u * task.n_w + w, minlength=task.n_u * task.n_w).reshape(task.n_u, task.n_w) / n
        t0 = time.perf_counter()
        with torch_threads(self.threads):
            channels, facts = train_funnel(g_sw, h_uw, task, np.asarray(budgets, dtype=float), self, seed)
        seconds = (time.perf_counter() - t0) / len(budgets)
        return [FiniteChannel(task, float(b), channels[i], {**{k: v[i] for k, v in facts.items()},
                                                            "steps": int(self.steps), "train_seconds": seconds})
                for i, b in enumerate(budgets)]


def train_funnel(g_sw: np.ndarray, h_uw: np.ndarray, task: Task, budgets: np.ndarray, hp: Any,
                 seed: int) -> tuple[np.ndarray, dict[str, list[float]]]:
    """Train all budgets at once; (channels of shape (k, n_w, n_z), per-budget training facts)."""
    gen = torch.Generator().manual_seed(int(seed))
    k, n_w, n_z = len(budgets), int(task.n_w), int(task.n_z)
    dt = torch.float64
    G, H = torch.tensor(g_sw, dtype=dt), torch.tensor(h_uw, dtype=dt)
    b = torch.tensor(budgets, dtype=dt)
    init = torch.zeros(k, n_w, n_z, dtype=dt)
    init[:, torch.arange(n_w), torch.arange(n_w)] = float(hp.init_scale)
    logits = (init + 0.01 * torch.randn(k, n_w, n_z, generator=gen, dtype=dt)).requires_grad_()
    adv = (0.01 * torch.randn(k, n_z, task.n_s, generator=gen, dtype=dt)).requires_grad_()
    post = (0.01 * torch.randn(k, n_z, task.n_u, generator=gen, dtype=dt)).requires_grad_()
    opts = [torch.optim.Adam([p], lr=float(hp.lr)) for p in (logits, adv, post)]
    mu = torch.zeros(k, dtype=dt)
    rho = float(hp.penalty)

    def terms() -> tuple[torch.Tensor, torch.Tensor]:
        C = torch.softmax(logits, dim=2)
        p_sz, p_uz = G @ C, H @ C  # (k, n_s, n_z), (k, n_u, n_z)
        privacy = (p_sz * torch.log_softmax(adv, dim=2).transpose(1, 2)).sum(dim=(1, 2))
        dist = -(p_uz * torch.log_softmax(post, dim=2).transpose(1, 2)).sum(dim=(1, 2))
        return privacy, dist

    for _ in range(int(hp.steps)):
        privacy, _ = terms()  # the adversary maximises E log Q(S | Z)
        opts[1].zero_grad()
        (-privacy.sum()).backward()
        opts[1].step()
        _, dist = terms()  # the posterior minimises the variational log loss
        opts[2].zero_grad()
        dist.sum().backward()
        opts[2].step()
        privacy, dist = terms()
        hinge = torch.clamp(dist - b + mu / rho, min=0.0)
        loss = privacy + rho / 2 * (hinge ** 2 - (mu / rho) ** 2)
        opts[0].zero_grad()
        loss.sum().backward()
        opts[0].step()
        mu = torch.clamp(mu + float(hp.dual_lr) * (dist.detach() - b), min=0.0)
    with torch.no_grad():
        privacy, dist = terms()
        channels = torch.softmax(logits, dim=2).numpy()
    ps = g_sw.sum(axis=1)[g_sw.sum(axis=1) > 0]
    h_s = float(-(ps * np.log(ps)).sum())
    mixed = [to_budget(channels[i], h_uw, float(budgets[i])) for i in range(k)]
    return np.stack([c for c, _ in mixed]), {
        "train_distortion": dist.tolist(), "multiplier": mu.tolist(), "adversary_value": (privacy + h_s).tolist(),
        "identity_mix": [t for _, t in mixed]}


def conditional_entropy(channel: np.ndarray, h_uw: np.ndarray) -> float:
    """H(U | Z) in nats of ``channel`` (n_w, n_z) on the training joint ``h_uw`` = P^(U, W) (n_u, n_w)."""
    p_uz = h_uw @ channel
    pz = np.broadcast_to(p_uz.sum(axis=0), p_uz.shape)
    m = p_uz > 0
    return float(-(p_uz[m] * np.log(p_uz[m] / pz[m])).sum())


def to_budget(channel: np.ndarray, h_uw: np.ndarray, budget: float, iters: int = 40) -> tuple[np.ndarray, float]:
    """The channel mixed with Z = W, (1 - t) C + t I, at the least t (bisection) whose training H(U | Z)
    is within ``budget`` (t = 0 when C already is): the augmented Lagrangian's last iterate may overshoot."""
    n_w, n_z = channel.shape
    eye = np.eye(n_w, n_z)
    if conditional_entropy(channel, h_uw) <= budget:
        return channel, 0.0
    lo, hi = 0.0, 1.0  # H(U | Z) = 0 at t = 1
    for _ in range(iters):
        mid = (lo + hi) / 2
        if conditional_entropy((1 - mid) * channel + mid * eye, h_uw) <= budget:
            hi = mid
        else:
            lo = mid
    return (1 - hi) * channel + hi * eye, hi

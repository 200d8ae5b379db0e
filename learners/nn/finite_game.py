"""The finite privatizer-versus-adversary game, batched over a budget sweep.

A softmax (or directly parametrised) channel P(Z | W) plays against an adversary
table q(S | Z) on the exact expectation over the empirical joint of (S, W), with
hand-written gradients and a batched Adam; see :mod:`privbench.learners.ppan_finite`
(PPAN) and :mod:`privbench.learners.gap_binary` (GAP), the two learners that play it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_HYPER_INT
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from ..base import Mechanism, check_choice
from ..mechanisms import FiniteChannel
from .core import check_loss, generator


CONSTRAINTS = ("penalty", "linear-penalty", "lagrangian", "augmented")
INITS = ("least-distortion", "random", "dirichlet")
DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclass(frozen=True)
class GameConfig:
    """Hyper-parameters of one finite privatizer-vs-adversary game (see module docstring).

    ``adversary_loss``: ``log`` (cross-entropy; the privatizer plays against log q),
    ``alpha`` (the adversary trains on the alpha-loss, GAP eq (7)) or ``tilted``
    (the adversary trains on cross-entropy; the privatizer plays against its
    alpha-tilted decision q^alpha / sum q^alpha, the alpha-loss-optimal rule for
    that belief).  ``belief``: ``expected`` scores E_Z[loss(q(S|Z))] (PPAN eq (6));
    ``mixture`` scores loss(sum_z P(z|w) q(S|z)) (GAP eq (33)).
    ``parametrization``: ``softmax`` logits, or ``direct`` probabilities
    projected back onto the simplex after each step (GAP §3.2's theta_p = s).
    """

    steps: int = 3000
    lr: float = 0.05
    adversary_lr: float = 0.1
    adversary_steps: int = 1
    lr_decay: str = "cosine"
    lr_final: float = 0.01
    constraint: str = "augmented"
    penalty: float = 20.0
    penalty_growth: float = 0.0
    dual_lr: float = 1.0
    init: str = "least-distortion"
    init_scale: float = 3.0
    parametrization: str = "softmax"
    adversary_loss: str = "log"
    alpha: float = 1.0
    belief: str = "expected"
    betas: tuple[float, float] = (0.9, 0.999)

    def check(self) -> GameConfig:
        for name in ("steps", "adversary_steps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_HYPER_INT:
                raise InputError(f"{name}={v!r} must be an integer in [1, {MAX_HYPER_INT}]")
        for name in ("lr", "adversary_lr", "dual_lr", "init_scale"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"{name}={v!r} must be a positive finite number")
        for name in ("penalty", "penalty_growth"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InputError(f"{name}={v!r} must be a finite number >= 0")
        if not 0 < self.lr_final <= 1:
            raise InputError(f"lr_final={self.lr_final!r} must be in (0, 1]")
        check_choice("lr_decay", self.lr_decay, ("none", "cosine"))
        check_choice("constraint", self.constraint, CONSTRAINTS)
        check_choice("init", self.init, INITS)
        check_choice("parametrization", self.parametrization, ("softmax", "direct"))
        check_choice("adversary_loss", self.adversary_loss, ("log", "alpha", "tilted"))
        check_choice("belief", self.belief, ("expected", "mixture"))
        if not (isinstance(self.alpha, (int, float)) and self.alpha >= 1):
            raise InputError(f"alpha={self.alpha!r} must be a number >= 1 (inf allowed)")
        if self.belief == "mixture" and self.adversary_loss != "log":
            raise InputError("belief='mixture' (GAP eq (33)) is defined for the cross-entropy adversary only")
        return self


def empirical_tables(samples: Samples, task: Task) -> tuple[np.ndarray, np.ndarray, int]:
    """The training joint as the game needs it.

    Returns
    -------
    g_sw : ndarray, shape (n_s, n_w)
        P^(S=s, W=w), the empirical joint of S and what the mechanism observes.
    d_wz : ndarray, shape (n_w, n_z)
        P^(W=w) E^[d(U, z) | W=w]: the expected distortion is sum(d_wz * C).
    unseen : int
        Number of W values absent from the samples (their channel rows get no gradient).
    """
    n_s, n_u, n_w = task.n_s, task.n_u, task.n_w
    w = task.observe(samples)
    n = len(samples)
    g_sw = np.bincount(samples.s * n_w + w, minlength=n_s * n_w).reshape(n_s, n_w) / n
    g_uw = np.bincount(samples.u * n_w + w, minlength=n_u * n_w).reshape(n_u, n_w) / n
    d_wz = g_uw.T @ task.distortion_array()
    return g_sw, d_wz, int((g_sw.sum(axis=0) == 0).sum())


class _Adam:
    """Adam on one tensor with externally supplied gradients (batched over the sweep dimension)."""

    def __init__(self, x: torch.Tensor, betas: tuple[float, float], eps: float = 1e-8) -> None:
        self.x, (self.b1, self.b2), self.eps = x, betas, eps
        self.m, self.v, self.t = torch.zeros_like(x), torch.zeros_like(x), 0

    def step(self, grad: torch.Tensor, lr: float) -> None:
        self.t += 1
        self.m.mul_(self.b1).add_(grad, alpha=1 - self.b1)
        self.v.mul_(self.b2).addcmul_(grad, grad, value=1 - self.b2)
        denom = (self.v / (1 - self.b2 ** self.t)).sqrt_().add_(self.eps)
        self.x.addcdiv_(self.m, denom, value=-lr / (1 - self.b1 ** self.t))


def project_simplex(x: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of each last-axis row of ``x`` onto the probability simplex."""
    n = x.shape[-1]
    srt, _ = torch.sort(x, dim=-1, descending=True)
    css = srt.cumsum(-1) - 1
    idx = torch.arange(1, n + 1, device=x.device, dtype=x.dtype)
    rho = ((srt - css / idx) > 0).sum(-1, keepdim=True).clamp_min(1)
    theta = css.gather(-1, rho - 1) / rho.to(x.dtype)
    return (x - theta).clamp_min(0)


def _initial(cfg: GameConfig, task: Task, k: int, gen: torch.Generator,
             dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    n_w, n_z, n_s = task.n_w, task.n_z, task.n_s
    if cfg.init == "least-distortion":
        # logits favour argmin_z d(u, z) of the U that w carries (the identity for Hamming)
        d = task.distortion_array()
        u_of_w = np.arange(n_w) % task.n_u  # type: ignore[operator]
        base = torch.zeros(n_w, n_z, dtype=dtype)  # type: ignore[arg-type]
        base[torch.arange(n_w), torch.as_tensor(d.argmin(axis=1)[u_of_w])] = cfg.init_scale
        priv = base + 0.1 * torch.randn(k, n_w, n_z, generator=gen, dtype=dtype)  # type: ignore[arg-type]
    elif cfg.init == "random":  # LeCun normal on a one-hot input (Chainer's Linear default)
        priv = torch.randn(k, n_w, n_z, generator=gen, dtype=dtype) / math.sqrt(n_w)  # type: ignore[arg-type]
    else:  # rows uniform on the simplex (GAP's s uniform in [0, 1] for binary Z)
        e = -torch.log(torch.rand(k, n_w, n_z, generator=gen, dtype=dtype).clamp_min(1e-300))  # type: ignore[arg-type]
        priv = e / e.sum(-1, keepdim=True)
        if cfg.parametrization == "softmax":
            priv = torch.log(priv.clamp_min(1e-12))
    if cfg.parametrization == "direct" and cfg.init != "dirichlet":
        priv = torch.softmax(priv, -1)
    adv = torch.randn(k, n_z, n_s, generator=gen, dtype=dtype) / math.sqrt(n_z)  # type: ignore[arg-type]
    return priv, adv


def _mixture_round(C: torch.Tensor, A: torch.Tensor, gs_t: torch.Tensor, opt_a: _Adam, cfg: GameConfig,
                   scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Adversary steps against GAP eq (33)'s mixed belief; (value (k,), d value / d C (k, n_w, n_z))."""
    gsw_k = gs_t.unsqueeze(0)  # P^(s, w) laid out (1, n_w, n_s)
    for _ in range(cfg.adversary_steps):
        q = torch.softmax(A, -1)
        r = torch.matmul(C, q).clamp_min(1e-300)  # (k, n_w, n_s): GAP eq (33) belief
        gq = torch.matmul(C.transpose(1, 2), gsw_k / r)  # d LL / d q, (k, n_z, n_s)
        opt_a.step(-(q * (gq - (q * gq).sum(-1, keepdim=True))), cfg.adversary_lr * scale)
    q = torch.softmax(A, -1)
    r = torch.matmul(C, q).clamp_min(1e-300)
    value = (gsw_k * torch.log(r)).sum((1, 2))
    g_c = torch.matmul(gsw_k / r, q.transpose(1, 2))  # d LL / d C, (k, n_w, n_z)
    return value, g_c


def _expected_round(C: torch.Tensor, A: torch.Tensor, gs_t: torch.Tensor, opt_a: _Adam, cfg: GameConfig,
                    scale: float, alpha: float, expo: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Adversary steps on the expected loss (PPAN eq (6)); (value (k,), d value / d C (k, n_w, n_z))."""
    pzs = torch.matmul(C.transpose(1, 2), gs_t)  # P(s, z) laid out (k, n_z, n_s)
    for _ in range(cfg.adversary_steps):
        q = torch.softmax(A, -1)
        wq = pzs if cfg.adversary_loss != "alpha" or alpha == 1 else pzs * q.pow(expo)
        opt_a.step(-(wq - q * wq.sum(-1, keepdim=True)), cfg.adversary_lr * scale)
    v = _payoff(A, cfg.adversary_loss, alpha, expo)  # what a unit of P(s, z) is worth to the adversary
    value = (pzs * v).sum((1, 2))
    g_c = torch.matmul(gs_t, v.transpose(1, 2))  # (k, n_w, n_z)
    return value, g_c


def _constraint_terms(cfg: GameConfig, gap: torch.Tensor, mu: torch.Tensor, t: int,
                      dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(coefficient of the distortion gradient, penalty value) per budget for ``cfg.constraint``."""
    if cfg.constraint == "penalty":
        coef, pen = 2 * cfg.penalty * gap.clamp_min(0), cfg.penalty * gap.clamp_min(0) ** 2
    elif cfg.constraint == "linear-penalty":  # GAP eq (13), rho_t = penalty + growth * t
        rho_t = cfg.penalty + cfg.penalty_growth * t
        coef, pen = rho_t * (gap > 0).to(dtype), rho_t * gap.clamp_min(0)
    elif cfg.constraint == "lagrangian":
        coef, pen = mu, mu * gap
    else:
        rho = cfg.penalty
        coef = (mu + rho * gap).clamp_min(0)
        pen = (coef ** 2 - mu ** 2) / (2 * rho)
    return coef, pen


def _privatizer_step(P: torch.Tensor, C: torch.Tensor, g_c: torch.Tensor, opt_p: _Adam, cfg: GameConfig,
                     scale: float, softmax: bool) -> None:
    """One Adam step of the privatizer parameters P (in place) along the gradient ``g_c`` w.r.t. C."""
    if softmax:
        opt_p.step(C * (g_c - (C * g_c).sum(-1, keepdim=True)), cfg.lr * scale)
    else:  # tangent-space gradient (for binary Z: GAP's one parameter s per row), then project
        opt_p.step(g_c - g_c.mean(-1, keepdim=True), cfg.lr * scale)
        P.copy_(project_simplex(P))


def play(g_sw: np.ndarray, d_wz: np.ndarray, task: Task, budgets: np.ndarray, cfg: GameConfig, seed: int,
         device: torch.device, dtype: torch.dtype = torch.float64,
         what: str = "privatizer loss") -> tuple[np.ndarray, dict[str, Any]]:
    """Train one privatizer/adversary pair per budget, all budgets batched.

    Parameters
    ----------
    g_sw, d_wz : ndarray, shapes (n_s, n_w) and (n_w, n_z)
        From :func:`empirical_tables`.
    budgets : ndarray, shape (k,)
    cfg : GameConfig
    seed : int
        Seeds the initial parameters (a CPU torch.Generator: same numbers on any device).

    Returns
    -------
    channels : ndarray, shape (k, n_w, n_z)
    info : dict
        Per-budget lists ``train_distortion``, ``multiplier`` and ``adversary_value``
        (the adversary's final objective; for the cross-entropy adversary with the
        expected belief, H^(S) + E log q(S|Z): the variational lower bound on I^(S;Z)
        of eq (2); never used for evaluation), plus ``steps`` and ``train_seconds``.

    Raises
    ------
    TrainingError
        When the privatizer loss is NaN/inf, naming the step.
    """
    cfg = cfg.check()
    t0 = time.perf_counter()
    k = len(budgets)
    gen = generator(seed)
    priv0, adv0 = _initial(cfg, task, k, gen, dtype)
    P = priv0.to(device)
    A = adv0.to(device)
    gs_t = torch.as_tensor(g_sw.T, dtype=dtype, device=device).contiguous()  # (n_w, n_s)
    dw = torch.as_tensor(d_wz, dtype=dtype, device=device)
    b = torch.as_tensor(budgets, dtype=dtype, device=device)
    p_s = torch.as_tensor(g_sw.sum(axis=1), dtype=dtype, device=device)
    h_s = -torch.special.xlogy(p_s, p_s).sum()
    mu = torch.zeros(k, dtype=dtype, device=device)
    opt_p, opt_a = _Adam(P, cfg.betas), _Adam(A, cfg.betas)
    softmax = cfg.parametrization == "softmax"
    alpha = float(cfg.alpha)
    expo = 1.0 - 1.0 / alpha  # 1 for alpha = inf
    mixture = cfg.belief == "mixture"
    for t in range(cfg.steps):
        scale = 1.0 if cfg.lr_decay == "none" else \
            cfg.lr_final + (1 - cfg.lr_final) * 0.5 * (1 + math.cos(math.pi * t / cfg.steps))
        C = torch.softmax(P, -1) if softmax else P
        if mixture:
            value, g_c = _mixture_round(C, A, gs_t, opt_a, cfg, scale)
        else:
            value, g_c = _expected_round(C, A, gs_t, opt_a, cfg, scale, alpha, expo)
        d = (dw * C).sum((1, 2))
        gap = d - b
        coef, pen = _constraint_terms(cfg, gap, mu, t, dtype)
        check_loss(value + pen, t, what)
        g_c = g_c + coef[:, None, None] * dw
        _privatizer_step(P, C, g_c, opt_p, cfg, scale, softmax)
        if cfg.constraint in ("lagrangian", "augmented"):
            mu = (mu + cfg.dual_lr * gap).clamp_min(0)
    C = torch.softmax(P, -1) if softmax else P
    d = (dw * C).sum((1, 2))
    adv_value = value + (h_s if cfg.adversary_loss == "log" else 0.0)
    info = {"steps": cfg.steps, "train_seconds": time.perf_counter() - t0,
            "train_distortion": d.cpu().tolist(), "multiplier": mu.cpu().tolist(),
            "adversary_value": adv_value.detach().cpu().tolist(),
            "training_adversary": _final_adversary(C.detach(), A.detach(), gs_t, h_s, cfg)}
    channels = C.detach().to("cpu", torch.float64).numpy()
    channels = np.clip(channels, 0.0, None)
    return channels / channels.sum(-1, keepdims=True), info


@torch.no_grad()
def _final_adversary(C: torch.Tensor, A: torch.Tensor, gs_t: torch.Tensor, h_s: torch.Tensor,
                     cfg: GameConfig) -> list[dict[str, Any]]:
    """Per budget: the final adversary table q = softmax(A) against the final channel C,
    on the empirical joint of the training samples (exact expectation, no sampling).

    ``mi`` = H^(S) + sum P^(s, z) log q(s|z) (a lower bound on the empirical I^(S;Z)),
    ``accuracy`` = sum_z P^(argmax_s q(s|z), z); ``empirical_posterior`` holds the same
    two numbers for the exact posterior of the empirical joint (the best adversary).
    """
    pzs = torch.matmul(C.transpose(1, 2), gs_t)  # (k, n_z, n_s)
    logq = torch.log_softmax(A, -1)
    mi = h_s + (pzs * logq).sum((1, 2))
    acc = pzs.gather(-1, logq.argmax(-1, keepdim=True)).sum((1, 2))
    p_z = pzs.sum(-1, keepdim=True)
    p_s = pzs.sum(1, keepdim=True)
    post_mi = torch.special.xlogy(pzs, pzs).sum((1, 2)) - torch.special.xlogy(p_z, p_z).sum((1, 2)) \
        - torch.special.xlogy(p_s, p_s).sum((1, 2))
    post_acc = pzs.max(-1).values.sum(-1)
    note = ("final softmax adversary table q(S|Z) vs the final channel, exact expectation over the empirical "
            "joint of the training samples")
    if cfg.belief == "mixture":
        note += "; trained on the GAP eq (33) mixed belief, scored here per z"
    if cfg.adversary_loss != "log":
        note += f"; the table was trained on the {cfg.adversary_loss} loss (alpha={cfg.alpha:g}), read as a belief"
    return [{"mi": float(mi[i]), "accuracy": float(acc[i]), "note": note,
             "empirical_posterior": {"mi": float(post_mi[i]), "accuracy": float(post_acc[i]),
                                     "note": "exact posterior P^(S|Z) of the empirical joint"}}
            for i in range(len(mi))]


def _payoff(A: torch.Tensor, loss: str, alpha: float, expo: float) -> torch.Tensor:
    """Per (z, s): minus the adversary's loss at its decision (the privatizer minimises its sum)."""
    if loss == "log" or alpha == 1:
        return torch.log_softmax(A, -1)
    h = torch.softmax(alpha * A, -1) if loss == "tilted" and math.isfinite(alpha) else torch.softmax(A, -1)
    if loss == "tilted" and not math.isfinite(alpha):  # the hard MAP decision of the belief
        h = torch.nn.functional.one_hot(A.argmax(-1), A.shape[-1]).to(A.dtype)
    if not math.isfinite(alpha):
        return h - 1.0
    return (h.pow(expo) - 1.0) * (alpha / (alpha - 1.0))


def channel_mechanisms(channels: np.ndarray, task: Task, budgets: np.ndarray, info: dict[str, Any],
                       extra: dict[str, Any]) -> list[Mechanism]:
    """One FiniteChannel per budget with JSON-able training facts."""
    out: list[Mechanism] = []
    for i, budget in enumerate(budgets):
        facts = {**extra, "steps": info["steps"], "train_seconds": info["train_seconds"] / len(budgets),
                 "train_distortion": info["train_distortion"][i], "multiplier": info["multiplier"][i],
                 "adversary_value": info["adversary_value"][i],
                 "training_adversary": info["training_adversary"][i]}
        out.append(FiniteChannel(task, float(budget), channels[i], facts))
    return out

"""GAP's Gaussian noise-adding privatizer for the binary Gaussian mixture (GAP §4.2).

The privatizer is GAP's "two-layer network" with four parameters,
Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N, N ~ N(0, 1) (a
:class:`~privbench.learners.mechanisms.MixtureShift`; observation ``useful`` ties
beta1 = -beta0 and gamma1 = gamma0, i.e. Z = U + beta0 + gamma0 N).  The adversary is
a leaky-ReLU MLP classifier h(z) = P(S=1 | z) trained on cross-entropy (11), or on
the alpha-loss (12) alpha/(alpha-1) (1 - p^(1-1/alpha)), p the probability given to
the true class (as printed, (12) garbles the y = 1 term; this is the alpha-loss of
GAP §2.2, -log p as alpha -> 1 and 1 - p as alpha -> inf).  The privatizer ascends the
adversary's loss.

Distortion: ``distortion="exact"`` constrains the family's expected distortion
(1-p) (beta0^2 + gamma0^2) + p (beta1^2 + gamma1^2), with the prior p = P(S=1)
estimated from the training samples (nothing else about the model is used);
``"sampled"`` constrains the minibatch mean of (Z - U)^2 as GAP does, which leaves
part of the budget unused.  Constraint: ``lagrangian`` (14) (slack written as an
inequality: rho/2 max(0, lambda/rho + g)^2 form, lambda <- max(0, lambda + rho g) each
epoch, rho growing by ``rho_growth`` per epoch) or ``penalty`` (13), rho_t max(0, g).
All budgets train together (one parameter vector and one adversary per budget).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .mechanisms import MixtureShift
from .nn.core import ADVERSARY_CHECK_N, check_loss, cosine_lr, generator, seeds, to_tensor, torch_threads
from .nn.sweep import SweepMLP, init_members
from .registry import register
from .serves import Serves

SCHEDULES = ("default", "paper")
#: tuned: exact distortion, the Lagrangian, 30 epochs (see tests/benchmarks/test_bench_learners_continuous.py)
DEFAULT: dict[str, Any] = {"epochs": 30, "batch_size": 200, "lr": 0.01, "adversary_lr": 0.01, "adversary_steps": 2,
                           "hidden": (32, 32), "constraint": "lagrangian", "distortion": "exact",
                           "penalty": 10.0, "rho_growth": 1.0, "loss": "alpha", "alpha": 10.0,
                           "cosine": True}
#: GAP §4.3: Adam 0.01, batch 200, the augmented Lagrangian on the sampled distortion
PAPER: dict[str, Any] = {"epochs": 30, "batch_size": 200, "lr": 0.01, "adversary_lr": 0.01, "adversary_steps": 1,
                         "hidden": (16, 16), "constraint": "lagrangian", "distortion": "sampled",
                         "penalty": 1.0, "rho_growth": 1.2, "loss": "xent", "alpha": 10.0,
                         "cosine": False}


@register
class GAPMixture(Learner):
    """GAP §4.2 data-driven privatizer for binary S and scalar U (MAP privacy)."""

    name = "gap-mixture"
    summary = "GAP §4.2: learn (beta0, beta1, gamma0, gamma1) of Z = U + shift(S) + scale(S) N against an MLP adversary"
    serves = Serves(kinds=("mixture",), n_s=2, d_u=1)  # GAP §4.2: binary S, scalar U
    observations = ("full", "useful")
    privacies = ("map",)
    test_params = {"epochs": 2, "batch_size": 64, "hidden": (8,)}

    def __init__(self, schedule: str = "default", epochs: int | None = None, batch_size: int | None = None,
                 lr: float | None = None, adversary_lr: float | None = None, adversary_steps: int | None = None,
                 hidden: tuple[int, ...] | None = None, constraint: str | None = None,
                 distortion: str | None = None, penalty: float | None = None, rho_growth: float | None = None,
                 loss: str | None = None, alpha: float | None = None, threads: int | None = 1) -> None:
        self.schedule = schedule
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.adversary_lr = adversary_lr
        self.adversary_steps = adversary_steps
        self.hidden = hidden
        self.constraint = constraint
        self.distortion = distortion
        self.penalty = penalty
        self.rho_growth = rho_growth
        self.loss = loss
        self.alpha = alpha
        self.threads = threads

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The hyper-parameters used (the schedule's, overridden by those given), validated."""
        check_choice("schedule", self.schedule, SCHEDULES)
        hp = dict(PAPER if self.schedule == "paper" else DEFAULT)
        for key in hp:
            if getattr(self, key, None) is not None:
                hp[key] = getattr(self, key)
        check_choice("constraint", hp["constraint"], ("lagrangian", "penalty"))
        check_choice("distortion", hp["distortion"], ("exact", "sampled"))
        check_choice("loss", hp["loss"], ("xent", "alpha"))
        for key in ("epochs", "batch_size", "adversary_steps"):
            v = hp[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InputError(f"{key}={v!r} must be an integer >= 1")
        for key, v in (("lr", hp["lr"]), ("adversary_lr", hp["adversary_lr"]), ("penalty", hp["penalty"]),
                       ("rho_growth", hp["rho_growth"]), ("alpha", hp["alpha"])):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise InputError(f"{key}={v!r} must be a finite number > 0")
        if hp["loss"] == "alpha" and hp["alpha"] <= 1:
            raise InputError(f"alpha={hp['alpha']!r} must be > 1 for the alpha-loss")
        hp["hidden"] = tuple(hp["hidden"])
        if not hp["hidden"] or any(isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1
                                   for h in hp["hidden"]):
            raise InputError(f"hidden={hp['hidden']!r} must be a non-empty tuple of positive layer widths")
        return hp

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        if task.n_s != 2 or task.d_u != 1:
            raise InputError(f"gap-mixture needs binary S and scalar U (got n_s={task.n_s}, d_u={task.d_u})")
        hp = self.resolved(task, len(samples))
        with torch_threads(self.threads):
            params, info = _train(samples, task, budgets, hp, hp["loss"], float(hp["alpha"]), seed, device)
        mechs: list[Mechanism] = []
        for i, b in enumerate(budgets):
            b0, b1, g0, g1 = (float(x) for x in params[i])
            if task.observation == "useful":
                b1, g1 = -b0, g0
            mechs.append(MixtureShift(task, float(b), b0, b1, abs(g0), abs(g1),
                                      {**{k: (v[i] if isinstance(v, list) else v) for k, v in info.items()},
                                       "schedule": self.schedule, "constraint": hp["constraint"],
                                       "distortion": hp["distortion"], "loss": hp["loss"]}))
        return mechs


def classifier_loss(logit: torch.Tensor, s: torch.Tensor, loss: str = "xent", alpha: float = 10.0) -> torch.Tensor:
    """The adversary's per-sample loss.

    Parameters
    ----------
    logit : Tensor, shape (k, B)
        log P(S=1|z) - log P(S=0|z).
    s : Tensor, shape (B,)
        Labels 0/1 (float).
    loss : {"xent", "alpha"}
        Cross-entropy (11), or the alpha-loss alpha/(alpha-1) (1 - p^(1-1/alpha)) of the
        probability p given to the true label.

    Returns
    -------
    Tensor, shape (k, B)
    """
    log_p = torch.where(s[None] > 0.5, torch.nn.functional.logsigmoid(logit), torch.nn.functional.logsigmoid(-logit))
    if loss == "xent":
        return -log_p
    return alpha / (alpha - 1.0) * (1.0 - torch.exp((1.0 - 1.0 / alpha) * log_p))


def _train(samples: Samples, task: Task, budgets: np.ndarray, hp: dict[str, Any], loss_name: str, alpha: float,
           seed: int, device: torch.device) -> tuple[np.ndarray, dict[str, Any]]:
    """Returns the parameters (k, 4) = (beta0, beta1, gamma0, gamma1) and training facts."""
    k = len(budgets)
    s_np = np.asarray(samples.s, dtype=np.int64)
    u_np = np.asarray(samples.u, dtype=float).reshape(-1)
    n = len(s_np)
    prior = float(s_np.mean())  # the only model fact the privatizer uses, estimated from samples
    useful = task.observation == "useful"
    s_seed, a_seed = seeds(seed, 2)
    gen = generator(s_seed, device)
    delta = to_tensor(budgets, device)
    # start at the additive mechanism of distortion exactly the budget (GAP Theorem 2)
    theta = torch.zeros(k, 4, device=device)
    theta[:, 2:] = torch.sqrt(delta)[:, None]
    theta.requires_grad_(True)
    adv = SweepMLP(k, [1, *hp["hidden"], 1], "leaky_relu")
    init_members(adv, [generator(x) for x in seeds(a_seed, k)])
    adv.to(device)
    opt_p = torch.optim.Adam([theta], lr=hp["lr"], foreach=True)
    opt_a = torch.optim.Adam(adv.parameters(), lr=hp["adversary_lr"], foreach=True)
    s_all, u_all = to_tensor(s_np.astype(float), device), to_tensor(u_np, device)
    z_shift, z_scale = float(u_np.mean()), float(max(u_np.std(), 1e-6))
    lam, rho = torch.zeros(k, device=device), float(hp["penalty"])
    bs = min(int(hp["batch_size"]), n)
    n_batches = max(n // bs, 1)
    total = n_batches * int(hp["epochs"])
    step, xent = 0, torch.zeros(k, device=device)

    def params() -> tuple[torch.Tensor, ...]:
        b0, b1, g0, g1 = theta.unbind(1)
        return (b0, -b0, g0, g0) if useful else (b0, b1, g0, g1)

    def release(s: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        b0, b1, g0, g1 = params()
        noise = torch.randn((k, len(s)), generator=gen, device=device)
        s1 = s[None]
        return u[None] + (1 - s1) * b0[:, None] - s1 * b1[:, None] + ((1 - s1) * g0[:, None] + s1 * g1[:, None]) * noise

    def adversary_loss(z: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        logit = adv(((z - z_shift) / z_scale)[..., None])[..., 0]  # (k, B)
        return classifier_loss(logit, s, loss_name, alpha).mean(1)

    for epoch in range(int(hp["epochs"])):
        perm = torch.randperm(n, generator=gen, device=device)
        g_epoch = torch.zeros(k, device=device)
        for j in range(n_batches):
            if hp["cosine"]:
                cosine_lr(((opt_p, hp["lr"]), (opt_a, hp["adversary_lr"])), step, total)
            idx = perm[j * bs:(j + 1) * bs]
            s, u = s_all[idx], u_all[idx]
            for _ in range(int(hp["adversary_steps"])):
                with torch.no_grad():
                    z = release(s, u)
                loss_a = adversary_loss(z, s).sum()
                check_loss(loss_a, step, "adversary loss")
                opt_a.zero_grad(set_to_none=True)
                loss_a.backward()
                opt_a.step()
            z = release(s, u)
            xent = adversary_loss(z, s)
            g, pen = _constraint_terms(hp, params(), prior, z, u, delta, lam, rho)
            loss_p = (-xent + pen).sum()
            check_loss(loss_p, step, "privatizer loss")
            opt_p.zero_grad(set_to_none=True)
            loss_p.backward(inputs=[theta])
            opt_p.step()
            g_epoch += g.detach() / n_batches
            step += 1
        if hp["constraint"] == "lagrangian":
            lam = torch.clamp(lam + rho * g_epoch, min=0.0)
        rho *= float(hp["rho_growth"])
    check_loss(theta.detach(), step, "privatizer parameters")
    out = theta.detach().cpu().double().numpy()
    adversary = _final_adversary(adv, params(), s_all, u_all, z_shift, z_scale, generator(s_seed ^ 2, device),
                                 float(s_np.mean()), loss_name, alpha)
    info = {"prior_estimate": prior, "multiplier": lam.cpu().tolist(), "final_adversary_loss": xent.detach().cpu().tolist(),
            "steps": step, "epochs": int(hp["epochs"]), "training_adversary": adversary}
    return out, info


def _constraint_terms(hp: dict[str, Any], theta: tuple[torch.Tensor, ...], prior: float, z: torch.Tensor,
                      u: torch.Tensor, delta: torch.Tensor, lam: torch.Tensor, rho: float
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(g, penalty) per budget: g the distortion (exact, or of the batch) minus the budget."""
    if hp["distortion"] == "exact":
        b0, b1, g0, g1 = theta
        dist = (1 - prior) * (b0 ** 2 + g0 ** 2) + prior * (b1 ** 2 + g1 ** 2)
    else:
        dist = ((z - u[None]) ** 2).mean(1)
    g = dist - delta
    if hp["constraint"] == "penalty":  # (13)
        pen = rho * torch.relu(g)
    else:  # (14) with the slack eliminated: an inequality augmented Lagrangian
        pen = 0.5 * rho * (torch.relu(lam / rho + g) ** 2 - (lam / rho) ** 2)
    return g, pen


def _final_adversary(adv: SweepMLP, theta: tuple[torch.Tensor, ...], s_all: torch.Tensor, u_all: torch.Tensor,
                     z_shift: float, z_scale: float, gen: torch.Generator, p_hat: float, loss_name: str,
                     alpha: float) -> list[dict[str, Any]]:
    """Per budget: the final adversary on a fixed slice of the training set, with its own noise ``gen``."""
    k, n, device = theta[0].shape[0], len(s_all), s_all.device
    with torch.no_grad():  # the final adversary on a fixed slice of the training set, its own noise
        m_chk = min(n, ADVERSARY_CHECK_N)
        s_c, u_c = s_all[:m_chk], u_all[:m_chk]
        b0, b1, g0, g1 = theta
        noise = torch.randn((k, m_chk), generator=gen, device=device)
        s1 = s_c[None]
        z = (u_c[None] + (1 - s1) * b0[:, None] - s1 * b1[:, None]
             + ((1 - s1) * g0[:, None] + s1 * g1[:, None]) * noise)
        logit = adv(((z - z_shift) / z_scale)[..., None])[..., 0]
        mean_lq = classifier_loss(logit, s_c, "xent").neg().mean(1).double().cpu().numpy()
        acc = ((logit > 0).to(s_c.dtype) == s1).to(torch.float64).mean(1).cpu().numpy()
    h_s = -sum(x * math.log(x) for x in (p_hat, 1 - p_hat) if x > 0)
    note = (f"final adversary h(z) = P(S=1|z) vs the final privatizer on the first {m_chk} training rows "
            "(fresh noise); H(S) the plug-in entropy of the training labels"
            + ("" if loss_name == "xent" else f"; the adversary was trained on the alpha-loss (alpha={alpha:g}), "
               "its output read as a belief"))
    adversary = [{"mi": float(h_s + mean_lq[i]), "accuracy": float(acc[i]), "h_s": h_s,
                  "mean_log_q": float(mean_lq[i]), "n": m_chk, "note": note} for i in range(k)]
    return adversary

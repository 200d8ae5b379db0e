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
from .nn.flat_adam import adam
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
    batches_fits = True  # a case's repetitions: one network over every set's budgets (MixtureSets)

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
        return self._fit_many([samples], task, budgets, [seed], device)[0]

    def _fit_many(self, samples_list: list[Samples], task: Task, budgets: np.ndarray, seed_list: list[int],
                  device: Any) -> list[list[Mechanism]]:
        """One batched network for every set's budgets (:class:`MixtureSets`): set r's members get exactly
        the initialisation, minibatches and noise of a fit of set r alone."""
        if task.n_s != 2 or task.d_u != 1:
            raise InputError(f"gap-mixture needs binary S and scalar U (got n_s={task.n_s}, d_u={task.d_u})")
        hp = self.resolved(task, len(samples_list[0]))
        with torch_threads(self.threads):
            trained = _train(MixtureSets(samples_list, seed_list, len(budgets), device), task, budgets, hp,
                             hp["loss"], float(hp["alpha"]))
        return [self._mechanisms(task, budgets, hp, params, info) for params, info in trained]

    def _mechanisms(self, task: Task, budgets: np.ndarray, hp: dict[str, Any], params: np.ndarray,
                    info: dict[str, Any]) -> list[Mechanism]:
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
    s : Tensor, shape (B,) or (k, B)
        Labels 0/1 (float), shared by the members or one row per member.
    loss : {"xent", "alpha"}
        Cross-entropy (11), or the alpha-loss alpha/(alpha-1) (1 - p^(1-1/alpha)) of the
        probability p given to the true label.

    Returns
    -------
    Tensor, shape (k, B)
    """
    s = s if s.dim() == logit.dim() else s[None]
    log_p = torch.where(s > 0.5, torch.nn.functional.logsigmoid(logit), torch.nn.functional.logsigmoid(-logit))
    if loss == "xent":
        return -log_p
    return alpha / (alpha - 1.0) * (1.0 - torch.exp((1.0 - 1.0 / alpha) * log_p))


class MixtureSets:
    """The training sets of one fit (a case's repetitions, all of ``n`` rows): set ``r`` owns members
    ``r k .. (r + 1) k - 1`` (one per budget) and draws its permutations and noise from its own generator,
    in the order a fit of set ``r`` alone draws them."""

    def __init__(self, samples_list: list[Samples], seed_list: list[int], k: int, device: torch.device) -> None:
        self.k, self.sets, self.device = k, len(samples_list), device
        s_np = [np.asarray(s.s, dtype=np.int64) for s in samples_list]
        u_np = [np.asarray(s.u, dtype=float).reshape(-1) for s in samples_list]
        self.n = len(s_np[0])
        self.priors = [float(x.mean()) for x in s_np]  # the only model fact the privatizer uses, from samples
        derived = [seeds(sd, 2) for sd in seed_list]
        self.s_seeds = [d[0] for d in derived]
        self.gens = [generator(d[0], device) for d in derived]
        self.adv_gens = [generator(x) for d in derived for x in seeds(d[1], k)]
        self.s_all = torch.stack([to_tensor(x.astype(float), device) for x in s_np])  # (sets, n)
        self.u_all = torch.stack([to_tensor(x, device) for x in u_np])
        self.prior = self.member_values(self.priors)
        self.not_prior = self.member_values([1 - p for p in self.priors])
        self.z_shift = self.member_values([float(x.mean()) for x in u_np])[:, None]
        self.z_scale = self.member_values([float(max(x.std(), 1e-6)) for x in u_np])[:, None]

    def member_values(self, values: list[float]) -> torch.Tensor:
        """One number per set -> a float tensor (sets * k,) (float32, rounded from the number as a scalar is)."""
        return torch.as_tensor(values, dtype=torch.float32, device=self.device).repeat_interleave(self.k)

    def members(self, per_set: torch.Tensor) -> torch.Tensor:
        """(sets, ...) -> (sets * k, ...): each set's row for each of its members."""
        return per_set.repeat_interleave(self.k, 0)

    def permutations(self) -> torch.Tensor:
        """One permutation of range(n) per set, (sets, n)."""
        return torch.stack([torch.randperm(self.n, generator=g, device=self.device) for g in self.gens])

    def noise(self, m: int, gens: list[torch.Generator] | None = None) -> torch.Tensor:
        """Standard normals (sets * k, m), set r's block a (k, m) draw of its generator."""
        return torch.cat([torch.randn((self.k, m), generator=g, device=self.device) for g in gens or self.gens])


def _train(sets: MixtureSets, task: Task, budgets: np.ndarray, hp: dict[str, Any], loss_name: str, alpha: float
           ) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """Per set: the parameters (k, 4) = (beta0, beta1, gamma0, gamma1) and training facts (lists per budget)."""
    k, n, device = sets.k, sets.n, sets.device
    useful = task.observation == "useful"
    delta = to_tensor(np.tile(budgets, sets.sets), device)
    # start at the additive mechanism of distortion exactly the budget (GAP Theorem 2)
    theta = torch.zeros(len(delta), 4, device=device)
    theta[:, 2:] = torch.sqrt(delta)[:, None]
    theta.requires_grad_(True)
    adv = SweepMLP(len(delta), [1, *hp["hidden"], 1], "leaky_relu")
    init_members(adv, sets.adv_gens)
    adv.to(device)
    opt_p = adam([theta], hp["lr"], foreach=True)  # FlatAdam on the CPU (same numbers)
    opt_a = adam(list(adv.parameters()), hp["adversary_lr"], foreach=True)
    lam, rho = torch.zeros(len(delta), device=device), float(hp["penalty"])
    bs = min(int(hp["batch_size"]), n)
    n_batches = max(n // bs, 1)
    total = n_batches * int(hp["epochs"])
    step, xent = 0, torch.zeros(len(delta), device=device)

    def params() -> tuple[torch.Tensor, ...]:
        b0, b1, g0, g1 = theta.unbind(1)
        return (b0, -b0, g0, g0) if useful else (b0, b1, g0, g1)

    def adversary_loss(z: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        logit = adv(((z - sets.z_shift) / sets.z_scale)[..., None])[..., 0]  # (k, B)
        return classifier_loss(logit, s, loss_name, alpha).mean(1)

    for epoch in range(int(hp["epochs"])):
        perm = sets.permutations()
        g_epoch = torch.zeros(len(delta), device=device)
        for j in range(n_batches):
            if hp["cosine"]:
                cosine_lr(((opt_p, hp["lr"]), (opt_a, hp["adversary_lr"])), step, total)
            idx = perm[:, j * bs:(j + 1) * bs]
            s, u = sets.members(sets.s_all.gather(1, idx)), sets.members(sets.u_all.gather(1, idx))
            for _ in range(int(hp["adversary_steps"])):
                with torch.no_grad():
                    z = _release(params(), s, u, sets.noise(s.shape[1]))
                loss_a = adversary_loss(z, s).sum()
                check_loss(loss_a, step, "adversary loss")
                opt_a.zero_grad(set_to_none=True)
                loss_a.backward()
                opt_a.step()
            z = _release(params(), s, u, sets.noise(s.shape[1]))
            xent = adversary_loss(z, s)
            g, pen = _constraint_terms(hp, params(), (sets.prior, sets.not_prior), z, u, delta, lam, rho)
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
    adversary = _final_adversary(adv, params(), sets, loss_name, alpha)
    lams, xents = lam.cpu().tolist(), xent.detach().cpu().tolist()
    return [(out[r * k:(r + 1) * k],
             {"prior_estimate": sets.priors[r], "multiplier": lams[r * k:(r + 1) * k],
              "final_adversary_loss": xents[r * k:(r + 1) * k], "steps": step, "epochs": int(hp["epochs"]),
              "training_adversary": adversary[r * k:(r + 1) * k]}) for r in range(sets.sets)]


def _release(theta: tuple[torch.Tensor, ...], s: torch.Tensor, u: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Z = U + shift(S) + scale(S) N per member; ``s``, ``u``, ``noise`` (k, B)."""
    b0, b1, g0, g1 = theta
    return u + (1 - s) * b0[:, None] - s * b1[:, None] + ((1 - s) * g0[:, None] + s * g1[:, None]) * noise


def _constraint_terms(hp: dict[str, Any], theta: tuple[torch.Tensor, ...], prior: tuple[torch.Tensor, torch.Tensor],
                      z: torch.Tensor, u: torch.Tensor, delta: torch.Tensor, lam: torch.Tensor, rho: float
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(g, penalty) per member: g the distortion (exact, or of the batch) minus the budget.

    ``prior``: the members' estimates of P(S=1) and of 1 - P(S=1), each (k,); ``z``, ``u`` (k, B).
    """
    if hp["distortion"] == "exact":
        b0, b1, g0, g1 = theta
        p1, p0 = prior
        dist = p0 * (b0 ** 2 + g0 ** 2) + p1 * (b1 ** 2 + g1 ** 2)
    else:
        dist = ((z - u) ** 2).mean(1)
    g = dist - delta
    if hp["constraint"] == "penalty":  # (13)
        pen = rho * torch.relu(g)
    else:  # (14) with the slack eliminated: an inequality augmented Lagrangian
        pen = 0.5 * rho * (torch.relu(lam / rho + g) ** 2 - (lam / rho) ** 2)
    return g, pen


def _final_adversary(adv: SweepMLP, theta: tuple[torch.Tensor, ...], sets: MixtureSets, loss_name: str,
                     alpha: float) -> list[dict[str, Any]]:
    """Per member: the final adversary on a fixed slice of its training set, with its set's own noise."""
    with torch.no_grad():  # the final adversary on a fixed slice of the training set, its own noise
        m_chk = min(sets.n, ADVERSARY_CHECK_N)
        s_c, u_c = sets.members(sets.s_all[:, :m_chk]), sets.members(sets.u_all[:, :m_chk])
        noise = sets.noise(m_chk, [generator(x ^ 2, sets.device) for x in sets.s_seeds])
        z = _release(theta, s_c, u_c, noise)
        logit = adv(((z - sets.z_shift) / sets.z_scale)[..., None])[..., 0]
        mean_lq = classifier_loss(logit, s_c, "xent").neg().mean(1).double().cpu().numpy()
        acc = ((logit > 0).to(s_c.dtype) == s_c).to(torch.float64).mean(1).cpu().numpy()
    note = (f"final adversary h(z) = P(S=1|z) vs the final privatizer on the first {m_chk} training rows "
            "(fresh noise); H(S) the plug-in entropy of the training labels"
            + ("" if loss_name == "xent" else f"; the adversary was trained on the alpha-loss (alpha={alpha:g}), "
               "its output read as a belief"))
    adversary = []
    for i in range(len(mean_lq)):
        p_hat = sets.priors[i // sets.k]
        h_s = -sum(x * math.log(x) for x in (p_hat, 1 - p_hat) if x > 0)
        adversary.append({"mi": float(h_s + mean_lq[i]), "accuracy": float(acc[i]), "h_s": h_s,
                          "mean_log_q": float(mean_lq[i]), "n": m_chk, "note": note})
    return adversary

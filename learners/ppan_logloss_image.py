"""PPAN with the log-loss utility on images (PPAN paper, Appendix D, continuous W): ``ppan-logloss-image``.

The mechanism is :mod:`.ppan_image`'s noise-seeded image network: Z = g(W, noise), an image in
(0, 1)^d_u from the observed image (with a one-hot S for ``full``) and ``n_noise``
Uniform[-1, 1] seed values.  Beside the privacy adversary Q(S | Z) a second variational
posterior R(U | Z) of the utility label is trained (Appendix D); with b the budget,

    min_g max_Q   E log Q(S | Z)                         (= I(S; Z) - H(S) at the best Q)
    subject to    D_R = E[-log R(U | Z)] <= b            (>= H(U | Z), equal at the best R).

As in :mod:`.ppan_logloss` the constraint enters through a PHR augmented Lagrangian, one
multiplier mu per budget (rho/2 [max(0, D_R - b + mu/rho)^2 - (mu/rho)^2], mu <- max(0, mu +
dual_lr (D_R - b)) after every mechanism step, D_R the batch's), so each budget gets its own
point of the tradeoff.  Updates alternate on each batch: ``adv_steps`` adversary and posterior steps (default 5:
with one, the mechanism learned to fool its current adversary, a release whose S a fresh
classifier still read at 0.89 on digits), then one mechanism step.  Every budget trains as one batched model (:mod:`.nn.sweep`); ``device="cuda"``
moves the whole game to a GPU.

The training facts in ``info`` (never used for evaluation): the posterior's cross-entropy on
the training rows (``train_distortion``; an upper bound on the training H(U | Z) by that
posterior), the final adversary's cross-entropy and accuracy, the multiplier, and
``over_budget`` where the posterior's cross-entropy ends above the budget by more than 5%.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .nn.core import check_loss, generator, init_module, seeds, to_tensor, torch_threads
from .nn.image_game import mech_input, soft_clip
from .nn.sweep import SweepMLP
from .ppan_image import sweep_linears
from .ppan_image_mechanism import ACTIVATIONS, ImageMLPMechanism
from .registry import register
from .serves import Serves

#: The defaults of every hyper-parameter left None.
DEFAULT: dict[str, Any] = dict(hidden=(128,), adv_hidden=(64,), post_hidden=(64,), n_noise=20, epochs=150,
                               batch_size=100, adv_steps=5, lr=1e-3, activation="tanh", penalty=20.0,
                               dual_lr=0.05)
INTS = ("n_noise", "epochs", "batch_size", "adv_steps")
WIDTHS = ("hidden", "adv_hidden", "post_hidden")


@register
class PPANLogLossImage(Learner):
    """PPAN appendix D for images: seed-noise mechanism, adversary Q(S|Z), utility posterior R(U|Z).

    Parameters
    ----------
    hidden, adv_hidden, post_hidden : tuple of int, int or None
        Hidden widths of the mechanism, the privacy adversary and the utility posterior (an int: one layer).
    n_noise : int or None
        Seed-noise dimension.
    epochs, batch_size : int or None
        Passes over the training rows; batch size.
    adv_steps : int or None
        Adversary and posterior steps on each batch before its mechanism step (PPAN Appendix A's k).
    lr : float or None
        Adam learning rate (all three networks).
    activation : str or None
        Hidden activation (tanh, relu, elu, leaky_relu).
    penalty, dual_lr : float or None
        rho of the augmented Lagrangian and the multiplier's step.
    threads : int or None
        torch intra-op threads while training on a CPU.
    """

    name = "ppan-logloss-image"
    gpu_task_kinds = ("image",)
    summary = ("PPAN appendix D on images (logloss): noise-seeded image mechanism vs adversary Q(S|Z), with a "
               "variational posterior R(U|Z) of the utility label; budget on H(U|Z) by an augmented Lagrangian")
    serves = Serves(kinds=("image",), distortions=("logloss",))
    observations = ("useful", "full")
    privacies = ("mi",)
    distortions = ("logloss",)
    test_params = dict(hidden=(16,), adv_hidden=(16,), post_hidden=(16,), n_noise=4, epochs=2, batch_size=32)

    def __init__(self, hidden: tuple[int, ...] | None = None, adv_hidden: tuple[int, ...] | None = None,
                 post_hidden: tuple[int, ...] | None = None, n_noise: int | None = None, epochs: int | None = None,
                 batch_size: int | None = None, adv_steps: int | None = None, lr: float | None = None, activation: str | None = None,
                 penalty: float | None = None, dual_lr: float | None = None, threads: int | None = 1) -> None:
        self.hidden = hidden
        self.adv_hidden = adv_hidden
        self.post_hidden = post_hidden
        self.n_noise = n_noise
        self.epochs = epochs
        self.batch_size = batch_size
        self.adv_steps = adv_steps
        self.lr = lr
        self.activation = activation
        self.penalty = penalty
        self.dual_lr = dual_lr
        self.threads = threads

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """:data:`DEFAULT` with this learner's overrides, validated."""
        cfg = {k: (v if getattr(self, k) is None else getattr(self, k)) for k, v in DEFAULT.items()}
        for key in WIDTHS:  # a sequence of widths, or one integer for one hidden layer (the CLI's hidden=64)
            v = cfg[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer, tuple, list)):
                raise InputError(f"{key}={v!r} must be a layer width or a list of them")
            cfg[key] = tuple(int(h) for h in ((v,) if isinstance(v, (int, np.integer)) else v))
            if not cfg[key] or any(h < 1 for h in cfg[key]):
                raise InputError(f"{key}={cfg[key]!r} must hold at least one positive layer width")
        for key in INTS:
            v = cfg[key]
            lo = 0 if key == "n_noise" else 1
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise InputError(f"{key}={v!r} must be an integer >= {lo}")
        check_choice("activation", cfg["activation"], tuple(ACTIVATIONS))
        for key in ("lr", "penalty", "dual_lr"):
            v = cfg[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (
                    key != "dual_lr" and v == 0):
                raise InputError(f"{key}={v!r} must be a finite number {'>= 0' if key == 'dual_lr' else '> 0'}")
        return cfg

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        cfg = self.resolved(task, len(samples))
        with torch_threads(self.threads if device.type == "cpu" else None):
            nets, facts = train_image_funnel(samples, task, budgets, seed, device, cfg)
        mech = nets[0]
        out: list[Mechanism] = []
        for i, b in enumerate(budgets):
            weights = [layer.weight[i].detach().cpu() for layer in sweep_linears(mech)]
            biases = [layer.bias[i, 0].detach().cpu() for layer in sweep_linears(mech)]
            info = {k: v[i] for k, v in facts.items() if isinstance(v, list)}
            info.update(steps=facts["steps"], penalty=cfg["penalty"], dual_lr=cfg["dual_lr"],
                        over_budget=bool(info["train_distortion"] > float(b) * 1.05 + 1e-3))
            out.append(ImageMLPMechanism(task, float(b), weights, biases, cfg["n_noise"], cfg["activation"], None,
                                         info))
        return out


def standardised(z: torch.Tensor) -> torch.Tensor:
    """Each member's releases (k, b, d) standardised per pixel with the batch's mean and std (gradients flow
    through both, as in batch normalisation): an adversary on raw pixels missed S hidden at a small scale."""
    return (z - z.mean(1, keepdim=True)) / (z.std(1, keepdim=True) + 1e-3)


def xent(net: torch.nn.Module, z: torch.Tensor, y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Per-member mean cross-entropy of the softmax head ``net`` on (k, b, d) releases, standardised
    (:func:`standardised`): shape (k,)."""
    k = z.shape[0]
    logits = net(standardised(z))
    return F.cross_entropy(logits.reshape(-1, n_classes), y.repeat(k), reduction="none").view(k, -1).mean(1)


def train_image_funnel(samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: torch.device,
                       cfg: dict[str, Any]) -> tuple[tuple[SweepMLP, SweepMLP, SweepMLP], dict[str, Any]]:
    """Train all budgets at once: ((mechanism, adversary, posterior) sweeps, per-budget training facts)."""
    k, n, d_u, n_s, n_u = len(budgets), len(samples), int(task.d_u), int(task.n_s), int(task.n_u)
    s_init, s_noise, s_batch = seeds(seed, 3)
    g_init = generator(s_init)
    d_in = (n_s if task.observation == "full" else 0) + d_u + cfg["n_noise"]
    mech = init_module(SweepMLP(k, (d_in, *cfg["hidden"], d_u), cfg["activation"]), g_init).to(device)
    adv = init_module(SweepMLP(k, (d_u, *cfg["adv_hidden"], n_s), cfg["activation"]), g_init).to(device)
    post = init_module(SweepMLP(k, (d_u, *cfg["post_hidden"], n_u), cfg["activation"]), g_init).to(device)
    opts = [torch.optim.Adam(net.parameters(), lr=float(cfg["lr"])) for net in (mech, adv, post)]
    g_noise = generator(s_noise, device)
    order = np.random.default_rng(s_batch)
    W = to_tensor(task.observe(samples), device)
    S = torch.as_tensor(samples.s, dtype=torch.long, device=device)
    U = torch.as_tensor(samples.utility[task.utility[0][0]], dtype=torch.long, device=device)  # the label of H(U|Z)
    b = torch.as_tensor(budgets, dtype=torch.float32, device=device)
    mu = torch.zeros(k, device=device)
    rho, dual_lr = float(cfg["penalty"]), float(cfg["dual_lr"])
    bs = min(int(cfg["batch_size"]), n)

    def release(w: torch.Tensor) -> torch.Tensor:
        noise = torch.rand(k, len(w), cfg["n_noise"], generator=g_noise, device=device) * 2 - 1
        return torch.sigmoid(soft_clip(mech(mech_input(w.expand(k, -1, -1), task, noise))))

    step = 0
    for _ in range(int(cfg["epochs"])):
        perm = torch.as_tensor(order.permutation(n), device=device)
        for j in range(max(1, n // bs)):
            idx = perm[j * bs:(j + 1) * bs]
            z = release(W[idx])
            for _ in range(int(cfg["adv_steps"])):
                for net, opt, y, c in ((adv, opts[1], S, n_s), (post, opts[2], U, n_u)):
                    loss = xent(net, z.detach(), y[idx], c).sum()
                    check_loss(loss, step, "adversary/posterior loss")
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
            privacy, dist = -xent(adv, z, S[idx], n_s), xent(post, z, U[idx], n_u)
            hinge = torch.relu(dist - b + mu / rho)
            loss = (privacy + rho / 2 * (hinge ** 2 - (mu / rho) ** 2)).sum()
            check_loss(loss, step, "mechanism loss")
            opts[0].zero_grad(set_to_none=True)
            loss.backward()
            opts[0].step()
            mu = torch.clamp(mu + dual_lr * (dist.detach() - b), min=0.0)
            step += 1
    facts = final_facts(release, adv, post, W, S, U, n_s, n_u)
    return (mech, adv, post), {**facts, "multiplier": mu.tolist(), "steps": step}


@torch.no_grad()
def final_facts(release: Any, adv: SweepMLP, post: SweepMLP, W: torch.Tensor, S: torch.Tensor, U: torch.Tensor,
                n_s: int, n_u: int) -> dict[str, list[float]]:
    """The final posterior's and adversary's cross-entropies (and the adversary's accuracy) on the training rows."""
    n = len(W)
    tot = {"dist": 0.0, "xent": 0.0, "hits": 0.0}
    for a in range(0, n, 1000):
        z = release(W[a:a + 1000])
        tot["dist"] = tot["dist"] + xent(post, z, U[a:a + 1000], n_u) * len(z[0])
        tot["xent"] = tot["xent"] + xent(adv, z, S[a:a + 1000], n_s) * len(z[0])
        tot["hits"] = tot["hits"] + (adv(standardised(z)).argmax(-1) == S[a:a + 1000][None]).sum(1)
    return {"train_distortion": (tot["dist"] / n).tolist(), "train_adversary_xent": (tot["xent"] / n).tolist(),
            "train_adversary_accuracy": (tot["hits"] / n).tolist()}

"""PPAN's image mechanism (Tripathy, Wang & Ishwar, §III-C, Figs 7-9): ``ppan-image``.

The mechanism is a "universal approximator" network (PPAN §II-C3): it maps the
observed image, concatenated with ``n_noise`` Uniform[-1, 1] seed-noise values, to
a released image Z in [0, 1]^d_u through a sigmoid output.  An adversary network
Q(S | Z) (softmax over the n_s labels) is trained to maximise E log Q(S | Z), the
variational lower bound of I(S; Z) - H(S) (PPAN eq. 2); the mechanism minimises

    E log Q(S | Z) + penalty * max(0, mean_batch d(U, Z) - budget)^2          (PPAN eq. 3)
                   [+ gamma * discriminator term, PPAN eq. 9]

with d the per-pixel binary cross-entropy of PPAN §III-C,
d(U, Z) = -(1/d_u) sum_i U_i log Z_i + (1 - U_i) log(1 - Z_i), averaged over the
batch before the penalty (the paper's budget-targeting variant of eq. 3).  With
``gamma > 0`` a discriminator D(Z) = P(Z is a release, not a real image) joins
the game as in eq. 9: it ascends gamma*(log D(z) + log(1 - D(u))) and the
mechanism descends gamma*log D(z) (schedule ``paper``) or the non-saturating
surrogate -gamma*log(1 - D(z)) (schedule ``default``; same fixed point).
Updates alternate: ``adv_steps`` adversary (and discriminator) steps on a batch,
then one mechanism step on the same batch (PPAN Appendix A; the paper uses 1).

Schedules
---------
``paper``    the paper's networks: mechanism (d_u + 20) -> 1000 -> 1000 -> d_u,
             adversary d_u -> 1000 -> 1000 -> n_s, discriminator d_u -> 500 -> 1,
             tanh, Adam(1e-3), batches of 100, 50 epochs, one adversary step per
             mechanism step.  Heavy on a CPU (about 4.4M weights per budget).
``default``  the same design, smaller: 256-unit layers, 100 epochs, one adversary
             step, the discriminator's non-saturating mechanism loss; 3,500 images
             at five budgets train in about 3 minutes on one CPU thread.

The paper's MNIST runs trade off with a Lagrange weight (lambda from 35 to 2); here
every run targets a budget through the penalty above (PPAN §II-B's variant).

``skip=True`` (off in both schedules) adds a residual path, Z = sigmoid(bound(net(.) +
logit(clamp(U, 0.01, 0.99)))), so that training starts near Z = U: it reconstructs
better at budgets close to the identity's distortion, but on the MNIST subset it
left large budgets unused and hid the digit less (see the issue #3 report).

Budgets are batched: one network per budget, all trained as one with the
sweep layers of :mod:`.nn.sweep` (independent weights, one Adam state each).
On an H100 five budgets cost what one does (about 5 ms a step, either schedule);
on one CPU thread the cost grows linearly (default: 11 ms a step per budget,
paper: 55 ms, on the 3,500-image MNIST-subset split).
The soft logit bound ``logit_max * tanh(logit / logit_max)`` keeps releases
strictly inside (0, 1) (cost below 1e-5 nats per pixel) so that the
cross-entropy of a release is always finite.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice, mechanism_type
from .registry import register
from .nn.core import check_loss, generator, init_module, rng_generator, seeds, to_tensor, torch_threads
from .nn.sweep import SweepLinear, SweepMLP
from .serves import Serves

SCHEDULES: dict[str, dict[str, Any]] = {
    "paper": dict(hidden=(1000, 1000), adv_hidden=(1000, 1000), disc_hidden=(500,), n_noise=20, epochs=50,
                  batch_size=100, lr=1e-3, adv_steps=1, activation="tanh", saturating=True,
                  skip=False),
    "default": dict(hidden=(256, 256), adv_hidden=(256, 256), disc_hidden=(256,), n_noise=20, epochs=100,
                    batch_size=100, lr=1e-3, adv_steps=1, activation="tanh", saturating=False,
                    skip=False),
}
ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "elu": F.elu, "leaky_relu": F.leaky_relu}
LOGIT_MAX = 12.0
SKIP_CLAMP = 0.01


def _skip_logit(u: torch.Tensor, clamp: float = SKIP_CLAMP) -> torch.Tensor:
    """logit(clamp(U, c, 1 - c)): the residual path of ``skip`` mechanisms (Z close to U at init)."""
    u = u.clamp(clamp, 1 - clamp)
    return torch.log(u) - torch.log1p(-u)


def soft_clip(logit: torch.Tensor) -> torch.Tensor:
    return LOGIT_MAX * torch.tanh(logit / LOGIT_MAX)


def mech_input(w: torch.Tensor, task: Task, noise: torch.Tensor) -> torch.Tensor:
    """[one-hot S (full only), U, noise], shape (..., n, (n_s) + d_u + n_noise)."""
    d_u = task.d_u
    parts = []
    if task.observation == "full":
        parts.append(F.one_hot(w[..., 0].round().long(), task.n_s).to(w.dtype))  # type: ignore[arg-type]
    parts += [w[..., -d_u:], noise]
    return torch.cat(parts, dim=-1)


@mechanism_type("ppan-image-mlp")
class ImageMLPMechanism(Mechanism):
    """Z = sigmoid(bound(MLP([one-hot S], U, seed noise))): a randomized image-to-image net.

    Parameters
    ----------
    weights : list of tensors, shapes (d_in, d_out) per layer
    biases : list of tensors, shapes (d_out,) per layer
    n_noise : int
        Seed noise dimension (Uniform[-1, 1]).
    activation : str
        Hidden activation, one of tanh, relu, elu, leaky_relu.
    """

    def __init__(self, task: Task, budget: float, weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor],
                 n_noise: int, activation: str = "tanh", skip_clamp: float | None = None,
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(task, budget, info)
        if task.kind != "image":
            raise InputError("ppan-image-mlp mechanisms are for image tasks")
        check_choice("activation", activation, tuple(ACTIVATIONS))
        self.weights = [torch.as_tensor(w, dtype=torch.float64).detach().cpu() for w in weights]
        self.biases = [torch.as_tensor(b, dtype=torch.float64).detach().cpu().reshape(-1) for b in biases]
        self.n_noise = int(n_noise)
        self.activation = activation
        self.skip_clamp = None if skip_clamp is None else float(skip_clamp)
        d_in = (task.n_s if task.observation == "full" else 0) + task.d_u + self.n_noise  # type: ignore[operator]
        if (len(self.weights) != len(self.biases) or not self.weights or self.weights[0].shape[0] != d_in
                or self.weights[-1].shape[1] != task.d_u):
            raise InputError(f"ppan-image-mlp layers do not map {d_in} inputs to {task.d_u} pixels")

    def _net(self, x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        act = ACTIVATIONS[self.activation]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < len(self.weights) - 1:
                x = act(x)
        if self.skip_clamp is not None:
            x = x + _skip_logit(u, self.skip_clamp)
        return torch.sigmoid(soft_clip(x))

    @torch.no_grad()
    def release(self, w: Any, rng: np.random.Generator) -> np.ndarray:
        """Released images, float64 of shape (n, d_u) strictly inside (0, 1)."""
        w = self.task.check_w(w)
        if self.task.observation == "full":
            col = w[:, 0]
            if np.any((col != np.round(col)) | (col < 0) | (col >= self.task.n_s)):  # type: ignore[operator]
                raise InputError(f"the S column of W must hold labels 0..{self.task.n_s - 1}")  # type: ignore[operator]
        gen = rng_generator(rng)
        noise = torch.rand(len(w), self.n_noise, generator=gen, dtype=torch.float64) * 2 - 1
        wt = torch.as_tensor(w, dtype=torch.float64)
        return self._net(mech_input(wt, self.task, noise), wt[:, -self.task.d_u:]).numpy()

    def params(self) -> dict[str, Any]:
        return {"layers": [list(w.shape) for w in self.weights], "n_noise": self.n_noise,
                "activation": self.activation, "skip_clamp": self.skip_clamp}

    def _state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        tensors = {f"w{i}": w for i, w in enumerate(self.weights)}
        tensors.update({f"b{i}": b for i, b in enumerate(self.biases)})
        return {"n_layers": len(self.weights), "n_noise": self.n_noise, "activation": self.activation,
                "skip_clamp": self.skip_clamp}, tensors

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):  # type: ignore[override]
        n = int(config["n_layers"])
        return cls(task, budget, [tensors[f"w{i}"] for i in range(n)], [tensors[f"b{i}"] for i in range(n)],
                   int(config["n_noise"]), str(config["activation"]), config["skip_clamp"], info)


def sweep_linears(net: SweepMLP) -> list[SweepLinear]:
    return [m for m in net.net if isinstance(m, SweepLinear)]


@register
class PPANImage(Learner):
    """PPAN for images: seed-noise mechanism net, softmax adversary, per-pixel cross-entropy budget.

    Parameters
    ----------
    schedule : {"default", "paper"}
        Supplies every hyper-parameter left as None (see the module docstring).
    hidden, adv_hidden, disc_hidden : tuple of int or None
        Hidden layer widths of the mechanism, adversary and discriminator.
    n_noise : int or None
        Seed-noise dimension.
    epochs, batch_size, adv_steps : int or None
        Passes over the training set, batch size, adversary steps per mechanism step.
    lr : float or None
        Adam learning rate (all networks).
    penalty : float
        Weight of the squared budget excess max(0, mean d - budget)^2.
    gamma : float
        Discriminator weight (0: no discriminator; the paper shows gamma = 2).
    activation : str or None
        Hidden activation (tanh in the paper).
    skip : bool or None
        Residual path from U to the release logits (see the module docstring).
    threads : int or None
        torch intra-op threads while training (None: leave torch's setting).
    """

    name = "ppan-image"
    summary = "PPAN §III-C: noise-seeded image mechanism vs softmax adversary, per-pixel xent budget"
    serves = Serves(kinds=("image",))
    observations = ("useful", "full")
    privacies = ("mi",)
    test_params = dict(hidden=(16,), adv_hidden=(16,), disc_hidden=(8,), n_noise=4, epochs=2, batch_size=32)

    def __init__(self, schedule: str = "default", hidden: tuple[int, ...] | None = None,
                 adv_hidden: tuple[int, ...] | None = None, disc_hidden: tuple[int, ...] | None = None,
                 n_noise: int | None = None, epochs: int | None = None, batch_size: int | None = None,
                 adv_steps: int | None = None, lr: float | None = None, penalty: float = 1e4,
                 gamma: float = 0.0, activation: str | None = None, skip: bool | None = None,
                 threads: int | None = 1) -> None:
        self.schedule = schedule
        self.hidden = hidden
        self.adv_hidden = adv_hidden
        self.disc_hidden = disc_hidden
        self.n_noise = n_noise
        self.epochs = epochs
        self.batch_size = batch_size
        self.adv_steps = adv_steps
        self.lr = lr
        self.penalty = penalty
        self.gamma = gamma
        self.activation = activation
        self.skip = skip
        self.threads = threads

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The schedule's hyper-parameters with this learner's overrides (validated)."""
        check_choice("schedule", self.schedule, tuple(SCHEDULES))
        cfg = dict(SCHEDULES[self.schedule])
        for key in ("hidden", "adv_hidden", "disc_hidden", "n_noise", "epochs", "batch_size", "adv_steps", "lr",
                    "activation", "skip"):
            if getattr(self, key) is not None:
                cfg[key] = getattr(self, key)
        for key in ("hidden", "adv_hidden", "disc_hidden"):
            cfg[key] = tuple(int(h) for h in cfg[key])
            if any(h < 1 for h in cfg[key]):
                raise InputError(f"{key}={cfg[key]!r} must hold positive layer widths")
        for key in ("n_noise", "epochs", "batch_size", "adv_steps"):
            v = cfg[key]
            lo = 0 if key == "n_noise" else 1
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise InputError(f"{key}={v!r} must be an integer >= {lo}")
        if not isinstance(cfg["skip"], bool):
            raise InputError(f"skip={cfg['skip']!r} must be True or False")
        check_choice("activation", cfg["activation"], tuple(ACTIVATIONS))
        for key, v in (("lr", cfg["lr"]), ("penalty", self.penalty), ("gamma", self.gamma)):
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (key == "lr" and v == 0):
                raise InputError(f"{key}={v!r} must be a finite number {'> 0' if key == 'lr' else '>= 0'}")
        return cfg

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        cfg = self.resolved(task, len(samples))
        with torch_threads(self.threads if device.type == "cpu" else None):
            return self._train(samples, task, budgets, seed, device, cfg)

    def _train(self, samples, task, budgets, seed, device, cfg) -> list[Mechanism]:
        k, n, d_u, n_s = len(budgets), len(samples), task.d_u, task.n_s
        s_init, s_noise, s_batch = seeds(seed, 3)
        g_init = generator(s_init)
        d_in = (n_s if task.observation == "full" else 0) + d_u + cfg["n_noise"]
        mech = init_module(SweepMLP(k, (d_in, *cfg["hidden"], d_u), cfg["activation"]), g_init).to(device)
        adv = init_module(SweepMLP(k, (d_u, *cfg["adv_hidden"], n_s), cfg["activation"]), g_init).to(device)
        use_disc = self.gamma > 0
        opt_m = torch.optim.Adam(mech.parameters(), lr=cfg["lr"])
        opt_a = torch.optim.Adam(adv.parameters(), lr=cfg["lr"])
        if use_disc:
            disc = init_module(SweepMLP(k, (d_u, *cfg["disc_hidden"], 1), cfg["activation"]), g_init).to(device)
            opt_d = torch.optim.Adam(disc.parameters(), lr=cfg["lr"])
        g_noise = generator(s_noise, device)
        order = np.random.default_rng(s_batch)

        W = to_tensor(task.observe(samples), device)
        U = to_tensor(samples.u, device)
        S = torch.as_tensor(samples.s, dtype=torch.long, device=device)
        budget_t = torch.as_tensor(budgets, dtype=torch.float32, device=device)
        bs = min(int(cfg["batch_size"]), n)
        per_epoch = max(1, n // bs)
        gamma, penalty = float(self.gamma), float(self.penalty)

        def adv_xent(z: torch.Tensor, s: torch.Tensor, net: nn.Module) -> torch.Tensor:
            logits = net(z)  # (k, b, n_s)
            return F.cross_entropy(logits.reshape(-1, n_s), s.repeat(k), reduction="none").view(k, -1).mean(1)

        step = 0
        for _ in range(int(cfg["epochs"])):
            perm = torch.as_tensor(order.permutation(n), device=device)
            for j in range(per_epoch):
                idx = perm[j * bs:(j + 1) * bs]
                w, u, s = W[idx], U[idx], S[idx]
                noise = torch.rand(k, len(idx), cfg["n_noise"], generator=g_noise, device=device) * 2 - 1
                logit = self._logit(mech, w, u, task, noise, cfg, k)  # (k, b, d_u)
                z = torch.sigmoid(logit)
                zd = z.detach()
                for _ in range(int(cfg["adv_steps"])):
                    la = adv_xent(zd, s, adv).sum()
                    check_loss(la, step, "adversary loss")
                    opt_a.zero_grad(set_to_none=True)
                    la.backward()
                    opt_a.step()
                    if use_disc:
                        fake, real = disc(zd), disc(u.expand(k, -1, -1))
                        ld = (F.binary_cross_entropy_with_logits(fake, torch.ones_like(fake))
                              + F.binary_cross_entropy_with_logits(real, torch.zeros_like(real))) * k
                        check_loss(ld, step, "discriminator loss")
                        opt_d.zero_grad(set_to_none=True)
                        ld.backward()
                        opt_d.step()
                # mechanism: minimise E log Q(s|z) + penalty * excess^2 (+ discriminator term)
                dist = F.binary_cross_entropy_with_logits(logit, u.expand(k, -1, -1), reduction="none").mean((1, 2))
                loss = -adv_xent(z, s, adv) + penalty * torch.relu(dist - budget_t) ** 2
                if use_disc:
                    dl = disc(z)[..., 0]
                    loss = loss + gamma * (F.logsigmoid(dl) if cfg["saturating"] else F.softplus(dl)).mean(1)
                loss = loss.sum()
                check_loss(loss, step, "mechanism loss")
                opt_m.zero_grad(set_to_none=True)
                loss.backward()
                opt_m.step()
                step += 1

        final = self._final_stats(mech, adv, W, U, S, task, g_noise, cfg, k)
        return self._mechanisms(mech, final, samples, task, budgets, cfg, step)

    def _mechanisms(self, mech: SweepMLP, final: dict[str, list[float]], samples: Samples, task: Task,
                    budgets: np.ndarray, cfg: dict[str, Any], step: int) -> list[Mechanism]:
        """One ImageMLPMechanism per budget (member i of the sweep) with its training facts."""
        n, n_s = len(samples), task.n_s
        gamma, penalty = float(self.gamma), float(self.penalty)
        freq = np.bincount(np.asarray(samples.s), minlength=n_s) / n
        h_s = float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum())
        mechs: list[Mechanism] = []
        for i, b in enumerate(budgets):
            weights = [layer.weight[i].detach().cpu() for layer in sweep_linears(mech)]
            biases = [layer.bias[i, 0].detach().cpu() for layer in sweep_linears(mech)]
            info = {"schedule": self.schedule, "steps": step, "gamma": gamma, "penalty": penalty,
                    "train_distortion": final["dist"][i], "train_adversary_xent": final["xent"][i],
                    "over_budget": bool(final["dist"][i] > float(b) * 1.05 + 1e-3),
                    "training_adversary": {
                        "mi": h_s - final["xent"][i], "accuracy": final["accuracy"][i], "h_s": h_s, "n": n,
                        "note": "final adversary vs the final mechanism on the whole training set (the same pass "
                                "as train_adversary_xent); H(S) the plug-in entropy of the training labels"}}
            mechs.append(ImageMLPMechanism(task, float(b), weights, biases, cfg["n_noise"], cfg["activation"],
                                           SKIP_CLAMP if cfg["skip"] else None, info))
        return mechs

    @staticmethod
    def _logit(mech, w, u, task, noise, cfg, k) -> torch.Tensor:
        x = mech(mech_input(w.expand(k, -1, -1), task, noise))
        return soft_clip(x + _skip_logit(u) if cfg["skip"] else x)

    @torch.no_grad()
    def _final_stats(self, mech, adv, W, U, S, task, g_noise, cfg, k) -> dict[str, list[float]]:
        """Training-set distortion and the training adversary's cross-entropy (info only, not evaluation)."""
        dist = torch.zeros(k, device=W.device)
        xent = torch.zeros(k, device=W.device)
        hits = torch.zeros(k, device=W.device)
        n = len(W)
        for a in range(0, n, 1000):
            w, u, s = W[a:a + 1000], U[a:a + 1000], S[a:a + 1000]
            noise = torch.rand(k, len(w), cfg["n_noise"], generator=g_noise, device=W.device) * 2 - 1
            logit = self._logit(mech, w, u, task, noise, cfg, k)
            dist += F.binary_cross_entropy_with_logits(logit, u.expand(k, -1, -1), reduction="none").mean(2).sum(1)
            scores = adv(torch.sigmoid(logit))
            xent += F.cross_entropy(scores.reshape(-1, task.n_s), s.repeat(k), reduction="none").view(k, -1).sum(1)
            hits += (scores.argmax(-1) == s[None]).sum(1)
        return {"dist": (dist / n).tolist(), "xent": (xent / n).tolist(), "accuracy": (hits / n).tolist()}

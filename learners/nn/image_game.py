"""The game of ``ppan-image`` (PPAN §III-C), batched over a budget sweep: a noise-seeded image
mechanism, an adversary Q(S | Z) and an optional discriminator D(Z), trained by alternating steps.

Mechanism: logits = soft_clip(MLP([one-hot S], U, noise) [+ logit(clamp(U, c, 1 - c))]) and
Z = sigmoid(logits).  With the residual path (``skip``) the release starts at Z close to U
(distortion the identity's plus the clamp's, about 0.0615 nats/pixel on the MNIST subset at
c = 0.003): near-lossless releases stay sharp, and the network learns only what it changes.

Adversary (``adv_standardise``): the shape of the bench's fresh classifier
(``bench/evaluators/classifier.py``, mirrored here because learners never import bench):
each pixel of the release is standardised by its running mean and standard deviation
(momentum ``STATS_MOMENTUM``; a pixel whose deviation is below 1e-6 is left unscaled, as
there), then a ReLU MLP (one hidden layer of 128 units in the ``default`` schedule).  A
pixel that a deterministic mechanism leaves nearly constant but still a function of the
digit is as visible to this adversary as to the bench's, so the mechanism must hide it
too.  ``adv_steps`` adversary updates (learning rate ``adv_lr``) precede each mechanism
update.

Mechanism loss per member (budget b): E log Q(S | Z) + penalty * max(0, d - b)^2
[+ gamma * discriminator term], d the batch's mean per-pixel cross-entropy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from privbench.datasets.tasks import Task

from .core import check_loss, cosine_lr, generator, init_module, seeds, to_tensor
from .sweep import SweepLinear, SweepMLP

LOGIT_MAX = 12.0
STATS_MOMENTUM = 0.05
STD_FLOOR = 1e-6
#: fraction of the training rows the adversary never trains on: its final accuracy is read there
ADV_HOLD = 0.15  # as the bench's fresh classifier: a deviation at or below it is not scaled
#: the gate of an image-free start (``free_gate``): Z = 1e-12 clamp(U) + (1 - 1e-12) sigmoid(r), a trace of U
#: 1e-12 its size (none at the float32 of training); its logit (-27.6) is out of reach of the penalty's gradient
FREE_GATE_START = 1e-12


def soft_clip(logit: torch.Tensor) -> torch.Tensor:
    """``LOGIT_MAX * tanh(logit / LOGIT_MAX)``: releases strictly inside (0, 1)."""
    return LOGIT_MAX * torch.tanh(logit / LOGIT_MAX)


def skip_logit(u: torch.Tensor, clamp: float) -> torch.Tensor:
    """logit(clamp(U, c, 1 - c)): the residual path of ``skip`` mechanisms (Z close to U at init)."""
    u = u.clamp(clamp, 1 - clamp)
    return torch.log(u) - torch.log1p(-u)


def release_parts(out: torch.Tensor, u: torch.Tensor, clamp: float | None, gate_bias: float | None
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(Z, log Z, log(1 - Z)) from the mechanism network's output ``out`` and the image ``u``.

    ``gate_bias`` None: Z = sigmoid(soft_clip(out [+ logit(clamp(U, c, 1 - c))])), the residual
    path present when ``clamp`` is a number.  ``gate_bias`` a number (``gated``): ``out`` holds
    2 d_u values (r, h) and Z = g clamp(U, c, 1 - c) + (1 - g) sigmoid(soft_clip(r)) with the
    per-pixel gate g = sigmoid(h + gate_bias): a blend of the sharp image and a generated one.
    """
    if gate_bias is None:
        logit = soft_clip(out + skip_logit(u, clamp) if clamp is not None else out)
        return torch.sigmoid(logit), F.logsigmoid(logit), F.logsigmoid(-logit)
    d = out.shape[-1] // 2
    g = torch.sigmoid(out[..., d:] + gate_bias)
    z = g * u.clamp(clamp, 1 - clamp) + (1 - g) * torch.sigmoid(soft_clip(out[..., :d]))
    return z, torch.log(z), torch.log1p(-z)


def mech_input(w: torch.Tensor, task: Task, noise: torch.Tensor) -> torch.Tensor:
    """[one-hot S (full only), U, noise], shape (..., n, (n_s) + d_u + n_noise)."""
    d_u = task.d_u
    parts = []
    if task.observation == "full":
        parts.append(F.one_hot(w[..., 0].round().long(), task.n_s).to(w.dtype))  # type: ignore[arg-type]
    parts += [w[..., -d_u:], noise]
    return torch.cat(parts, dim=-1)


class ImageAdversary(nn.Module):
    """k adversaries (k, n, d_u) -> (k, n, n_s) logits: [per-pixel standardisation ->] MLP.

    ``observe(z)`` updates the running per-pixel mean and variance of each member's
    releases (no gradient); ``forward`` standardises with them (gradients flow to z).
    """

    def __init__(self, k: int, d_u: int, hidden: tuple[int, ...], n_s: int, activation: str,
                 standardise: bool) -> None:
        super().__init__()
        self.net = SweepMLP(k, [d_u, *hidden, n_s], activation)
        self.standardise = bool(standardise)
        self.register_buffer("mean", torch.zeros(k, 1, d_u))
        self.register_buffer("var", torch.ones(k, 1, d_u))
        self.seen = False
        #: each pixel's deviation floored at this times the member's median deviation of the pixels that
        #: vary (the bench's fresh classifier's rule); 0 (the game's adversary): no floor
        self.sd_floor = 0.0

    @torch.no_grad()
    def observe(self, z: torch.Tensor) -> None:
        if not self.standardise:
            return
        m, v = z.mean(1, keepdim=True), z.var(1, keepdim=True, unbiased=False)
        if not self.seen:
            self.mean.copy_(m)
            self.var.copy_(v)
            self.seen = True
        else:
            self.mean.lerp_(m, STATS_MOMENTUM)
            self.var.lerp_(v, STATS_MOMENTUM)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if not self.standardise:
            return self.net(z)
        return self.net((z - self.mean) / floored_scale(self.var.sqrt(), self.sd_floor))


def floored_scale(sd: torch.Tensor, floor: float) -> torch.Tensor:
    """Each pixel's divisor from its deviation ``sd`` (..., d): floored at ``floor`` times the median
    deviation of the pixels that vary (> ``STD_FLOOR``) along the last axis (``floor`` 0: no floor); a
    pixel that does not vary is divided by 1."""
    varies = sd > STD_FLOOR
    if floor > 0:
        least = floor * torch.nanmedian(torch.where(varies, sd, torch.nan), dim=-1, keepdim=True).values
        sd = torch.maximum(sd, torch.nan_to_num(least, nan=0.0))
    return torch.where(varies, sd, torch.ones_like(sd))


class ImageGame:
    """The k-member networks, their optimisers, and one alternating training step.

    Parameters
    ----------
    task : Task
        An image task (``d_u`` pixels, ``n_s`` labels).
    k : int
        Members (budgets).
    cfg : dict
        The learner's resolved hyper-parameters.
    seed : int
        Seeds the initialisation (one generator for every network, in a fixed order).
    device : torch.device
    gamma, penalty : float
        Discriminator weight and budget-excess penalty.
    """

    def __init__(self, task: Task, k: int, cfg: dict[str, Any], seed: int, device: torch.device,
                 gamma: float, penalty: float) -> None:
        self.task, self.k, self.cfg = task, k, cfg
        self.gamma, self.penalty = float(gamma), float(penalty)
        n_s, d_u = task.n_s, task.d_u
        g = generator(seed)
        d_in = (n_s if task.observation == "full" else 0) + d_u + cfg["n_noise"]
        self.gated = cfg["arch"] == "gated"
        self.clamp = cfg["skip_clamp"] if cfg["arch"] != "plain" else None
        self.gate_bias = float(cfg["gate_bias"]) if self.gated else None
        d_out = d_u * (2 if self.gated else 1)
        #: the members started image-free (:meth:`start_at_budgets`), and the inputs that carry W
        self.free = torch.zeros(k, dtype=torch.bool)
        self.n_inputs = d_in - int(cfg["n_noise"])
        self.mech = init_module(SweepMLP(k, (d_in, *cfg["hidden"], d_out), cfg["activation"]), g)
        if cfg["arch"] == "skip":
            with torch.no_grad():  # start close to Z = U: the residual network's output starts small
                self.mech.net[-1].weight.mul_(0.1)
                self.mech.net[-1].bias.mul_(0.1)
        self.adv = init_module(ImageAdversary(k, d_u, cfg["adv_hidden"], n_s, cfg["adv_activation"],
                                              cfg["adv_standardise"]), g)
        self.mech, self.adv = self.mech.to(device), self.adv.to(device)
        self.opt_m = torch.optim.Adam(self.mech.parameters(), lr=cfg["lr"])
        self.opt_a = torch.optim.Adam(self.adv.parameters(), lr=cfg["adv_lr"])
        self.disc = None
        if self.gamma > 0:
            self.disc = init_module(ImageAdversary(k, d_u, cfg["disc_hidden"], 1, cfg["adv_activation"],
                                                   cfg["adv_standardise"]), g).to(device)
            self.opt_d = torch.optim.Adam(self.disc.parameters(), lr=cfg["adv_lr"])

    @torch.no_grad()
    def start_at_budgets(self, U: np.ndarray, budgets: np.ndarray) -> None:
        """``gated`` only: start member i at Z = g_i clamp(U) + (1 - g_i) E[U] with g_i such that the
        training images' mean distortion is budget i (bisection; g_i = sigmoid(gate_bias) where that
        start is already within the budget), so that the mechanism starts spending its budget.

        Where g_i would be below ``free_gate`` (the start would be a faint copy of the image, which a
        standardised or whitened classifier reads as well as the image itself) member i starts
        image-free instead: its gate at FREE_GATE_START and its first layer's inputs from W at 0, so
        that its start is E[U] varied by the seed noise alone and it buys image information only
        through the budget penalty (its image inputs kept sparse by :func:`shrink_inputs`).
        Measured 2026-11-28 (paper suite's ppan-image, sharp, 2 seeds, fresh digit accuracy): the
        budget start left 0.85-0.86 / 0.78-0.83 / 0.89 at 0.22 / 0.26 / 0.28 nats per pixel (the
        mean image at 0.264 is within 0.28: its start was the floor g = 1e-3 with r and the gate
        functions of U); image-free starts with ``input_l1`` 0.5 gave 0.83-0.86 / 0.40-0.57 / 0.09-0.11;
        the image-free start alone left 0.78-0.81 at 0.28 and ``input_l1`` alone 0.87."""
        c, d = self.clamp, self.task.d_u
        u = torch.as_tensor(np.asarray(U[:1000], dtype=np.float64))
        mean = u.mean(0).clamp(c, 1 - c)
        uc = u.clamp(c, 1 - c)

        def dist(g: float) -> float:
            z = g * uc + (1 - g) * mean
            return float(-(u * torch.log(z) + (1 - u) * torch.log1p(-z)).mean())

        last, first = self.mech.net[-1], self.mech.net[0]
        last.weight.mul_(0.1)
        last.bias[:, 0, :d] = torch.log(mean / (1 - mean)).to(last.bias.device, last.bias.dtype)
        g_max = 1.0 / (1.0 + math.exp(-self.gate_bias))
        for i, b in enumerate(np.asarray(budgets, dtype=float)):
            lo, hi = 0.0, g_max  # dist falls as g rises towards the image
            if dist(hi) < b:
                for _ in range(40):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if dist(mid) > b else (lo, mid)
            g = min(max(hi, 1e-3), g_max)
            if hi < float(self.cfg["free_gate"]):
                g = FREE_GATE_START
                first.weight[i, :first.weight.shape[1] - int(self.cfg["n_noise"]), :] = 0.0
                self.free[i] = True
            last.bias[i, 0, d:] = math.log(g / (1 - g)) - self.gate_bias

    def release(self, w: torch.Tensor, u: torch.Tensor, noise: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every member's releases Z and per-row distortion d(U, Z), shapes (k, b, d_u) and (k, b)."""
        out = self.mech(mech_input(w.expand(self.k, -1, -1), self.task, noise))
        z, log_z, log_1mz = release_parts(out, u, self.clamp, self.gate_bias)
        return z, -(u * log_z + (1 - u) * log_1mz).mean(-1)

    def adv_xent(self, z: torch.Tensor, s: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        """Each member's mean cross-entropy of Q(S | Z) (rows weighted by ``weight``, (b,)), (k,)."""
        logits = self.adv(z)
        x = F.cross_entropy(logits.reshape(-1, self.task.n_s), s.repeat(self.k), reduction="none").view(self.k, -1)
        return x.mean(1) if weight is None else (x * weight).sum(1) / weight.sum().clamp_min(1.0)

    def privacy_loss(self, z: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """The mechanism's privacy term per member, (k,).

        ``xent`` (PPAN eq. 3): E log Q(S | Z), unbounded below (it also rewards releases that Q
        reads confidently wrong); on the MNIST subset (schedule sharp) it is the one that hid the digit.
        ``mi``: the variational bound of I(S; Z), max(0, H(S) + E log Q(S | Z)) (H the batch labels'
        plug-in entropy): as ``xent`` while the adversary reads more than the prior, no reward for
        releases it reads worse than the prior (which ``xent`` pays for, and which carry S).
        ``confusion``: the cross-entropy from the label prior to Q(. | Z), E sum_s p(s) (-log Q(s | Z)),
        smallest when Q(. | Z) is the prior (a release that tells the adversary nothing); both
        have the same fixed point against the optimal adversary.  On the MNIST subset the
        mechanism answered it with image-dependent scrambles that the moving adversary could not
        follow and a fresh classifier decoded (fresh accuracy 0.92 at 0.21 nats/pixel).
        """
        if self.cfg["objective"] == "xent":
            return -self.adv_xent(z, s)
        prior = torch.bincount(s, minlength=self.task.n_s).to(z.dtype) / len(s)
        if self.cfg["objective"] == "mi":
            h = -(prior * torch.log(prior.clamp_min(1e-12))).sum()
            return torch.relu(h - self.adv_xent(z, s))
        logq = torch.log_softmax(self.adv(z), dim=-1)  # (k, b, n_s)
        return -(logq * prior).sum(-1).mean(1)

    def critic_steps(self, zd: torch.Tensor, u: torch.Tensor, s: torch.Tensor, fit: torch.Tensor, step: int) -> None:
        """``adv_steps`` updates of the adversary (and discriminator) on detached releases ``zd``
        (the adversary on the rows where ``fit`` is 1 only)."""
        self.adv.observe(zd)
        if self.disc is not None:
            self.disc.observe(torch.cat([zd, u.expand(self.k, -1, -1)], dim=1))
        disc_steps = self.cfg["adv_steps"] if self.cfg["disc_steps"] is None else self.cfg["disc_steps"]
        for j in range(int(self.cfg["adv_steps"])):
            la = self.adv_xent(zd, s, fit).sum()
            check_loss(la, step, "adversary loss")
            self.opt_a.zero_grad(set_to_none=True)
            la.backward()
            self.opt_a.step()
            if self.disc is not None and j < int(disc_steps):
                fake, real = self.disc(zd), self.disc(u.expand(self.k, -1, -1))
                ld = (F.binary_cross_entropy_with_logits(fake, torch.ones_like(fake))
                      + F.binary_cross_entropy_with_logits(real, torch.zeros_like(real))) * self.k
                check_loss(ld, step, "discriminator loss")
                self.opt_d.zero_grad(set_to_none=True)
                ld.backward()
                self.opt_d.step()

    def mech_step(self, z: torch.Tensor, dist_rows: torch.Tensor, s: torch.Tensor, budget_t: torch.Tensor,
                  step: int) -> None:
        """One mechanism update: E log Q(s|z) + penalty * excess^2 (+ discriminator term).

        The excess is the batch's: batches of 50 mean images have mean distortion 0.264 +- 0.008 on the
        MNIST subset, so 2.7% exceed a budget of 0.28 and the penalty pushes even a member that could be
        the mean image towards lower distortion, which only image information buys (every run ends at
        0.260-0.263, below the mean image's 0.264)."""
        dist = dist_rows.mean(1)
        loss = self.privacy_loss(z, s) + self.penalty * torch.relu(dist - budget_t) ** 2
        if self.disc is not None:
            dl = self.disc(z)[..., 0]
            loss = loss + self.gamma * (F.logsigmoid(dl) if self.cfg["saturating"] else F.softplus(dl)).mean(1)
        loss = loss.sum()
        check_loss(loss, step, "mechanism loss")
        self.opt_m.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_m.step()
        if self.free.any() and self.cfg["input_l1"] > 0:
            shrink_inputs(self.mech.net[0], self.free, self.n_inputs,
                          float(self.cfg["input_l1"]) * self.opt_m.param_groups[0]["lr"])


def train_image_game(game: ImageGame, W: np.ndarray, U: np.ndarray, S: np.ndarray, budgets: np.ndarray,
                     seed: int, device: torch.device) -> tuple[dict[str, Any], int]:
    """Alternate critic and mechanism steps for ``cfg["epochs"]`` passes; returns (final stats, steps),
    the stats with ``fit_rows`` (bool, (n,)): the rows the adversary trained on."""
    cfg, k = game.cfg, game.k
    s_noise, s_batch = seeds(seed, 2)
    g_noise = generator(s_noise, device)
    order = np.random.default_rng(s_batch)
    Wt, Ut = to_tensor(W, device), to_tensor(U, device)
    St = torch.as_tensor(S, dtype=torch.long, device=device)
    budget_t = torch.as_tensor(budgets, dtype=torch.float32, device=device)
    if game.gated and cfg["start"] == "budget":
        game.start_at_budgets(U, budgets)
    n = len(Wt)
    fit = torch.as_tensor(order.random(n) >= ADV_HOLD, dtype=torch.float32, device=device)
    bs = min(int(cfg["batch_size"]), n)
    per_epoch = max(1, n // bs)
    total = int(cfg["epochs"]) * per_epoch
    step = 0
    for _ in range(int(cfg["epochs"])):
        perm = torch.as_tensor(order.permutation(n), device=device)
        for j in range(per_epoch):
            if cfg["cosine"]:
                cosine_lr([(game.opt_m, cfg["lr"])], step, total, floor=0.1)
            idx = perm[j * bs:(j + 1) * bs]
            w, u, s = Wt[idx], Ut[idx], St[idx]
            noise = torch.rand(k, len(idx), cfg["n_noise"], generator=g_noise, device=device) * 2 - 1
            z, dist = game.release(w, u, noise)
            game.critic_steps(z.detach(), u, s, fit[idx], step)
            game.mech_step(z, dist, s, budget_t, step)
            step += 1
    return {**final_stats(game, Wt, Ut, St, fit, g_noise), "fit_rows": fit.bool().cpu().numpy()}, step


@torch.no_grad()
def final_stats(game: ImageGame, W: torch.Tensor, U: torch.Tensor, S: torch.Tensor, fit: torch.Tensor,
                g_noise: torch.Generator) -> dict[str, list[float]]:
    """Training-set distortion, the final adversary's cross-entropy (all rows), and its accuracy on the
    rows it never trained on (``held``, a fraction ADV_HOLD of the training rows) and on the others."""
    k, n_s = game.k, game.task.n_s
    dist = torch.zeros(k, device=W.device)
    xent = torch.zeros(k, device=W.device)
    hits_fit = torch.zeros(k, device=W.device)
    hits_held = torch.zeros(k, device=W.device)
    n = len(W)
    for a in range(0, n, 1000):
        w, u, s, f = W[a:a + 1000], U[a:a + 1000], S[a:a + 1000], fit[a:a + 1000]
        noise = torch.rand(k, len(w), game.cfg["n_noise"], generator=g_noise, device=W.device) * 2 - 1
        z, d = game.release(w, u, noise)
        dist += d.sum(1)
        scores = game.adv(z)
        xent += F.cross_entropy(scores.reshape(-1, n_s), s.repeat(k), reduction="none").view(k, -1).sum(1)
        hit = (scores.argmax(-1) == s[None]).float()
        hits_fit += (hit * f).sum(1)
        hits_held += (hit * (1 - f)).sum(1)
    n_fit = float(fit.sum())
    return {"dist": (dist / n).tolist(), "xent": (xent / n).tolist(),
            "accuracy_held": (hits_held / max(n - n_fit, 1.0)).tolist(),
            "accuracy_fit": (hits_fit / max(n_fit, 1.0)).tolist(), "n_held": [n - n_fit] * k}


@torch.no_grad()
def shrink_inputs(first: SweepLinear, members: torch.Tensor, n_inputs: int, step: float) -> None:
    """Soft-threshold the weights of the first ``n_inputs`` inputs (those carrying W) of the ``members``
    (bool, (k,)) of ``first`` by ``step``, in place: w <- sign(w) max(|w| - step, 0).

    ``step`` is ``input_l1`` times the learning rate, so in Adam's units: Adam moves every weight by
    about one learning rate a step whatever the size of its gradient, so an image input whose gradient
    is noise (the moving adversary's, about a quarter of a step after Adam's averaging) random-walks
    away from 0 and carries the image; one whose gradient keeps one sign (the budget penalty asking
    for the image) still grows, by 1 - ``input_l1`` of a step.
    """
    idx = members.nonzero().flatten().to(first.weight.device)
    w = first.weight[idx, :n_inputs, :]
    first.weight[idx, :n_inputs, :] = torch.sign(w) * torch.relu(w.abs() - step)


def entropy_of_labels(s: np.ndarray, n_s: int) -> float:
    """Plug-in entropy H(S) of the labels ``s`` (nats)."""
    freq = np.bincount(np.asarray(s), minlength=n_s) / len(s)
    return float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum()) if len(s) else math.nan

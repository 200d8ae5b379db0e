"""The privacy-preserving VAE's training (chi-square paper §V-B): k copies of one pretrained VAE
(:class:`~privbench.learners.nn.sweep_vae.SweepVAE`), each fine-tuned with its own privacy weight
lambda (one member per budget) on::

    min_{theta, tau}  E[-log p(x | Y)] + gamma KL(q(Y | x) || N(0, I)) + lambda P(Y)

with Y ~ q(Y | x) the (reparameterised) latent code and the privacy term P:

=========  ==============================================================================
``none``   0: the VAE baseline (the members only train on the ELBO)
``gap``    -CE(Q; Y, S): minus the cross-entropy of an adversary Q(S | Y) with batch
           normalisation (:class:`~privbench.learners.nn.normed_adversary.NormedAdversary`),
           trained in alternation to minimise it (GAP's min-max with the log-loss adversary)
``gap-a``  the same with instance normalisation in the adversary (the paper's GAP-A)
``chi2``   max(sqrt(chi2_hat(Y; S)), sqrt(eta)): the chi-square paper's objective (25) with the
           eq (21) critic (:class:`~privbench.learners.nn.chi2.Critic`) maximised in alternation,
           on codes standardised by their batch statistics (detached, as the chi-square sanitizer)
=========  ==============================================================================
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .chi2 import Critic
from .core import ADVERSARY_CHECK_N, check_loss, generator, init_module, seeds, to_tensor
from .normed_adversary import NormedAdversary
from .sweep_vae import SweepVAE
from .vae import Autoencoder

PRIVACY_TERMS = ("none", "gap", "gap-a", "chi2")
ADVERSARY_NORM = {"gap": "batch", "gap-a": "instance"}


def standard(y: torch.Tensor) -> torch.Tensor:
    """Codes (k, n, d) standardised per member and dimension by their batch statistics (detached)."""
    return (y - y.detach().mean(1, keepdim=True)) / y.detach().std(1, keepdim=True).clamp_min(1e-6)


class PrivacyTerm:
    """The privacy term P of one sweep (module docstring): ``train_step`` updates its adversary or
    critic on detached codes, ``__call__`` gives P per member (k,) for the VAE's step."""

    def __init__(self, kind: str, k: int, d_z: int, n_s: int, p_s: torch.Tensor, hp: dict[str, Any],
                 gen: torch.Generator, device: torch.device) -> None:
        self.kind, self.p_s, self.steps = kind, p_s, int(hp["adv_steps"])
        self.floor = math.sqrt(max(float(hp["eta"]), 0.0))
        self.net: Any = None
        if kind in ADVERSARY_NORM:
            self.net = init_module(NormedAdversary(k, d_z, [hp["adv_hidden"]] * 2, n_s, ADVERSARY_NORM[kind]),
                                   gen).to(device)
            params = list(self.net.parameters())
        elif kind == "chi2":
            self.net = Critic(k, d_z, None, n_s, hp["adv_hidden"], 3, gen, device, torch.zeros(d_z, device=device),
                              torch.ones(d_z, device=device))
            params = list(self.net.net.parameters())
        self.opt = torch.optim.Adam(params, lr=hp["adv_lr"]) if self.net is not None else None

    def _value(self, y: torch.Tensor, s: torch.Tensor, shift: int) -> torch.Tensor:
        if self.kind == "chi2":
            return self.net.ratio(standard(y), s, self.p_s, shift)
        return self.net.cross_entropy(y, s)

    def train_step(self, y: torch.Tensor, s: torch.Tensor, shift: int, step: int) -> None:
        if self.opt is None:
            return
        for _ in range(self.steps):  # the adversary minimises its cross-entropy; the critic maximises (21)
            v = self._value(y.detach(), s, shift)
            check_loss(v, step, f"{self.kind} adversary objective")
            self.opt.zero_grad()
            (v.sum() if self.kind != "chi2" else -v.sum()).backward()
            self.opt.step()

    def __call__(self, y: torch.Tensor, s: torch.Tensor, shift: int) -> torch.Tensor:
        if self.net is None:
            return y.new_zeros(y.shape[0])
        v = self._value(y, s, shift)
        if self.kind == "chi2":
            return torch.clamp_min(torch.sqrt(v + 1e-12), self.floor)
        return -v

    @torch.no_grad()
    def check(self, y: torch.Tensor, s: torch.Tensor, h_s: float) -> list[dict[str, Any]]:
        """The final adversary's (critic's) reading on training rows, per member (``training_adversary``)."""
        k, m = y.shape[0], y.shape[1]
        if self.kind == "none":
            return [{"mi": None, "accuracy": None, "n": m, "note": "no adversary (the VAE baseline)"}] * k
        if self.kind == "chi2":
            r = self.net.ratio(standard(y), s, self.p_s, max(1, m // 2)).double().cpu().numpy()
            note = f"eq (21) with the final critic on the first {m} training rows' codes (fresh draws)"
            return [{"mi": None, "accuracy": None, "chi2": float(r[i]), "n": m, "note": note} for i in range(k)]
        ce = self.net.cross_entropy(y, s).double().cpu().numpy()
        acc = (self.net(y).argmax(-1) == s).double().mean(-1).cpu().numpy()
        note = (f"the final {ADVERSARY_NORM[self.kind]}-normalised adversary on the first {m} training rows' codes: "
                "accuracy, and H(S) - its cross-entropy (nats, a variational lower bound on I(S; Y))")
        return [{"mi": float(h_s - ce[i]), "accuracy": float(acc[i]), "n": m, "note": note} for i in range(k)]


def train_private_vaes(ae: Autoencoder, samples: Samples, task: Task, hp: dict[str, Any], lambdas: np.ndarray,
                       privacy: str, seed: int, device: torch.device
                       ) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
    """Fine-tune one copy of ``ae`` per privacy weight (a batched sweep); (tensors, info) per member.

    ``hp``: finetune_steps, batch_size, finetune_lr, gamma (KL weight), adv_hidden, adv_steps, adv_lr, eta.
    """
    k, n, n_s = len(lambdas), len(samples), int(task.n_s)  # type: ignore[arg-type]
    s_gen, s_batch, s_noise, s_check = seeds(seed, 4)
    vae = SweepVAE(ae, k, device)
    s_np = np.asarray(samples.s, dtype=np.int64)
    p_s = torch.as_tensor(np.bincount(s_np, minlength=n_s) / n, dtype=torch.float32, device=device)
    term = PrivacyTerm(privacy, k, vae.d_z, n_s, p_s, hp, generator(s_gen), device)
    xt = to_tensor(np.asarray(samples.u, dtype=float).reshape(n, -1), device)
    st = torch.as_tensor(s_np, device=device)
    lam = torch.as_tensor(lambdas, dtype=torch.float32, device=device)
    opt = torch.optim.Adam(vae.parameters(), lr=hp["finetune_lr"])
    rng, ngen = np.random.default_rng(s_batch), generator(s_noise, device)
    bs = min(int(hp["batch_size"]), n)
    last = {"rec": torch.zeros(k), "kl": torch.zeros(k), "privacy": torch.zeros(k)}
    for step in range(int(hp["finetune_steps"])):
        idx = torch.as_tensor(rng.integers(0, n, bs), device=device)
        shift = int(rng.integers(1, bs)) if bs > 1 else 0
        y, rec, kl = vae.elbo_terms(xt[idx], ngen)
        term.train_step(y, st[idx], shift, step)
        priv = term(y, st[idx], shift)
        loss = rec + hp["gamma"] * kl + lam * priv
        check_loss(loss, step, "private VAE objective")
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
        last = {"rec": rec.detach().cpu(), "kl": kl.detach().cpu(), "privacy": priv.detach().cpu()}
    m = min(n, ADVERSARY_CHECK_N)
    with torch.no_grad():
        y, _, _ = vae.elbo_terms(xt[:m], generator(s_check, device))
    prior = np.bincount(s_np, minlength=n_s) / n
    h_s = float(-(prior[prior > 0] * np.log(prior[prior > 0])).sum())
    checks = term.check(y, st[:m], h_s)
    out = []
    for i in range(k):
        info = {"privacy_term": privacy, "privacy_weight": float(lambdas[i]), "finetune_steps": int(hp["finetune_steps"]),
                "final_reconstruction": float(last["rec"][i]), "final_kl": float(last["kl"][i]),
                "final_privacy_term": float(last["privacy"][i]), "training_adversary": checks[i]}
        out.append((vae.member(i), info))
    return out

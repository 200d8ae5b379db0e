"""The generative filter's training sets, R at once (a case's repetitions, :meth:`Learner.fit_many`).

Each set has its own frozen VAE (posteriors mu, var, its decoder), S features, U and S; with k
budgets the sweep has K = R k members, set r's members r k .. r k + k - 1.  :meth:`FilterSets.draw`
draws one step's rows and noises for every set from that set's own generators, in the order its
own fit draws them, so each set's members are fed exactly as in a fit of that set alone; with one
set everything is shaped as the single fit always was (:mod:`privbench.learners.latent_filter`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from .core import generator, init_module
from .sweep import SweepMLP, mlp_forward
from .utility import UtilityHeads


class FilterSets:
    """Stacked per-set tensors of :func:`~privbench.learners.nn.latent_game.latent_tensors`.

    Parameters
    ----------
    parts : list of (mu, var, ft, ut, st, dec)
        One per set, as ``latent_tensors`` returns them (same n, same shapes).
    cfgs : list of dict
        Each set's autoencoder config (``output``, ``u_mean``, ``u_std``).
    k : int
        Budgets (members per set).
    """

    def __init__(self, parts: list[tuple[Any, ...]], cfgs: list[dict[str, Any]], k: int) -> None:
        self.r, self.k = len(parts), k
        self.mu, self.var, self.ft, self.ut, self.st = (torch.stack([p[j] for p in parts]) for j in range(5))
        self.n, self.d_z = self.mu.shape[1], self.mu.shape[2]
        self.rows_r = torch.arange(self.r, device=self.mu.device)[:, None]
        if self.r == 1:
            self.dec, self.cfg = parts[0][5], cfgs[0]
        else:  # one decoder per set: weights (R, in, out), biases (R, 1, out), applied as a batched matmul
            self.dec = {key: torch.stack([p[5][key] for p in parts]) for key in parts[0][5]}
            self.dec = {key: v.unsqueeze(1) if key.endswith(".bias") else v for key, v in self.dec.items()}
            per_set = {name: torch.as_tensor(np.array([c[name] for c in cfgs]), dtype=torch.float32,
                                             device=self.mu.device) for name in ("u_std", "u_mean")}
            self.cfg = {"output": cfgs[0]["output"], **{name: self.members(v.unsqueeze(1)) for name, v in per_set.items()}}

    def members(self, x: torch.Tensor) -> torch.Tensor:
        """Per-set x (R, ...) repeated for each set's k members: (R k, ...)."""
        return x.unsqueeze(1).expand(self.r, self.k, *x.shape[1:]).reshape(self.r * self.k, *x.shape[1:])

    def rows(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """Rows ``idx`` (R, b) of per-set x (R, n, ...), for each member: (R k, b, ...)."""
        return self.members(x[self.rows_r, idx])

    def draw(self, rngs: Sequence[np.random.Generator], ngens: Sequence[torch.Generator], bs: int, d_n: int,
             sample_posterior: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step's rows idx (R, bs), posterior draws z (R k, bs, d_z) and filter inputs [w; y] (R k, bs, d_n + d_f)."""
        dev = self.mu.device
        idx, zs, noises = [], [], []
        for r in range(self.r):
            i = torch.as_tensor(rngs[r].integers(0, self.n, bs), device=dev)
            zs.append(self.mu[r][i] + (self.var[r][i].sqrt() * torch.randn(bs, self.d_z, generator=ngens[r], device=dev)
                                       if sample_posterior else 0.0))
            noises.append(torch.randn(self.k, bs, d_n, generator=ngens[r], device=dev))
            idx.append(i)
        index = torch.stack(idx)
        return index, self.members(torch.stack(zs)), torch.cat([torch.cat(noises), self.rows(self.ft, index)], -1)

    def decode(self, zt: torch.Tensor) -> torch.Tensor:
        """Each member's set's decoder on its z~ (R k, b, d_z): logits or standardised outputs (R k, b, d_u)."""
        if self.r == 1:
            return mlp_forward(self.dec, "dec", zt, "elu")
        kk, b, d = zt.shape
        return mlp_forward(self.dec, "dec", zt.reshape(self.r, self.k * b, d), "elu").reshape(kk, b, -1)


def stacked(modules: Sequence[nn.Module], into: nn.Module) -> nn.Module:
    """``into`` (a sweep of R k members) with the parameters of ``modules`` (R sweeps of k) concatenated."""
    with torch.no_grad():
        for big, parts in zip(into.parameters(), zip(*(list(m.parameters()) for m in modules))):
            big.copy_(torch.cat([p.to(big) for p in parts], 0))
    return into


def member_block(big: nn.Module, into: nn.Module, r: int, k: int) -> nn.Module:
    """``into`` (a sweep of k) with members r k .. r k + k - 1 of ``big``."""
    with torch.no_grad():
        for p, q in zip(into.parameters(), big.parameters()):
            p.copy_(q[r * k:(r + 1) * k])
    return into


def start_sweep(hp: dict[str, Any], task: Any, k: int, dims: tuple[int, int, int], n_out: int, g_seeds: list[int],
                utility: bool, device: torch.device) -> tuple[torch.Tensor, SweepMLP, UtilityHeads | None]:
    """Each set's initial filters, adversary and utility classifiers (``utility``) drawn from its own generator
    in its own fit's order, stacked: gamma (R k, d_z, d_n + d_f), the adversary, nu (or None)."""
    d_z, d_n, d_f = dims
    gammas, advs, nus = [], [], []
    for g_seed in g_seeds:
        gen = generator(g_seed)
        gammas.append(0.01 * torch.randn(k, d_z, d_n + d_f, generator=gen))
        advs.append(init_module(SweepMLP(k, [d_z, hp["adv_hidden"], n_out], "elu"), gen))
        if utility:
            nus.append(UtilityHeads(k, d_z, task.utility_classes, hp["adv_hidden"], 2, "elu", gen, device))
    big = len(g_seeds) * k
    adv = stacked(advs, SweepMLP(big, [d_z, hp["adv_hidden"], n_out], "elu")).to(device)
    nu = None
    if nus:
        nu = nus[0] if len(nus) == 1 else UtilityHeads(big, d_z, task.utility_classes, hp["adv_hidden"], 2, "elu",
                                                       generator(0), device)
        stacked([h.net for h in nus], nu.net)
    return torch.cat(gammas).to(device).requires_grad_(True), adv, nu

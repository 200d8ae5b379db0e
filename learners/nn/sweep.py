"""Sweep-batched layers (one network per budget, trained as one) and the plain-tensor MLPs
that a fitted mechanism stores (one member of a sweep).
"""

from __future__ import annotations

import copy
import math
from typing import Sequence

import numpy as np
import torch
from torch import nn

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "elu": torch.nn.functional.elu,
               "leaky_relu": torch.nn.functional.leaky_relu}


class SweepLinear(nn.Module):
    """``k`` independent Linear layers applied as one batched matmul.

    Input (k, n, in) -> output (k, n, out).  Weight (k, in, out), bias (k, 1, out).
    """

    def __init__(self, k: int, d_in: int, d_out: int) -> None:
        super().__init__()
        self.k, self.d_in, self.d_out = k, d_in, d_out
        self.weight = nn.Parameter(torch.empty(k, d_in, d_out))
        self.bias = nn.Parameter(torch.empty(k, 1, d_out))

    @torch.no_grad()
    def reset_parameters(self, gen: torch.Generator) -> None:
        bound = 1.0 / math.sqrt(max(self.d_in, 1))
        self.weight.uniform_(-bound, bound, generator=gen)
        self.bias.uniform_(-bound, bound, generator=gen)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class SweepMLP(nn.Module):
    """``k`` MLPs with the same layer sizes, batched: (k, n, sizes[0]) -> (k, n, sizes[-1])."""

    def __init__(self, k: int, sizes: Sequence[int], activation: str = "relu") -> None:
        super().__init__()
        act = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}[activation]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(SweepLinear(k, a, b))
            if i < len(sizes) - 2:
                layers.append(act())
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


@torch.no_grad()
def init_members(module: nn.Module, gens: Sequence[torch.Generator]) -> None:
    """PyTorch's default Linear init, member ``i`` of every SweepLinear drawn from ``gens[i]``."""
    for m in module.modules():
        if isinstance(m, SweepLinear):
            bound = 1.0 / math.sqrt(max(m.d_in, 1))
            for i, g in enumerate(gens):
                m.weight[i].uniform_(-bound, bound, generator=g)
                m.bias[i].uniform_(-bound, bound, generator=g)


def stack_sweeps(mlps: Sequence[SweepMLP]) -> SweepMLP:
    """One SweepMLP whose members are those of ``mlps`` in order (same layer sizes and activation); the
    first itself when there is one."""
    if len(mlps) == 1:
        return mlps[0]
    out = copy.deepcopy(mlps[0])
    with torch.no_grad():
        for j, layer in enumerate(out.net):
            if isinstance(layer, SweepLinear):
                layer.weight = nn.Parameter(torch.cat([m.net[j].weight for m in mlps]))
                layer.bias = nn.Parameter(torch.cat([m.net[j].bias for m in mlps]))
                layer.k = layer.weight.shape[0]
    return out


def sweep_slice(mlp: SweepMLP, i: int, prefix: str) -> dict[str, torch.Tensor]:
    """Layer ``i`` of a SweepMLP as plain tensors ``{prefix}.{j}.weight`` (in, out), ``.bias`` (out,)."""
    out: dict[str, torch.Tensor] = {}
    j = 0
    for layer in mlp.net:
        if hasattr(layer, "weight"):
            out[f"{prefix}.{j}.weight"] = layer.weight[i].detach().cpu().float().clone()
            out[f"{prefix}.{j}.bias"] = layer.bias[i, 0].detach().cpu().float().clone()
            j += 1
    return out


def mlp_forward(tensors: dict[str, torch.Tensor], prefix: str, x: torch.Tensor, activation: str) -> torch.Tensor:
    """Apply the plain MLP stored under ``prefix`` to x of shape (..., in), in x's dtype."""
    j = 0
    act = ACTIVATIONS[activation]
    while f"{prefix}.{j}.weight" in tensors:
        x = x @ tensors[f"{prefix}.{j}.weight"].to(x.dtype) + tensors[f"{prefix}.{j}.bias"].to(x.dtype)
        j += 1
        if f"{prefix}.{j}.weight" in tensors:
            x = act(x)
    return x


def label_features(s: np.ndarray, n_s: int) -> np.ndarray:
    """One-hot rows, shape (n, n_s), for labels s of shape (n,)."""
    out = np.zeros((len(s), n_s))
    out[np.arange(len(s)), np.asarray(s, dtype=np.int64)] = 1.0
    return out

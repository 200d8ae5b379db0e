"""GAP's adversary for the privacy-preserving VAE (chi-square paper §V-B): a sweep of MLPs
Q(S | Y) on the latent code with a normalisation after every hidden layer.

The chi-square paper's GAP row trains its adversary with batch normalisation (the same
architecture as its attack model); its GAP-A row replaces it with instance normalisation
("If we replace the batch normalization with instance normalization for the adversary model in
GAP (whose results are shown in GAP-A) ...", §V-B 3).  For a hidden activation h of shape
(k, n, d) (k sweep members, n rows, d units):

==========  ==================================================================
``batch``   each unit standardised over the batch: (h - mean_n h) / sqrt(var_n h + eps)
``instance`` each row standardised over its units: (h - mean_d h) / sqrt(var_d h + eps)
``none``    h unchanged
==========  ==================================================================

variances biased (divide by the count), eps = 1e-5 (torch's BatchNorm / InstanceNorm defaults),
no affine parameters: the next linear layer can rescale.  Batch normalisation always uses the
batch's statistics (the adversary is only ever evaluated on training batches).
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from .sweep import ACTIVATIONS, SweepLinear

NORMS = ("batch", "instance", "none")
EPS = 1e-5


def normalise(h: torch.Tensor, kind: str) -> torch.Tensor:
    """``h`` of shape (k, n, d) normalised per :data:`NORMS` (module docstring)."""
    if kind == "none":
        return h
    dim = 1 if kind == "batch" else 2
    centred = h - h.mean(dim, keepdim=True)
    # the biased variance as the mean of squares of the centred values: the same number as torch.var's
    # (to float32 rounding), 10x faster on the CPU, where var over a non-last dimension is a slow strided reduction
    var = (centred * centred).mean(dim, keepdim=True)
    return centred / torch.sqrt(var + EPS)


class NormedAdversary(nn.Module):
    """k adversaries (k, n, d_in) -> logits (k, n, n_s): Linear, norm, activation per hidden layer."""

    def __init__(self, k: int, d_in: int, hidden: Sequence[int], n_out: int, norm: str,
                 activation: str = "relu") -> None:
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm={norm!r} is unknown (allowed: {', '.join(NORMS)})")
        sizes = [d_in, *hidden, n_out]
        self.layers = nn.ModuleList(SweepLinear(k, a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.norm, self.act = norm, ACTIVATIONS[activation]

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        h = y
        for layer in self.layers[:-1]:
            h = self.act(normalise(layer(h), self.norm))
        return self.layers[-1](h)

    def cross_entropy(self, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        """Batch-mean cross-entropy of the labels s (n,) under each member: shape (k,)."""
        logits = self(y)
        k, m, c = logits.shape
        ce = nn.functional.cross_entropy(logits.reshape(-1, c), s.expand(k, -1).reshape(-1), reduction="none")
        return ce.view(k, m).mean(-1)

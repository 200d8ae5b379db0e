"""PPAN's adversaries for a continuous release, batched over a budget sweep: networks Q(S | Z),
their log-likelihood, and the running whitener of their input.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from .sweep import SweepLinear, SweepMLP


class Adversary(nn.Module):
    """k adversaries (k, n, d_u) -> (k, n, n_out): an MLP plus a linear skip (``skip``), so
    that a linear posterior (exact for jointly Gaussian S, Z) is representable exactly."""

    def __init__(self, k: int, d_u: int, hidden: Sequence[int], n_out: int, activation: str = "relu",
                 skip: bool = True) -> None:
        super().__init__()
        self.mlp = SweepMLP(k, [d_u, *hidden, n_out], activation)
        self.skip = SweepLinear(k, d_u, n_out) if skip and hidden else None

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        out = self.mlp(z)
        return out if self.skip is None else out + self.skip(z)


def build_adversary(k: int, d_u: int, hidden: Sequence[int], n_out: int, activation: str = "relu",
                    skip: bool = True) -> Adversary:
    """Adversary networks (k, n, d_u) -> (k, n, n_out): Gaussian (mean, log-variance) or logits."""
    return Adversary(k, d_u, hidden, n_out, activation, skip)


def adversary_outputs(d_s: int, n_mix: int = 1) -> int:
    """Output width of a continuous-S adversary: 2 d_s (Gaussian), n_mix (1 + 2 d_s) (mixture)."""
    return 2 * d_s if n_mix == 1 else n_mix * (1 + 2 * d_s)


def log_q(out: torch.Tensor, s: torch.Tensor, discrete: bool, n_mix: int = 1) -> torch.Tensor:
    """Adversary log-likelihood log Q(s | z) per row, (k, n).

    ``out`` (k, n, n_out); ``s`` (n,) labels (discrete) or (n, d_s) standardised values, or per
    member (k, n) / (k, n, d_s).
    Continuous S, ``n_mix`` = 1: Gaussian with mean out[..., :d_s] and log-variance
    out[..., d_s:] (PPAN §III-B); ``n_mix`` > 1: a mixture of n_mix diagonal Gaussians
    (logit, mean, log-variance per component), which also fits non-Gaussian posteriors.
    The constant -d_s/2 log 2 pi is dropped.
    """
    if discrete:
        logp = torch.log_softmax(out, dim=-1)
        idx = s[..., None] if s.dim() == 2 else s.view(1, -1, 1).expand(out.shape[0], -1, 1)
        return torch.gather(logp, 2, idx)[..., 0]
    d_s = s.shape[-1]
    if n_mix == 1:
        mean, logvar = out[..., :d_s], out[..., d_s:].clamp(-12.0, 12.0)
        return -0.5 * (((s - mean) ** 2) * torch.exp(-logvar) + logvar).sum(-1)
    o = out.reshape(*out.shape[:2], n_mix, 1 + 2 * d_s)
    mean, logvar = o[..., 1:1 + d_s], o[..., 1 + d_s:].clamp(-12.0, 12.0)
    s4 = s[:, :, None, :] if s.dim() == 3 else s[None, :, None, :]
    comp = -0.5 * (((s4 - mean) ** 2) * torch.exp(-logvar) + logvar).sum(-1)
    return torch.logsumexp(torch.log_softmax(o[..., 0], dim=-1) + comp, dim=-1)


class Whitener:
    """Running mean and covariance of each member's release (momentum 0.1); whitens the
    adversary's input so that it reads a release at any scale (MI is invariant to
    invertible linear maps of Z, a fixed-scale input is not): a mechanism that shrinks a
    component towards 0 with even less noise is still seen leaking."""

    def __init__(self, k: int, u_var: "float | torch.Tensor", momentum: float = 0.1) -> None:
        self.k, self.momentum = k, momentum
        self.ridge = 1e-6 * u_var  # a number, or per member (k, 1, 1)
        self.mean: torch.Tensor | None = None
        self.cov: torch.Tensor | None = None
        self.W: torch.Tensor | None = None

    @torch.no_grad()
    def update(self, z: torch.Tensor, weights: torch.Tensor | None) -> None:
        if weights is None:
            weights = torch.full(z.shape[:2], 1.0 / z.shape[1], device=z.device, dtype=z.dtype)
        else:
            weights = weights / weights.sum(1, keepdim=True)
        mean = (weights[..., None] * z).sum(1)
        zc = z - mean[:, None]
        cov = torch.bmm((weights[..., None] * zc).transpose(1, 2), zc)
        if self.mean is None:
            self.mean, self.cov = mean, cov
        else:
            self.mean = torch.lerp(self.mean, mean, self.momentum)
            self.cov = torch.lerp(self.cov, cov, self.momentum)
        eye = torch.eye(z.shape[-1], device=z.device, dtype=z.dtype)
        chol, bad = torch.linalg.cholesky_ex(self.cov + self.ridge * eye)
        if bool(bad.any()):  # not positive definite (e.g. NaN): per-component scales only
            ridge = self.ridge[:, 0] if isinstance(self.ridge, torch.Tensor) else self.ridge
            diag = torch.diagonal(self.cov, dim1=1, dim2=2).clamp_min(0) + ridge
            chol = torch.diag_embed(torch.sqrt(diag))
        self.W = torch.linalg.solve_triangular(chol, eye.expand_as(chol), upper=False).transpose(1, 2)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        assert self.mean is not None and self.W is not None
        return torch.bmm(z - self.mean[:, None], self.W)

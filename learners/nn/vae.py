"""The generative filter's building blocks: Gaussian divergences between latent posteriors and
the frozen VAE (plain-tensor encoder and decoder).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
from torch import nn

from .sweep import mlp_forward


def gaussian_divergence(kind: str, var: torch.Tensor, shift: torch.Tensor, gamma_w: torch.Tensor) -> torch.Tensor:
    """D(N(m + shift, diag var + G G^T) || N(m, diag var)) for each sample.

    Parameters
    ----------
    kind : {"kl", "chi2", "mahalanobis"}
    var : Tensor, shape (..., n, d) posterior variances.
    shift : Tensor, shape (..., n, d) mean shifts Gamma_y y.
    gamma_w : Tensor, shape (..., d, m) noise matrix Gamma_w (broadcast over samples).

    Returns
    -------
    Tensor, shape (..., n).  ``chi2`` is the standard chi-square (f(t) = (t-1)^2),
    with a steep finite barrier where it is infinite (2 var - G G^T not > 0).
    """
    inv_sd = var.clamp_min(1e-12).rsqrt()
    dw = shift * inv_sd                                    # whitened mean shift
    m = inv_sd.unsqueeze(-1) * gamma_w.unsqueeze(-3)       # (..., n, d, m): Sigma^-1/2 Gamma_w
    fro = (m ** 2).sum((-1, -2))
    maha = (dw ** 2).sum(-1)
    if kind == "mahalanobis":
        return maha + fro
    eye_m = torch.eye(m.shape[-1], dtype=m.dtype, device=m.device)
    logdet_plus = 2 * torch.log(torch.diagonal(torch.linalg.cholesky(eye_m + m.transpose(-1, -2) @ m), 0, -2, -1)).sum(-1)
    if kind == "kl":
        return 0.5 * (maha + fro - logdet_plus)
    a = m @ m.transpose(-1, -2)                            # (..., n, d, d)
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    lam_max = torch.linalg.eigvalsh(a)[..., -1]
    eps = 1e-3
    feasible = lam_max < 1 - eps
    b = eye - torch.where(feasible[..., None, None], a, torch.zeros_like(a))
    chol = torch.linalg.cholesky(b)
    logdet_minus = 2 * torch.log(torch.diagonal(chol, 0, -2, -1)).sum(-1)
    quad = (torch.cholesky_solve(dw.unsqueeze(-1), chol).squeeze(-1) * dw).sum(-1)
    log1p_chi2 = quad - 0.5 * logdet_plus - 0.5 * logdet_minus
    barrier = 30.0 + 1e3 * (lam_max - (1 - eps)) + maha
    log1p_chi2 = torch.where(feasible, log1p_chi2, barrier)
    capped = log1p_chi2.clamp(max=30.0)
    return torch.expm1(capped) * (1.0 + torch.relu(log1p_chi2 - 30.0))


def elu_mlp(sizes: Sequence[int]) -> nn.Sequential:
    """nn.Linear layers of ``sizes`` with ELU between them."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ELU())
    return nn.Sequential(*layers)


def plain_tensors(seq: nn.Sequential, prefix: str) -> dict[str, torch.Tensor]:
    """nn.Linear layers as plain tensors in mlp_forward's layout (weight (in, out))."""
    out: dict[str, torch.Tensor] = {}
    for j, lin in enumerate(m for m in seq if isinstance(m, nn.Linear)):
        out[f"{prefix}.{j}.weight"] = lin.weight.detach().t().contiguous().cpu().float()
        out[f"{prefix}.{j}.bias"] = lin.bias.detach().cpu().float().clone()
    return out


@dataclass
class Autoencoder:
    """A trained, frozen VAE: encoder u -> (mu, log var), decoder z -> U-space.

    Attributes
    ----------
    config : dict
        d_u, latent_dim, output ("sigmoid" for images, "linear" otherwise), u_mean,
        u_std (d_u,) (standardisation of linear outputs), kind.
    tensors : dict of str -> Tensor
        ``enc.{j}.*`` and ``dec.{j}.*`` plain MLP layers (:func:`mlp_forward` layout).
    info : dict
        Training facts (steps, final loss).
    """

    config: dict[str, Any]
    tensors: dict[str, torch.Tensor]
    info: dict[str, Any]

    def _scale(self, u: torch.Tensor) -> torch.Tensor:
        if self.config["output"] == "sigmoid":
            return u
        return (u - torch.as_tensor(self.config["u_mean"], dtype=u.dtype)) / torch.as_tensor(self.config["u_std"], dtype=u.dtype)

    def encode(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu, log var), each (n, latent_dim), float64, for U of shape (n, d_u)."""
        h = mlp_forward(self.tensors, "enc", self._scale(u.double()), "elu")
        d = self.config["latent_dim"]
        return h[:, :d], h[:, d:].clamp(-12.0, 8.0)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """U-space release for latents z of shape (n, latent_dim), float64."""
        x = mlp_forward(self.tensors, "dec", z.double(), "elu")
        if self.config["output"] == "sigmoid":
            return torch.sigmoid(x)
        return x * torch.as_tensor(self.config["u_std"], dtype=x.dtype) + torch.as_tensor(self.config["u_mean"], dtype=x.dtype)

"""The generative filter's building blocks: Gaussian divergences between latent posteriors, and
the VAE (trained by :func:`train_autoencoder`, frozen as plain-tensor encoder and decoder).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .core import check_loss, generator, init_module, seeds, to_tensor
from .flat_adam import adam
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


def train_autoencoder(samples: Samples, task: Task, hp: dict[str, Any], seed: int, device: torch.device
                      ) -> Autoencoder:
    """Step 1 of the generative filter: a VAE on U (eq 3 / eq 14), frozen into an :class:`Autoencoder`."""
    u = np.asarray(samples.u, dtype=float).reshape(len(samples), -1)
    image = task.kind == "image"
    d_u = task.d_u
    d_z = int(hp["latent_dim"]) if image else int(min(hp["latent_dim"], d_u))  # type: ignore[type-var]
    # a column constant in training (a rare one-hot category) keeps scale 1: a floor of 1e-9 turned a held-out
    # 1 in it into 1e9 (UCI-Adult with 300 training rows: releases of 1e6, distortion 7e10)
    u_std = np.where(u.std(0) > 1e-6, u.std(0), 1.0)
    config: dict[str, Any] = {"kind": task.kind, "d_u": d_u, "latent_dim": d_z,
                              "output": "sigmoid" if image else "linear",
                              "u_mean": u.mean(0).tolist(), "u_std": u_std.tolist()}
    g_seed, r_seed, n_seed = seeds(seed, 3)
    gen, rng, ngen = generator(g_seed), np.random.default_rng(r_seed), generator(n_seed, device)
    enc = init_module(elu_mlp([d_u, hp["hidden"], hp["hidden"], 2 * d_z]), gen).to(device)
    dec = init_module(elu_mlp([d_z, hp["hidden"], hp["hidden"], d_u]), gen).to(device)
    x_all = to_tensor(u if image else (u - u.mean(0)) / u_std, device)
    opt = adam(list(enc.parameters()) + list(dec.parameters()), hp["lr"])
    bs = min(hp["batch_size"], len(u))
    loss = torch.zeros(())
    for step in range(hp["vae_steps"]):
        x = x_all[torch.as_tensor(rng.integers(0, len(u), bs), device=device)]
        h = enc(x)
        mu, logvar = h[:, :d_z], h[:, d_z:].clamp(-12.0, 8.0)
        z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=ngen, device=device)
        out = dec(z)
        if image:  # Bernoulli likelihood: per-pixel cross-entropy, summed (eq 3)
            rec = nn.functional.binary_cross_entropy_with_logits(out, x, reduction="none").sum(-1)
        else:      # unit-variance Gaussian on standardised U (eq 12 with l2)
            rec = 0.5 * ((out - x) ** 2).sum(-1)
        kl = 0.5 * (mu ** 2 + logvar.exp() - 1.0 - logvar).sum(-1)
        loss = (rec + hp["gamma"] * kl).mean()
        if hp["kappa"] > 0:  # eq (14): decoder gradient penalty on r_alpha
            alpha = torch.rand(bs, 1, generator=ngen, device=device)
            zr = (alpha * torch.randn(z.shape, generator=ngen, device=device) + (1 - alpha) * z.detach())
            zr.requires_grad_(True)
            dz = dec(zr)
            grad = torch.autograd.grad((torch.sigmoid(dz) if image else dz).sum(), zr, create_graph=True)[0]
            loss = loss + hp["kappa"] * (torch.relu(grad.norm(dim=-1) - hp["lipschitz"]) ** 2).mean()
        check_loss(loss, step, "VAE loss (step 1)")
        opt.zero_grad()
        loss.backward()
        opt.step()
    tensors = {**plain_tensors(enc, "enc"), **plain_tensors(dec, "dec")}
    return Autoencoder(config, tensors, {"vae_steps": hp["vae_steps"], "vae_loss": float(loss.detach())})

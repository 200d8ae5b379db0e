"""The variational fair autoencoder's training (Louizos, Swersky, Li, Welling & Zemel, ICLR 2016).

Model (the unsupervised VFAE, their §2.1 and §2.3; a privbench task has no utility
label, so there is no q(y | z1) head and no z2 level)::

    q(z1 | x, s) = N(mu(x, s), diag sigma^2(x, s))     encoder (s: one-hot, only with W = (S, U) and encode_s)
    p(x | z1, s) = N(dec(z1, s), I)                    decoder (always conditioned on the true s)
    p(z1)        = N(0, I)

minimising per batch the negative ELBO plus ``beta`` times the maximum mean
discrepancy between the codes of the S groups::

    L = E[ ||x - dec(z1, s)||^2 / 2 ] + E[ KL(q(z1 | x, s) || N(0, I)) ] + beta * sum_{k<l} MMD^2(z1 | s=k, z1 | s=l)

MMD^2 is the biased batch estimate with a sum of Gaussian kernels
exp(-||a - b||^2 / (2 d h^2)) over the bandwidths :data:`BANDWIDTHS`, on codes
standardised per dimension over the batch (the standard deviation not
differentiated), d their dimension.  Standardising matters: an attacker
rescales its inputs, so offsets between the groups far below a fixed kernel
bandwidth (codes collapsed towards 0 by the KL term) would hide from an
unscaled MMD and not from the attacker.  The MMD is taken on the codes the
mechanism releases: the posterior means (``hp["mmd_on"] == "mean"``) or draws
z1 ~ q (``"sample"``); on draws alone, the means can still separate the groups
by less than the posterior spread, and a released mean then carries S.
Measured on abalone (3-class S, raw-data fresh-classifier accuracy 0.57), with
the encoder seeing S: kernels on unscaled draws, beta = 100: 0.95; on unscaled
means, beta = 10: 0.84; on standardised means, beta = 100: 0.68; with the
encoder not seeing S (``encode_s`` False, the learner's default), beta = 100: 0.51.
One member per beta, trained batched (SweepMLP).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .core import check_loss, generator, seeds, to_tensor
from .flat_adam import adam
from .sweep import SweepMLP, init_members, label_features, sweep_slice

BANDWIDTHS = (0.5, 1.0, 2.0, 4.0)


def mmd_groups(z: torch.Tensor, onehot: torch.Tensor) -> torch.Tensor:
    """Sum over pairs of S groups of the biased MMD^2 between their codes.

    Parameters
    ----------
    z : Tensor, shape (k, n, d)  codes of k members.
    onehot : Tensor, shape (n, n_s)  the rows' S; a group absent from the batch adds nothing.

    Returns
    -------
    Tensor, shape (k,).
    """
    sd = z.detach().std(dim=1, keepdim=True).clamp_min(1e-6)          # (k, 1, d): per member and dimension
    z = (z - z.mean(dim=1, keepdim=True)) / sd
    d2 = torch.cdist(z, z).pow(2)                                   # (k, n, n)
    scale = 2.0 * z.shape[-1]                                       # E||a - b||^2 of standardised codes
    kern = sum(torch.exp(-d2 / (scale * h * h)) for h in BANDWIDTHS)
    counts = onehot.sum(0)
    present = [j for j in range(onehot.shape[1]) if float(counts[j]) > 0]
    total = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
    for a_i, a in enumerate(present):
        for b in present[a_i + 1:]:
            w = onehot[:, a] / counts[a] - onehot[:, b] / counts[b]   # (n,): +1/n_a on group a, -1/n_b on b
            total = total + torch.einsum("i,kij,j->k", w, kern, w)
    return total


def train_vfae(samples: Samples, task: Task, hp: dict[str, Any], betas: np.ndarray, seed: int,
               device: torch.device) -> tuple[list[dict[str, torch.Tensor]], dict[str, Any]]:
    """Train one VFAE per beta (batched).

    Parameters
    ----------
    hp : dict with latent_dim, hidden, steps, batch_size, lr, kl_weight, mmd_on ("mean" or "sample"),
        encode_s (whether the encoder sees S where W = (S, U)).
    betas : ndarray, shape (k,)  MMD weights.

    Returns
    -------
    (per-member plain tensors ``enc.*`` and ``dec.*``, info with the final batch losses per member).
    """
    n, k, d_u, n_s = len(samples), len(betas), task.d_u, task.n_s
    d_z, full = hp["latent_dim"], task.observation == "full" and hp["encode_s"]
    u = to_tensor(np.asarray(samples.u, dtype=float).reshape(n, -1), device)
    s1 = to_tensor(label_features(np.asarray(samples.s, dtype=np.int64), n_s), device)
    enc_in = torch.cat([u, s1], 1) if full else u
    enc = SweepMLP(k, [enc_in.shape[1], hp["hidden"], hp["hidden"], 2 * d_z], "elu")
    dec = SweepMLP(k, [d_z + n_s, hp["hidden"], hp["hidden"], d_u], "elu")
    s_init, s_batch, s_noise = seeds(seed, 3)
    init_members(enc, [generator(s_init) for _ in range(k)])  # every beta starts from the same networks
    init_members(dec, [generator(s_init ^ 1) for _ in range(k)])  # on the CPU, then moved: same on every device
    enc, dec = enc.to(device), dec.to(device)
    opt = adam(list(enc.parameters()) + list(dec.parameters()), hp["lr"])
    rng, gen = np.random.default_rng(s_batch), generator(s_noise, device)
    beta = torch.as_tensor(betas, dtype=torch.float32, device=device)
    bs = min(hp["batch_size"], n)
    last = {"recon": [0.0] * k, "kl": [0.0] * k, "mmd": [0.0] * k}
    for step in range(hp["steps"]):
        idx = torch.as_tensor(rng.integers(0, n, bs), device=device)
        h = enc(enc_in[idx].expand(k, -1, -1))
        mu, logvar = h[..., :d_z], h[..., d_z:].clamp(-12.0, 8.0)
        z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen, device=device)
        xh = dec(torch.cat([z, s1[idx].expand(k, -1, -1)], -1))
        recon = 0.5 * ((xh - u[idx]) ** 2).sum(-1).mean(-1)
        kl = 0.5 * (mu ** 2 + logvar.exp() - 1.0 - logvar).sum(-1).mean(-1)
        mmd = mmd_groups(z if hp["mmd_on"] == "sample" else mu, s1[idx])
        loss = recon + hp["kl_weight"] * kl + beta * mmd
        check_loss(loss, step, "VFAE objective")
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
        if step == hp["steps"] - 1:
            last = {"recon": recon.tolist(), "kl": kl.tolist(), "mmd": mmd.tolist()}
    members = [{**sweep_slice(enc, i, "enc"), **sweep_slice(dec, i, "dec")} for i in range(k)]
    return members, last

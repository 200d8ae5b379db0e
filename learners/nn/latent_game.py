"""The generative filter's adversarial game in latent space, batched over a budget sweep: the
filters' divergence, the adversary's and the utility losses, the projection onto the budget
and the final adversary's score (see :mod:`privbench.learners.latent_filter`).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from privbench.datasets.samples import Samples

from .core import ADVERSARY_CHECK_N, to_tensor
from .sweep import SweepMLP
from .vae import Autoencoder, gaussian_divergence


def latent_tensors(ae: Autoencoder, samples: Samples, feats: np.ndarray, label: bool, device: torch.device
                   ) -> tuple[torch.Tensor, ...]:
    """(mu, var) of the VAE posteriors (n, d_z), S features (n, d_f), U (n, d_u), S (labels or standardised)
    and the decoder's tensors, on ``device``."""
    n = len(samples)
    u64 = torch.as_tensor(np.asarray(samples.u, dtype=float).reshape(n, -1))
    with torch.no_grad():
        mu64, logvar64 = ae.encode(u64)
    mu, var = mu64.float().to(device), logvar64.exp().float().to(device)
    ft = to_tensor(feats, device)
    ut = u64.float().to(device)
    if label:
        st = torch.as_tensor(np.asarray(samples.s, dtype=np.int64), device=device)
    else:
        sa = np.asarray(samples.s, dtype=float).reshape(n, -1)
        st = to_tensor((sa - sa.mean(0)) / np.maximum(sa.std(0), 1e-9), device)
    dec = {key: v.to(device) for key, v in ae.tensors.items() if key.startswith("dec.")}
    return mu, var, ft, ut, st, dec


def filter_divergence(kind: str, g: torch.Tensor, var_b: torch.Tensor, f_b: torch.Tensor, d_n: int,
                      d_f: int) -> torch.Tensor:
    """Mean divergence per filter, (k,): filters g (k, d_z, d_n + d_f) on posteriors var_b, features f_b."""
    k = g.shape[0]
    shift = f_b @ g[:, :, d_n:].transpose(1, 2) if d_f else torch.zeros_like(var_b).expand(k, -1, -1)
    return gaussian_divergence(kind, var_b.expand(k, -1, -1), shift,
                               g[:, :, :d_n]).mean(-1)


def adversary_loss(logits: torch.Tensor, s: torch.Tensor, label: bool, n_out: int) -> torch.Tensor:
    """Per filter (k,): cross-entropy for a label S, squared error for a continuous S (s shared by the
    filters, or one row block per filter: labels (k, b), continuous (k, b, d_s))."""
    k = logits.shape[0]
    if label:
        y = s.reshape(-1) if s.dim() == 2 else s.repeat(k)  # per-member labels (k, b), or shared (b,)
        return nn.functional.cross_entropy(logits.reshape(-1, n_out), y,
                                           reduction="none").view(k, -1).mean(-1)
    return ((logits - s) ** 2).sum(-1).mean(-1)


def utility_loss(x: torch.Tensor, u: torch.Tensor, cfg: dict[str, Any]) -> torch.Tensor:
    """Per filter (k,): the task distortion of decoder outputs x (k, B, d_u) against U (B, d_u)."""
    k = x.shape[0]
    if cfg["output"] == "sigmoid":
        return nn.functional.binary_cross_entropy_with_logits(
            x, u.expand(k, -1, -1), reduction="none").mean(-1).mean(-1)
    std = torch.as_tensor(cfg["u_std"], device=x.device, dtype=torch.float32)
    mean = torch.as_tensor(cfg["u_mean"], device=x.device, dtype=torch.float32)
    return ((x * std + mean - u) ** 2).sum(-1).mean(-1)


def project_filters(g: torch.Tensor, divergence: Callable[..., torch.Tensor], var: torch.Tensor,
                    ft: torch.Tensor, bud: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Scale each filter by the largest t in [0, 1] whose training-set divergence is within budget.

    Returns the scaled filters, t (k,) and their divergence (k,).
    """
    k = g.shape[0]
    full = divergence(g, var, ft)
    lo, hi = torch.zeros(k, device=g.device), torch.ones(k, device=g.device)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        ok = divergence(g * mid.view(k, 1, 1), var, ft) <= bud
        lo, hi = torch.where(ok, mid, lo), torch.where(ok, hi, mid)
    t = torch.where(full <= bud, torch.ones_like(lo), lo)
    g = g * t.view(k, 1, 1)
    final = divergence(g, var, ft)
    return g, t, final


def final_adversary(adv: SweepMLP, g: torch.Tensor, mu: torch.Tensor, var: torch.Tensor, ft: torch.Tensor,
                    st: torch.Tensor, label: bool, n_out: int, d_n: int, gen: torch.Generator,
                    sample_posterior: bool) -> list[dict[str, Any]]:
    """Per filter: the final adversary on the final (projected) filter's z~ of the first
    ``ADVERSARY_CHECK_N`` training rows, with its own noise ``gen`` (training is untouched).

    Label S: ``mi`` = H^(S) (plug-in, training labels) + mean log softmax, and ``accuracy``.
    Continuous S (squared-error adversary): its prediction read as the mean of a Gaussian
    with the per-component residual variance on the same rows (a variational Q), and
    H(S) the Gaussian entropy of the standardised training S (same units).
    """
    k, m_chk = g.shape[0], min(len(mu), ADVERSARY_CHECK_N)
    z = mu[:m_chk] + (var[:m_chk].sqrt() * torch.randn(m_chk, mu.shape[1], generator=gen, device=mu.device)
                      if sample_posterior else 0.0)
    noise = torch.randn(k, m_chk, d_n, generator=gen, device=mu.device)
    zt = z + torch.cat([noise, ft[:m_chk].expand(k, -1, -1)], -1) @ g.transpose(1, 2)
    out = adv(zt)
    s = st[:m_chk]
    if label:
        lq = torch.log_softmax(out, -1).gather(-1, s.view(1, -1, 1).expand(k, -1, 1))[..., 0]
        mean_lq = lq.mean(1).double().cpu().numpy()
        acc = (out.argmax(-1) == s[None]).double().mean(1).cpu().numpy()
        freq = np.bincount(st.cpu().numpy(), minlength=n_out) / len(st)
        h_s = float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum())
        how = "plug-in entropy of the training labels"
    else:
        var_r = ((out - s[None]) ** 2).mean(1).clamp_min(1e-12)  # (k, d_s)
        mean_lq = (-0.5 * (torch.log(2 * math.pi * var_r) + 1.0).sum(-1)).double().cpu().numpy()
        acc = None
        s_np = st.double().cpu().numpy()
        h_s = 0.5 * float(np.linalg.slogdet(2 * math.pi * math.e * np.atleast_2d(np.cov(s_np.T)))[1])
        how = ("Gaussian entropy of the standardised training S; Q = N(prediction, residual variance), "
               "log Q at its own residual variance")
    note = f"final adversary vs the final (projected) filter on the first {m_chk} training rows; H(S): {how}"
    return [{"mi": float(h_s + mean_lq[i]), "accuracy": None if acc is None else float(acc[i]), "h_s": h_s,
             "mean_log_q": float(mean_lq[i]), "n": m_chk, "note": note} for i in range(k)]

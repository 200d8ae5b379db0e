"""The chi-square paper's variational estimate (eq 21) of chi^2(p_{S,Z} || p_S p_Z): the ratio,
a sweep of critics g_phi, and a stand-alone estimator.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch

from .core import check_loss, generator, init_module, to_tensor, torch_threads
from .flat_adam import adam
from .sweep import SweepMLP, stack_sweeps


def chi2_ratio(g_all: torch.Tensor, s: torch.Tensor | None, p_s: torch.Tensor | None,
               g_q: torch.Tensor | None = None, lam: float = 1e-4) -> torch.Tensor:
    """Eq (21): (E_p g - E_q g)^2 / (E_q g^2 + lam), batched over the leading axis.

    Parameters
    ----------
    g_all : Tensor, shape (k, m, n_s) for a label S (critic values g(s, z_i) for every s),
        or (k, m) for a continuous S (g(s_i, z_i), the joint pairs).
    s : Tensor of int64, shape (m,) or (k, m) (one row per member), labels (label S) or None.
    p_s : Tensor, shape (n_s,) or (k, 1, n_s), the marginal of S used for q = p_S p_Z (label S) or None.
    g_q : Tensor, shape (k, m), g at product pairs (continuous S) or None.
    lam : float
        The regulariser lambda_m of eq (21).

    Returns
    -------
    Tensor, shape (k,).
    """
    if g_q is None:
        pick = s.view(1, -1, 1).expand(g_all.shape[0], -1, 1) if s.dim() == 1 else s.unsqueeze(-1)
        e_p = g_all.gather(-1, pick).squeeze(-1).mean(-1)
        e_q = (g_all * p_s).sum(-1).mean(-1)
        e_q2 = (g_all ** 2 * p_s).sum(-1).mean(-1)
    else:
        e_p, e_q, e_q2 = g_all.mean(-1), g_q.mean(-1), (g_q ** 2).mean(-1)
    return (e_p - e_q) ** 2 / (e_q2 + lam)


class Critic:
    """A sweep of k critics g_phi and their eq (21) ratio on a batch."""

    def __init__(self, k: int, d_z: int, d_s: int | None, n_s: int | None, hidden: int, layers: int,
                 gen: torch.Generator, device: torch.device, z_mean: torch.Tensor, z_std: torch.Tensor) -> None:
        self.label = n_s is not None
        self.z_mean, self.z_std = z_mean, z_std  # fixed input scaling (training statistics)
        d_in = d_z if self.label else d_z + d_s  # type: ignore[operator]
        d_out = n_s if self.label else 1
        self.net = init_module(SweepMLP(k, [d_in] + [hidden] * (layers - 1) + [d_out], "elu"), gen).to(device)

    @classmethod
    def stacked(cls, critics: Sequence["Critic"], z_mean: torch.Tensor, z_std: torch.Tensor) -> "Critic":
        """One sweep of the critics' members in order (``z_mean``, ``z_std``: per member, (k, 1, d_z))."""
        out = cls.__new__(cls)
        out.label, out.z_mean, out.z_std = critics[0].label, z_mean, z_std
        out.net = stack_sweeps([c.net for c in critics])
        return out

    def ratio(self, z: torch.Tensor, s: torch.Tensor, p_s: torch.Tensor | None, shift: int | Sequence[int]
              ) -> torch.Tensor:
        """Eq (21) per member on ``z`` (k, m, d_z) and labels or S rows ``s`` ((m,) / (m, d_s), or one row
        per member); a continuous S pairs row i with S of row i - ``shift`` (one shift, or one per member)."""
        zs = (z - self.z_mean) / self.z_std
        if self.label:
            return chi2_ratio(self.net(zs), s, p_s)
        ss = s.expand(z.shape[0], -1, -1)
        if isinstance(shift, int):
            rolled = ss.roll(shift, dims=1)
        else:
            rolled = torch.stack([ss[i].roll(int(sh), dims=0) for i, sh in enumerate(shift)])
        g_p = self.net(torch.cat([ss, zs], -1)).squeeze(-1)
        g_q = self.net(torch.cat([rolled, zs], -1)).squeeze(-1)
        return chi2_ratio(g_p, None, None, g_q)


def estimate_chi2(s: Any, z: Any, n_s: int | None = None, steps: int = 1500, hidden: int = 32,
                  layers: int = 3, lr: float = 2e-3, batch_size: int = 1000, seed: int = 0) -> float:
    """The paper's estimate (21) of the chi-square information chi^2(p_{S,Z} || p_S p_Z).

    Trains a critic on minibatches, then evaluates (21) on all samples (for a
    continuous S, the product pairs are the samples with S cyclically shifted).

    Parameters
    ----------
    s : array_like, shape (n,) of labels 0..n_s-1 (give ``n_s``) or (n, d_s) floats.
    z : array_like, shape (n, d_z) or (n,).
    """
    z = np.asarray(z, dtype=float).reshape(len(z), -1)
    rng = np.random.default_rng(seed)
    gen = generator(seed)
    dev = torch.device("cpu")
    zt = to_tensor(z, dev)
    z_mean, z_std = to_tensor(z.mean(0), dev), to_tensor(np.maximum(z.std(0), 1e-9), dev)
    if n_s is not None:
        st = torch.as_tensor(np.asarray(s, dtype=np.int64))
        p_s = torch.as_tensor(np.bincount(st.numpy(), minlength=n_s) / len(st), dtype=torch.float32)
        critic = Critic(1, z.shape[1], None, n_s, hidden, layers, gen, dev, z_mean, z_std)
    else:
        sa = np.asarray(s, dtype=float).reshape(len(z), -1)
        st = to_tensor((sa - sa.mean(0)) / np.maximum(sa.std(0), 1e-12), dev)
        p_s = None
        critic = Critic(1, z.shape[1], sa.shape[1], None, hidden, layers, gen, dev, z_mean, z_std)
    opt = adam(list(critic.net.parameters()), lr)
    with torch_threads(1):
        for step in range(steps):
            idx = torch.as_tensor(rng.integers(0, len(z), min(batch_size, len(z))))
            r = critic.ratio(zt[idx][None], st[idx], p_s, int(rng.integers(1, len(idx))))
            check_loss(r, step, "chi-square critic objective")
            opt.zero_grad()
            (-r.sum()).backward()
            opt.step()
        with torch.no_grad():
            return float(critic.ratio(zt[None], st, p_s, max(1, len(z) // 2)).item())

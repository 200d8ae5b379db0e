"""A stand-in for third-party training code (no privbench import), written the way much public code is:
``nn.Linear`` initialised and noise drawn from torch's *global* RNG, CPU threads left as they are.

It learns a scalar Gaussian privatizer Z = a U + sigma N against a linear-Gaussian adversary that
predicts S from Z (a PPAN-style game for jointly Gaussian S, U), with a quadratic penalty on the
distortion E(Z - U)^2 above ``budget``.  Used by ``wrapped_thirdparty.py`` (the README recipe
"Wrapping third-party torch code") and its test.
"""

from __future__ import annotations

import torch


def train(s: torch.Tensor, u: torch.Tensor, budget: float, steps: int = 60, batch: int = 256) -> dict[str, float]:
    """Fit (a, sigma) on samples s, u of shape (n, 1); returns {"a": ..., "sigma": ...}."""
    scale = torch.nn.Linear(1, 1, bias=False)          # global RNG: its initial weight
    log_sigma = torch.nn.Parameter(torch.zeros(1))
    adversary = torch.nn.Linear(1, 1)                   # global RNG again
    opt = torch.optim.Adam([*scale.parameters(), log_sigma], lr=0.05)
    adv_opt = torch.optim.Adam(adversary.parameters(), lr=0.05)
    for _ in range(steps):
        idx = torch.randperm(len(u))[:batch]             # global RNG: the minibatch
        ub, sb = u[idx], s[idx]
        z = scale(ub) + log_sigma.exp() * torch.randn_like(ub)   # global RNG: the noise
        adv_loss = ((adversary(z.detach()) - sb) ** 2).mean()
        adv_opt.zero_grad()
        adv_loss.backward()
        adv_opt.step()
        distortion = ((z - ub) ** 2).mean()
        loss = -((adversary(z) - sb) ** 2).mean() + 10.0 * torch.relu(distortion - budget) ** 2
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"a": float(scale.weight.detach()[0, 0]), "sigma": float(log_sigma.detach().exp()[0])}

"""The chi-square sanitizer's paper formulation (Wang & Tay eq 25 with §V-A's utility classifier).

Used by :class:`~privbench.learners.chi2_sanitizer.Chi2Sanitizer` with ``formulation="utility"``:
each budget is the chi-square privacy level eta of objective (25), and the sanitizer
``Y = U + a h(C, N)`` (a = the root mean variance of U, fixed; h learned, its scale included) is
trained by Algorithm 1::

    min_{theta, tau}  L(theta; tau) + lambda * max(max_phi sqrt(chi2_hat(theta; phi)), sqrt(eta))

with L the cross-entropy of a utility classifier tau (MLP on the standardised Y, one softmax head per
utility label of the task: §V-A's "loss of a neural classifier w.r.t. U") and chi2_hat the critic's
eq (21) estimate.  Critic and classifier read Y standardised by its own batch statistics, so that
growing the noise cannot hide S by saturating them.  The critic phi and the classifier tau are updated with theta frozen (step 4), then
theta with phi and tau fixed (step 5).  The release is Y itself (tau is a training aid, not part of
the mechanism); no distortion budget applies (the distortion is whatever the learned noise costs).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .nn.chi2 import Critic
from .nn.core import ADVERSARY_CHECK_N, check_loss, generator, init_module, seeds, to_tensor
from .nn.sweep import SweepMLP, sweep_slice
from .nn.utility import UtilityHeads, utility_targets

#: What a budget means under this formulation (``Mechanism.info["budget_kind"]``).
BUDGET_KIND = "chi2-level"


def noise_amplitude(u: np.ndarray) -> float:
    """The fixed amplitude a: the root mean per-dimension variance of the training U."""
    return float(math.sqrt(max(float(np.mean(np.var(u, axis=0))), 1e-12)))


def train_utility_sanitizers(samples: Samples, task: Task, etas: np.ndarray, cfeat: np.ndarray,
                             config: dict[str, Any], hp: dict[str, Any], privacy_weight: float, seed: int,
                             device: torch.device) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
    """Train one sanitizer per eta (a batched sweep); (tensors of h, info) per eta."""
    k, n, d_u = len(etas), len(samples), task.d_u
    s_np, g_np, b_np = seeds(seed, 3)
    rng, gen, ngen = np.random.default_rng(s_np), generator(g_np), generator(b_np, device)
    hidden, layers, d_c, d_n = hp["hidden"], hp["layers"], cfeat.shape[1], config["noise_dim"]
    h = init_module(SweepMLP(k, [d_c + d_n] + [hidden] * (layers - 1) + [d_u], "leaky_relu"), gen).to(device)
    with torch.no_grad():
        h.net[-1].bias.zero_()
    label = task.kind == "mixture"
    zero, one = torch.zeros(d_u, device=device), torch.ones(d_u, device=device)  # inputs come standardised
    critic = Critic(k, d_u, None if label else task.d_s, task.n_s if label else None, hidden, layers, gen,
                    device, zero, one)
    tau = UtilityHeads(k, d_u, task.utility_classes, hidden, layers, "tanh", gen, device)
    targets = utility_targets(samples.utility, task.utility_classes, device)
    ut, ct = to_tensor(np.asarray(samples.u, dtype=float).reshape(n, -1), device), to_tensor(cfeat, device)
    st, p_s = s_tensors(samples, task, label, device)
    floor = torch.as_tensor(np.sqrt(np.maximum(etas, 0.0)), dtype=torch.float32, device=device)
    amp = float(config["amplitude"])
    opt_h = torch.optim.Adam(h.parameters(), lr=hp["lr"])
    opt_t = torch.optim.Adam(tau.parameters(), lr=hp["critic_lr"])
    opt_c = torch.optim.Adam(critic.net.parameters(), lr=hp["critic_lr"])
    bs = min(hp["batch_size"], n)

    def release(idx: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return ut[idx] + amp * h(torch.cat([ct[idx].expand(k, -1, -1), noise], -1))

    def standard(y: torch.Tensor) -> torch.Tensor:
        """Y standardised per member with its own batch statistics (detached): a change of the noise's
        scale cannot saturate the critic or the classifier."""
        mean, std = y.detach().mean(1, keepdim=True), y.detach().std(1, keepdim=True).clamp_min(1e-6)
        return (y - mean) / std

    r = torch.zeros(k)
    for step in range(hp["steps"]):
        idx = torch.as_tensor(rng.integers(0, n, bs), device=device)
        y = release(idx, torch.randn(k, bs, d_n, generator=ngen, device=device))
        batch = {name: t[idx] for name, t in targets.items()}
        shift = int(rng.integers(1, bs)) if bs > 1 else 0
        for _ in range(hp["critic_steps"]):  # step 4: phi and tau with theta frozen
            rc = critic.ratio(standard(y.detach()), st[idx], p_s, shift)
            check_loss(rc, step, "chi-square critic objective (eq 21)")
            opt_c.zero_grad()
            (-rc.sum()).backward()
            opt_c.step()
        lt = tau.loss(standard(y.detach()), batch)
        opt_t.zero_grad()
        lt.sum().backward()
        opt_t.step()
        r = critic.ratio(standard(y), st[idx], p_s, shift)  # step 5: theta with phi and tau fixed
        loss = tau.loss(standard(y), batch) + privacy_weight * torch.maximum(torch.sqrt(r + 1e-12), floor)
        check_loss(loss.sum(), step, "sanitizer objective (25)")
        opt_h.zero_grad()
        loss.sum().backward()
        opt_h.step()
    return _finish(h, critic, tau, release, standard, ut, st, p_s, targets, etas, k, n, d_n,
                   generator(b_np ^ 2, device), device, hp["steps"], r.detach().cpu().numpy())


def _finish(h: SweepMLP, critic: Critic, tau: UtilityHeads, release: Any, standard: Any, ut: torch.Tensor,
            st: torch.Tensor, p_s: torch.Tensor | None, targets: dict[str, torch.Tensor], etas: np.ndarray, k: int,
            n: int, d_n: int, gen: torch.Generator, device: torch.device, steps: int, last: np.ndarray
            ) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
    """Per member: h's tensors and the training facts (final critic and classifier on the training rows)."""
    with torch.no_grad():
        idx = torch.arange(n, device=device)
        y = release(idx, torch.randn(k, n, d_n, generator=gen, device=device))
        dist = ((y - ut) ** 2).sum(-1).mean(-1).double().cpu().numpy()
        m = min(n, ADVERSARY_CHECK_N)
        chi2 = critic.ratio(standard(y[:, :m]), st[:m], p_s, max(1, m // 2)).double().cpu().numpy()
        acc = tau.accuracy(standard(y), targets)
    note = (f"eq (21) with the final critic on the first {m} training rows' releases (fresh noise); a lower "
            "bound on chi^2(S;Y) up to sampling error; no MI surrogate (mi: None)")
    out = []
    for i in range(k):
        info = {"steps": steps, "formulation": "utility", "budget_kind": BUDGET_KIND, "eta": float(etas[i]),
                "train_distortion": float(dist[i]), "last_batch_chi2_estimate": float(last[i]),
                "train_utility_accuracy": {name: float(a[i]) for name, a in acc.items()},
                "budget_meaning": "chi-square privacy level eta of objective (25) (not a distortion budget)",
                "training_adversary": {"mi": None, "accuracy": None, "chi2": float(chi2[i]), "n": m, "note": note}}
        out.append((sweep_slice(h, i, "h"), info))
    return out


def s_tensors(samples: Samples, task: Task, label: bool, device: torch.device
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(S, P(S)): labels and their frequencies for a label S, else the standardised S (n, d_s) and None."""
    n = len(samples)
    if label:
        st = torch.as_tensor(np.asarray(samples.s, dtype=np.int64), device=device)
        p_s = torch.as_tensor(np.bincount(samples.s, minlength=task.n_s) / n, dtype=torch.float32, device=device)
        return st, p_s
    sa = np.asarray(samples.s, dtype=float).reshape(n, -1)
    return to_tensor((sa - sa.mean(0)) / np.maximum(sa.std(0), 1e-9), device), None

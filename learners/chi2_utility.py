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

from privbench.datasets.tasks import Task

from .chi2_sets import Chi2Sets
from .nn.chi2 import Critic
from .nn.core import ADVERSARY_CHECK_N, check_loss, init_module
from .nn.flat_adam import adam
from .nn.sweep import SweepMLP, stack_sweeps, sweep_slice
from .nn.utility import UtilityHeads, utility_targets

#: What a budget means under this formulation (``Mechanism.info["budget_kind"]``).
BUDGET_KIND = "chi2-level"


def noise_amplitude(u: np.ndarray) -> float:
    """The fixed amplitude a: the root mean per-dimension variance of the training U."""
    return float(math.sqrt(max(float(np.mean(np.var(u, axis=0))), 1e-12)))


def train_utility_sanitizers(sets: Chi2Sets, task: Task, etas: np.ndarray, d_n: int, amplitudes: list[float],
                             utilities: list[dict[str, np.ndarray] | None], hp: dict[str, Any],
                             privacy_weight: float) -> list[list[tuple[dict[str, torch.Tensor], dict[str, Any]]]]:
    """Train one sanitizer per eta and training set (one batched sweep, :class:`~.chi2_sets.Chi2Sets`: set r's
    members seeded, fed and drawn as in a fit of set r alone); per set, per eta: (tensors of h, info).

    ``amplitudes``, ``utilities``: per set the fixed amplitude a and the utility labels.
    """
    k, n, device = sets.k, sets.n, sets.device
    h, critic, tau = _networks(sets, task, sets.ct.shape[-1] + d_n, hp)
    per_set = [utility_targets(u, task.utility_classes, device) for u in utilities]
    targets = {name: torch.stack([t[name] for t in per_set]) for name in per_set[0]}  # (sets, n) each
    floor = torch.as_tensor(np.sqrt(np.maximum(np.tile(etas, sets.sets), 0.0)), dtype=torch.float32, device=device)
    amp = sets.members(torch.as_tensor(amplitudes, dtype=torch.float32, device=device))[:, None, None]
    opt_h = adam(list(h.parameters()), hp["lr"])
    opt_t = adam(list(tau.parameters()), hp["critic_lr"])
    opt_c = adam(list(critic.net.parameters()), hp["critic_lr"])
    bs = min(hp["batch_size"], n)

    def release(idx: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        return sets.rows(sets.ut, idx) + amp * h(torch.cat([sets.rows(sets.ct, idx), noise], -1))

    r = torch.zeros(len(floor))
    for step in range(hp["steps"]):
        idx = sets.minibatch(bs)
        y = release(idx, sets.noise(bs, d_n))
        batch = {name: sets.rows(t, idx) for name, t in targets.items()}
        shift, s_rows = sets.shifts(bs), sets.rows(sets.st, idx)
        for _ in range(hp["critic_steps"]):  # step 4: phi and tau with theta frozen
            rc = critic.ratio(standard(y.detach()), s_rows, sets.p_s, shift)
            check_loss(rc, step, "chi-square critic objective (eq 21)")
            opt_c.zero_grad()
            (-rc.sum()).backward()
            opt_c.step()
        lt = tau.loss(standard(y.detach()), batch)
        opt_t.zero_grad()
        lt.sum().backward()
        opt_t.step()
        r = critic.ratio(standard(y), s_rows, sets.p_s, shift)  # step 5: theta with phi and tau fixed
        loss = tau.loss(standard(y), batch) + privacy_weight * torch.maximum(torch.sqrt(r + 1e-12), floor)
        check_loss(loss.sum(), step, "sanitizer objective (25)")
        opt_h.zero_grad()
        loss.sum().backward()
        opt_h.step()
    out = _finish(sets, h, critic, tau, release, targets, np.tile(etas, sets.sets), d_n, hp["steps"],
                  r.detach().cpu().numpy())
    return [out[j * k:(j + 1) * k] for j in range(sets.sets)]


def standard(y: torch.Tensor) -> torch.Tensor:
    """Y standardised per member with its own batch statistics (detached): a change of the noise's
    scale cannot saturate the critic or the classifier."""
    mean, std = y.detach().mean(1, keepdim=True), y.detach().std(1, keepdim=True).clamp_min(1e-6)
    return (y - mean) / std


def _networks(sets: Chi2Sets, task: Task, d_in: int, hp: dict[str, Any]) -> tuple[SweepMLP, Critic, UtilityHeads]:
    """h (last bias 0), the critic and the utility classifier tau, each set's block initialised from its
    own generator in a fit's order (h, critic, tau)."""
    hs, critics, taus = [], [], []
    k, d_u, hidden, layers, device = sets.k, task.d_u, hp["hidden"], hp["layers"], sets.device
    zero, one = torch.zeros(d_u, device=device), torch.ones(d_u, device=device)  # inputs come standardised
    for gen in sets.gens:
        h = init_module(SweepMLP(k, [d_in] + [hidden] * (layers - 1) + [d_u], "leaky_relu"), gen).to(device)
        with torch.no_grad():
            h.net[-1].bias.zero_()
        hs.append(h)
        critics.append(Critic(k, d_u, None if sets.label else task.d_s, task.n_s if sets.label else None, hidden,
                              layers, gen, device, zero, one))
        taus.append(UtilityHeads(k, d_u, task.utility_classes, hidden, layers, "tanh", gen, device))
    tau = taus[0]
    tau.net = stack_sweeps([t.net for t in taus])
    return stack_sweeps(hs), Critic.stacked(critics, zero, one), tau


def _finish(sets: Chi2Sets, h: SweepMLP, critic: Critic, tau: UtilityHeads, release: Any,
            targets: dict[str, torch.Tensor], etas: np.ndarray, d_n: int, steps: int, last: np.ndarray
            ) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
    """Per member: h's tensors and the training facts (final critic and classifier on the training rows)."""
    n = sets.n
    with torch.no_grad():
        idx = torch.arange(n, device=sets.device)[None].expand(sets.sets, -1)
        y = release(idx, sets.noise(n, d_n, sets.check_gens))
        dist = ((y - sets.rows(sets.ut, idx)) ** 2).sum(-1).mean(-1).double().cpu().numpy()
        m = min(n, ADVERSARY_CHECK_N)
        chi2 = critic.ratio(standard(y[:, :m]), sets.rows(sets.st, idx[:, :m]), sets.p_s,
                            max(1, m // 2)).double().cpu().numpy()
        acc = tau.accuracy(standard(y), {name: sets.members(t) for name, t in targets.items()})
    note = (f"eq (21) with the final critic on the first {m} training rows' releases (fresh noise); a lower "
            "bound on chi^2(S;Y) up to sampling error; no MI surrogate (mi: None)")
    out = []
    for i in range(len(etas)):
        info = {"steps": steps, "formulation": "utility", "budget_kind": BUDGET_KIND, "eta": float(etas[i]),
                "train_distortion": float(dist[i]), "last_batch_chi2_estimate": float(last[i]),
                "train_utility_accuracy": {name: float(a[i]) for name, a in acc.items()},
                "budget_meaning": "chi-square privacy level eta of objective (25) (not a distortion budget)",
                "training_adversary": {"mi": None, "accuracy": None, "chi2": float(chi2[i]), "n": m, "note": note}}
        out.append((sweep_slice(h, i, "h"), info))
    return out

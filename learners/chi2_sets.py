"""The chi-square sanitizer's distortion formulation (:mod:`~privbench.learners.chi2_sanitizer`, module
docstring) trained for several training sets at once (a case's repetitions, :meth:`Learner.fit_many`).

Set ``r`` owns the members ``r k .. (r + 1) k - 1`` (one per budget) of one batched noise network, critic
and utility network; its initialisation, minibatch rows, pair shifts and noise come from its own seeds and
generators in the order a fit of set ``r`` alone draws them (:class:`Chi2Sets`), so each set gets the
mechanisms of its own fit (float32 rounding of the batched kernels aside).
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
from .nn.flat_adam import adam
from .nn.sweep import SweepMLP, stack_sweeps, sweep_slice


class Chi2Sets:
    """The training sets of one batched fit (all of ``n`` rows): their rows, labels and random streams.

    ``us``, ``cfeats``: per set U (n, d_u) and the noise network's conditioning features (n, d_c);
    ``configs``: per set the mechanism's configuration (``u_mean``, ``u_std``).
    """

    def __init__(self, samples_list: list[Samples], task: Task, us: list[np.ndarray], cfeats: list[np.ndarray],
                 configs: list[dict[str, Any]], seed_list: list[int], k: int, device: torch.device) -> None:
        self.k, self.sets, self.device, self.n = k, len(samples_list), device, len(samples_list[0])
        self.label = task.kind == "mixture"
        derived = [seeds(sd, 3) for sd in seed_list]
        self.rngs = [np.random.default_rng(d[0]) for d in derived]
        self.gens = [generator(d[1]) for d in derived]
        self.noise_gens = [generator(d[2], device) for d in derived]
        self.check_gens = [generator(d[2] ^ 2, device) for d in derived]
        self.ut = torch.stack([to_tensor(u, device) for u in us])  # (sets, n, d_u)
        self.ct = torch.stack([to_tensor(c, device) for c in cfeats])
        pairs = [s_tensors(s, task, self.label, device) for s in samples_list]
        self.st = torch.stack([st for st, _ in pairs])  # (sets, n) labels or (sets, n, d_s)
        self.p_s = self.members(torch.stack([p for _, p in pairs]))[:, None, :] if self.label else None
        self.u_mean, self.u_std = (self.members(torch.stack([torch.as_tensor(c[key], dtype=torch.float32, device=device)
                                                             for c in configs]))[:, None, :]
                                   for key in ("u_mean", "u_std"))

    def members(self, per_set: torch.Tensor) -> torch.Tensor:
        """(sets, ...) -> (sets * k, ...): each set's entry for each of its members."""
        return per_set.repeat_interleave(self.k, 0)

    def rows(self, t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """Rows ``idx[r]`` (sets, B) of each set's ``t[r]``, per member: (sets * k, B, ...)."""
        return self.members(torch.stack([t[r][idx[r]] for r in range(self.sets)]))

    def minibatch(self, bs: int) -> torch.Tensor:
        """Each set's minibatch rows (sets, bs), from its own numpy generator."""
        return torch.stack([torch.as_tensor(rng.integers(0, self.n, bs), device=self.device) for rng in self.rngs])

    def shifts(self, bs: int) -> int | list[int]:
        """Each set's pair shift, per member (an int for one set)."""
        got = [int(rng.integers(1, bs)) if bs > 1 else 0 for rng in self.rngs]
        return got[0] if self.sets == 1 else [x for x in got for _ in range(self.k)]

    def noise(self, m: int, d_n: int, gens: list[torch.Generator] | None = None) -> torch.Tensor:
        """Standard normals (sets * k, m, d_n), set r's block a (k, m, d_n) draw of its generator."""
        return torch.cat([torch.randn(self.k, m, d_n, generator=g, device=self.device)
                          for g in gens or self.noise_gens])


def networks(sets: Chi2Sets, task: Task, d_in: int, hp: dict[str, Any], utility_mlp: bool
             ) -> tuple[SweepMLP, SweepMLP | None, Critic]:
    """The noise network h (last bias 0), the utility network f (``utility="mlp"``: last layer 0) and the
    critic, each set's block initialised from its own generator in a fit's order (h, f, critic)."""
    hs, fs, critics = [], [], []
    k, d_u, hidden, layers, device = sets.k, task.d_u, hp["hidden"], hp["layers"], sets.device
    for gen in sets.gens:
        h = init_module(SweepMLP(k, [d_in] + [hidden] * (layers - 1) + [d_u], "leaky_relu"), gen).to(device)
        with torch.no_grad():
            h.net[-1].bias.zero_()
        hs.append(h)
        if utility_mlp:
            f = init_module(SweepMLP(k, [d_u] + [hidden] * (layers - 1) + [d_u], "tanh"), gen).to(device)
            with torch.no_grad():
                f.net[-1].weight.zero_()
                f.net[-1].bias.zero_()
            fs.append(f)
        critics.append(Critic(k, d_u, None if sets.label else task.d_s, task.n_s if sets.label else None, hidden,
                              layers, gen, device, torch.zeros(d_u), torch.ones(d_u)))
    return stack_sweeps(hs), stack_sweeps(fs) if fs else None, Critic.stacked(critics, sets.u_mean, sets.u_std)


def train_distortion_sanitizers(sets: Chi2Sets, task: Task, budgets: np.ndarray, d_n: int, hp: dict[str, Any],
                                utility_mlp: bool, fill: bool, privacy_weight: float, penalty: float, eta: float
                                ) -> list[list[tuple[dict[str, torch.Tensor], dict[str, Any]]]]:
    """Per set, per budget (> 0): the trained member's tensors and training facts (``amplitude`` included)."""
    k, n, device = sets.k, sets.n, sets.device
    h, f, critic = networks(sets, task, sets.ct.shape[-1] + d_n, hp, utility_mlp)
    all_b = np.tile(budgets, sets.sets)
    amp = torch.as_tensor(np.sqrt(all_b), dtype=torch.float32, device=device).view(-1, 1, 1)
    bud = torch.as_tensor(all_b, dtype=torch.float32, device=device)
    gen_params = list(h.parameters())
    util_params = list(f.parameters()) if f is not None else []
    opt_g = adam(gen_params + util_params, hp["lr"])
    opt_c = adam(list(critic.net.parameters()), hp["critic_lr"])
    bs = min(hp["batch_size"], n)

    def forward(idx: torch.Tensor, noise: torch.Tensor, a: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(Y, Z, U) for rows idx (sets, B); amplitude a (K,) or, in training, sqrt(b) (normalised if fill)."""
        ur = sets.rows(sets.ut, idx)
        hx = h(torch.cat([sets.rows(sets.ct, idx), noise], -1))
        if a is None:
            scale = amp / hx.pow(2).sum(-1).mean(-1).sqrt().clamp_min(1e-12).view(-1, 1, 1) if fill else amp
        else:
            scale = a.view(-1, 1, 1)
        y = ur + scale * hx
        z = y if f is None else y + sets.u_std * f((y - sets.u_mean) / sets.u_std)
        return y, z, ur

    last: dict[str, Any] = {}
    for step in range(hp["steps"]):
        idx = sets.minibatch(bs)
        y, z, ur = forward(idx, sets.noise(bs, d_n))
        shift, s_rows = sets.shifts(bs), sets.rows(sets.st, idx)
        for _ in range(hp["critic_steps"]):
            r = critic.ratio(y.detach(), s_rows, sets.p_s, shift)
            check_loss(r, step, "chi-square critic objective (eq 21)")
            opt_c.zero_grad()
            (-r.sum()).backward()
            opt_c.step()
        r = critic.ratio(y, s_rows, sets.p_s, shift)
        priv = torch.sqrt(r + 1e-12).clamp_min(math.sqrt(eta))
        dist = ((z - ur) ** 2).sum(-1).mean(-1)
        loss_theta = (privacy_weight * priv + penalty * torch.relu(dist / bud - 1.0)).sum()
        check_loss(loss_theta, step, "sanitizer objective (25)")
        opt_g.zero_grad()
        grads = torch.autograd.grad(loss_theta, gen_params, retain_graph=f is not None)
        for p, g in zip(gen_params, grads):
            p.grad = g
        if f is not None:  # the utility model tau minimises the distortion L
            for p, g in zip(util_params, torch.autograd.grad(dist.sum(), util_params)):
                p.grad = g
        opt_g.step()
        last = {"chi2_estimate": r.detach().cpu().numpy(), "distortion": dist.detach().cpu().numpy()}
    a, final = calibrate(sets, forward, all_b, d_n, fill)
    chi2 = final_critic(sets, critic, forward, a, d_n)
    out = []
    for i in range(len(all_b)):
        tensors = sweep_slice(h, i, "h")
        if f is not None:
            tensors.update(sweep_slice(f, i, "f"))
        info = {"steps": hp["steps"], "amplitude": float(a[i]), "train_distortion": float(final[i]),
                "over_budget": bool(final[i] > all_b[i] * (1 + 1e-6)),
                "last_batch_chi2_estimate": float(last["chi2_estimate"][i]) if last else None,
                "training_adversary": chi2[i]}
        out.append((tensors, info))
    return [out[r * k:(r + 1) * k] for r in range(sets.sets)]


def calibrate(sets: Chi2Sets, forward: Any, budgets: np.ndarray, d_n: int, fill: bool
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Noise amplitude a per member: the largest a <= a_max with training-set distortion <= budget; (a, the
    training-set distortion at a).

    a_max is the training amplitude: sqrt(b / E||h||^2) with ``fill_budget`` (so the identity
    utility spends the budget exactly), else sqrt(b); bisection with fixed noise draws.
    """
    bud = torch.as_tensor(budgets, dtype=torch.float64, device=sets.device)
    with torch.no_grad():
        idx = torch.arange(sets.n, device=sets.device)[None].expand(sets.sets, -1)
        noise = sets.noise(sets.n, d_n)

        def dist(a: torch.Tensor) -> torch.Tensor:
            _, z, ur = forward(idx, noise, a.float())
            return ((z - ur) ** 2).sum(-1).mean(-1).double()

        a_max = bud.sqrt()
        if fill:  # the training amplitude sqrt(b) / sqrt(E||h||^2), here on the whole training set
            y, _, ur = forward(idx, noise, torch.ones(len(budgets), device=sets.device))
            a_max = a_max / ((y - ur) ** 2).sum(-1).mean(-1).double().sqrt().clamp_min(1e-12)
        full = dist(a_max)
        lo, hi = torch.zeros_like(a_max), a_max.clone()
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            ok = dist(mid) <= bud
            lo, hi = torch.where(ok, mid, lo), torch.where(ok, hi, mid)
        a = torch.where(full <= bud, a_max, lo)
        return a, dist(a)


def final_critic(sets: Chi2Sets, critic: Critic, forward: Any, a: torch.Tensor, d_n: int) -> list[dict[str, Any]]:
    """Per member ``training_adversary``: the final critic vs the calibrated release of its set's first rows."""
    with torch.no_grad():  # the final critic vs the calibrated release, on a fixed slice, its own noise
        m_chk = min(sets.n, ADVERSARY_CHECK_N)
        idx = torch.arange(m_chk, device=sets.device)[None].expand(sets.sets, -1)
        y = forward(idx, sets.noise(m_chk, d_n, sets.check_gens), a.float())[0]
        chi2 = critic.ratio(y, sets.rows(sets.st, idx), sets.p_s, max(1, m_chk // 2)).double().cpu().numpy()
    note = (f"eq (21) with the final critic g_phi on the final sanitized Y of the first {m_chk} training rows "
            "(fresh noise, calibrated amplitude; the critic reads Y, before any utility network)"
            + ("" if sets.label else "; product pairs by rolling S by half the rows")
            + "; a lower bound on chi^2(S;Y) up to sampling error; no MI surrogate (mi: None)")
    return [{"mi": None, "accuracy": None, "chi2": float(c), "n": m_chk, "note": note} for c in chi2]


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

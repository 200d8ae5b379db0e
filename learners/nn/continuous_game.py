"""The game of the continuous PPAN learners, batched over a budget sweep.

A release network (:mod:`.release`) and an adversary (:mod:`.adversary`) play PPAN's
minimax game (3) on minibatches of the training data; see
:mod:`privbench.learners.ppan_continuous` for the schedules and the distortion terms.
:func:`train_sweep` trains every budget of a call as one batched model (of several training sets
at once when given a :class:`~.bundle.Bundle`: a case's repetitions and training-set sizes),
:func:`final_adversary` scores the final adversary and :func:`diagnose` checks each
member for collapse against the Gaussian-noise baseline.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .adversary import Whitener, adversary_outputs, build_adversary, log_q
from .bundle import Bundle, Streams
from .core import ADVERSARY_CHECK_N, check_loss, cosine_lr, generator, to_tensor
from .flat_adam import adam
from .leakage import gaussian_mi, noise_baseline_mi
from .release import SweepRelease, build_release
from .sweep import init_members

#: training rows per set on which :func:`diagnose` checks each member for collapse
DIAGNOSE_N = 20000


class TrainingData:
    """Training arrays on the device: W (n, d_w), U (n, d_u), S standardised (n, d_s) or labels (n,)."""

    def __init__(self, samples: Samples, task: Task, device: torch.device, n_mix: int = 1) -> None:
        w = task.observe(samples)
        self.n_mix = n_mix
        self.discrete = task.kind != "gaussian"
        self.n = len(w)
        self.u_np = np.asarray(samples.u, float).reshape(self.n, -1)
        if self.discrete:  # S for the Gaussian-approximation checks: one-hot without the last class
            self.s_np = np.eye(int(task.n_s))[np.asarray(samples.s)][:, :-1]  # type: ignore[arg-type]
            self.s = torch.as_tensor(np.asarray(samples.s), dtype=torch.long, device=device)
            self.n_out = int(task.n_s)  # type: ignore[arg-type]
        else:
            s = np.asarray(samples.s, float).reshape(self.n, -1)
            self.s_np = s
            self.s = to_tensor((s - s.mean(0)) / np.maximum(s.std(0), 1e-8), device)
            self.n_out = adversary_outputs(s.shape[1], n_mix)
        self.w = to_tensor(w, device)
        self.u = to_tensor(self.u_np, device)
        self.w_mean, self.w_std = w.mean(0), np.maximum(w.std(0), 1e-6)
        self.u_cov = np.atleast_2d(np.cov(self.u_np.T))
        self.u_mean = to_tensor(self.u_np.mean(0), device)
        self.u_std = to_tensor(np.maximum(self.u_np.std(0), 1e-6), device)


class _Game:
    """The two players of one sweep (k members), their optimisers and the adversary's input scaling."""

    def __init__(self, data: Bundle, cfg: dict[str, Any], hp: dict[str, Any], budgets: np.ndarray,
                 member_seeds: list[int], device: torch.device) -> None:
        self.k, self.data, self.hp = len(budgets), data, hp
        gens = [generator(s) for s in member_seeds]
        self.mech = setup_release(data, cfg, budgets, gens, hp["init"] == "shrink")
        self.adv = build_adversary(self.k, cfg["d_u"], hp["adversary_hidden"], data.n_out, skip=hp["whiten"])
        init_members(self.adv, gens)
        self.mech.to(device)
        self.adv.to(device)
        self.mech_params, self.adv_params = list(self.mech.parameters()), list(self.adv.parameters())
        self.opt_m = adam(self.mech_params, hp["lr"], foreach=True)  # FlatAdam on the CPU (same numbers)
        self.opt_a = adam(self.adv_params, hp["adversary_lr"], foreach=True)
        self.simultaneous = int(hp["adversary_steps"]) == 0
        u_var = [float((d.u_std ** 2).mean()) for d in data.datas]
        self.whiten = Whitener(self.k, u_var[0] if len(u_var) == 1 else member_column(data, u_var)) \
            if hp["whiten"] else None

    def privacy(self, z: torch.Tensor, pi: torch.Tensor | None, s: torch.Tensor, update: bool) -> torch.Tensor:
        """Mean log Q(s|z) per member, (k,); z (k, B, m, d_u), pi (k, B, m) or None, s (k, B, ...)."""
        k, data, whiten = self.k, self.data, self.whiten
        m = z.shape[2]
        flat = z.reshape(k, -1, z.shape[-1])
        if whiten is None:
            x = (flat - data.u_mean) / data.u_std
        else:
            if update or whiten.W is None:
                whiten.update(flat.detach(), None if pi is None else pi.reshape(k, -1).detach())
            x = whiten(flat)
        lq = log_q(self.adv(x), s.repeat_interleave(m, dim=1) if m > 1 else s, data.discrete,
                   data.n_mix).reshape(k, -1, m)
        return (lq[..., 0] if pi is None else (pi * lq).sum(-1)).mean(1)

    def adversary_steps(self, w: torch.Tensor, s: torch.Tensor, gen: torch.Generator, step: int) -> None:
        """``adversary_steps`` ascent steps of the adversary on fresh releases (none when simultaneous)."""
        for _ in range(0 if self.simultaneous else int(self.hp["adversary_steps"])):
            with torch.no_grad():
                z, pi = self.mech(w, gen)
            loss_a = -self.privacy(z, pi, s, update=True).sum()
            check_loss(loss_a, step, "adversary loss")
            self.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            self.opt_a.step()

    def mechanism_step(self, loss: torch.Tensor) -> None:
        """Descend ``loss``; simultaneous updates also step the adversary up the same gradient."""
        self.opt_m.zero_grad(set_to_none=True)
        if self.simultaneous:  # one backward pass; the adversary ascends what the mechanism descends
            self.opt_a.zero_grad(set_to_none=True)
            loss.backward()
            for p in self.adv_params:
                p.grad.neg_()  # type: ignore[union-attr]
            self.opt_a.step()
        else:
            loss.backward(inputs=self.mech_params)
        self.opt_m.step()


class _IterateAverage:
    """Running mean of the parameters from step ``int(steps (1 - fraction))`` on (none if that is ``steps``)."""

    def __init__(self, params: list[torch.Tensor], steps: int, fraction: float) -> None:
        self.start = int(steps * (1.0 - fraction))
        self.avg = [p.detach().clone() for p in params] if self.start < steps else None
        self.n = 0

    def update(self, params: list[torch.Tensor], step: int) -> None:
        if self.avg is not None and step >= self.start:
            self.n += 1
            with torch.no_grad():
                torch._foreach_lerp_(self.avg, [p.detach() for p in params], 1.0 / self.n)

    def apply(self, params: list[torch.Tensor]) -> None:
        if self.avg is not None and self.n:
            with torch.no_grad():
                for p, a in zip(params, self.avg):
                    p.copy_(a)


def _penalty(constraint: str, z: torch.Tensor, u: torch.Tensor, pi: torch.Tensor | None, delta: torch.Tensor,
             nu: torch.Tensor, rho: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(g, penalty) per member: g the batch-mean distortion minus the budget."""
    sq = ((z - u[:, :, None, :]) ** 2).sum(-1)  # (k, B, m); u (k, B, d_u)
    per_sample = sq[..., 0] if pi is None else (pi * sq).sum(-1)  # (k, B)
    g = per_sample.mean(1) - delta
    if constraint == "sample-penalty":
        over = torch.relu(sq - delta[:, None, None]) ** 2
        pen = lam * (over[..., 0] if pi is None else (pi * over).sum(-1)).mean(1)
    elif constraint == "mean-penalty":
        pen = lam * torch.relu(g) ** 2
    else:
        half = per_sample.shape[1] // 2
        g1, g2 = per_sample[:, :half].mean(1) - delta, per_sample[:, half:].mean(1) - delta
        pen = nu * g + 0.5 * rho * (g1.detach() * g2 + g2.detach() * g1)
    return g, pen


def train_sweep(data: TrainingData | Bundle, cfg: dict[str, Any], hp: dict[str, Any], budgets: np.ndarray,
                member_seeds: list[int], sweep_seed: int | list[int], device: torch.device
                ) -> tuple[SweepRelease, dict[str, Any]]:
    """Train one batched sweep: member i at budgets[i], initialised from member_seeds[i].

    With a :class:`~.bundle.Bundle` of several training sets, ``sweep_seed`` has one seed per set
    (its minibatches and noise, drawn block by block: each set's members get what a sweep of
    that set alone would).  Returns the release module and per-member ``nu`` (final multiplier),
    ``loglik`` (the adversary's mean log Q on the last batch) and ``training_adversary``
    (:func:`final_adversary`).  NaN/inf -> TrainingError naming the step.
    """
    data = as_bundle(data, len(budgets))
    sweep_seeds = [int(sweep_seed)] if np.isscalar(sweep_seed) else [int(x) for x in sweep_seed]
    game = _Game(data, cfg, hp, budgets, member_seeds, device)
    k = game.k
    gen = Streams([generator(x, device) for x in sweep_seeds], data.counts)
    delta = to_tensor(np.asarray(budgets, float), device)
    nu = torch.zeros(k, device=device)
    rho, lam, eta = float(hp["penalty"]), float(hp["penalty"]), float(hp["dual_lr"])
    bs, steps = int(hp["batch_size"]), int(hp["steps"])
    per_epoch = [max(n // bs, 1) for n in data.ns]  # each set's epochs: its own permutations, as alone
    perms = [gen.randperm(r, n, device) for r, n in enumerate(data.ns)]
    average = _IterateAverage(game.mech_params, steps, hp["average_fraction"])
    priv = torch.zeros(k, device=device)
    gauss_w = float(hp.get("gaussian_term", 0.0)) if not data.discrete and cfg["family"] != "gmm" else 0.0
    res_w = float(hp.get("residual_penalty", 0.0)) if cfg["family"] == "seed" else 0.0
    u_power = (data.u_std ** 2).sum(-1)[:, 0]  # tr cov U per member, (k,)
    ridges = [1e-6 * float((d.u_std ** 2).mean()) for d in data.datas]
    ridge = ridges[0] if len(ridges) == 1 else member_column(data, ridges)
    for step in range(steps):
        if hp["cosine"]:
            cosine_lr(((game.opt_m, hp["lr"]), (game.opt_a, hp["adversary_lr"])), step, steps)
        batch = []
        for r, n_r in enumerate(data.ns):
            j = step % per_epoch[r]
            if j == 0 and step > 0:
                perms[r] = gen.randperm(r, n_r, device)
            batch.append(perms[r][j * bs:(j + 1) * bs])
        w, u, s = data.rows(torch.stack(batch))
        game.adversary_steps(w, s, gen, step)
        z, pi = game.mech(w, gen)
        priv = game.privacy(z, pi, s, update=game.simultaneous)
        g, pen = _penalty(hp["constraint"], z, u, pi, delta, nu, rho, lam)
        if gauss_w > 0:  # the privacy term mixes the adversary's estimate with the Gaussian approximation
            loss = ((1.0 - gauss_w) * priv + gauss_w * batch_gaussian_mi(s, z[:, :, 0, :], ridge) + pen).sum()
        else:
            loss = (priv + pen).sum()
        if res_w > 0:  # the residual MLP's output power, in units of tr cov U (see residual_penalty)
            loss = loss + res_w * ((game.mech.last_residual ** 2).sum(-1).mean(1) / u_power).sum()
        check_loss(loss, step, "mechanism loss")
        game.mechanism_step(loss)
        if hp["constraint"] == "lagrangian":
            nu = nu + eta * g.detach()
        average.update(game.mech_params, step)
    average.apply(game.mech_params)
    for name, p in game.mech.named_parameters():
        check_loss(p.detach(), steps, f"mechanism parameter {name!r}")
    final = final_adversary(game.mech, game.adv, game.whiten, data,
                            Streams([generator(x ^ 2, device) for x in sweep_seeds], data.counts), hp)
    return game.mech, {"nu": nu.cpu().numpy(), "loglik": priv.detach().cpu().numpy(), "training_adversary": final}


def batch_gaussian_mi(s: torch.Tensor, z: torch.Tensor, ridge: float | torch.Tensor) -> torch.Tensor:
    """Gaussian approximation of I(S; Z) on a batch, per member, differentiable in z: (k,).

    1/2 (log det C_S + log det C_Z - log det C_SZ) of the batch covariances; s (B, d_s) or per
    member (k, B, d_s) (standardised), z (k, B, d_z); ``ridge`` (a number or per member, (k, 1, 1))
    is added to the diagonal.  Exact for jointly Gaussian (S, Z), a lower bound for Gaussian S
    otherwise (PPAN §III-B1).
    """
    k, n, d_s = z.shape[0], z.shape[1], s.shape[-1]
    x = torch.cat([s if s.dim() == 3 else s[None].expand(k, -1, -1), z], dim=-1)
    x = x - x.mean(1, keepdim=True)
    cov = torch.bmm(x.transpose(1, 2), x) / max(n - 1, 1)
    cov = cov + ridge * torch.eye(cov.shape[-1], dtype=cov.dtype, device=cov.device)
    ld = torch.linalg.cholesky(cov)
    logdet = lambda c: 2.0 * torch.log(torch.diagonal(c, dim1=1, dim2=2)).sum(-1)  # noqa: E731
    ls, lz = torch.linalg.cholesky(cov[:, :d_s, :d_s]), torch.linalg.cholesky(cov[:, d_s:, d_s:])
    return 0.5 * (logdet(ls) + logdet(lz) - logdet(ld))


@torch.no_grad()
def final_adversary(mech: SweepRelease, adv: torch.nn.Module, whiten: Whitener | None, data: TrainingData | Bundle,
                    gen: torch.Generator | Streams, hp: dict[str, Any]) -> list[dict[str, Any]]:
    """Per member: the final adversary's estimate on the first ``ADVERSARY_CHECK_N`` training rows.

    The final (averaged) release of those rows, drawn with its own generator ``gen`` (training
    is untouched), is scored by the final adversary through the final whitening statistics:
    ``mi`` = H^(S) + mean log Q(S|Z), H^(S) the plug-in entropy of the training labels
    (discrete S) or the Gaussian entropy of the standardised training S (continuous S; log Q
    is in the same standardised units, the -d_s/2 log 2 pi constant restored); ``accuracy``
    (discrete S) of argmax Q.  Mixture releases (``gmm``) average over components exactly.
    With a bundle, each member is scored on its own training set's rows.
    """
    k = mech.k
    data = as_bundle(data, k)
    sizes = data.member_values(data.head_sizes(ADVERSARY_CHECK_N))  # rows per member (its own set's)
    w, _, s = data.head(ADVERSARY_CHECK_N)
    z, pi = mech(w, Streams.of(gen, k).with_rows(data.head_sizes(ADVERSARY_CHECK_N)))
    m = z.shape[2]
    flat = z.reshape(k, -1, z.shape[-1])
    x = (flat - data.u_mean) / data.u_std if whiten is None or whiten.W is None else whiten(flat)
    out = adv(x)
    lq = log_q(out, s.repeat_interleave(m, dim=1) if m > 1 else s, data.discrete, data.n_mix).reshape(k, -1, m)
    weights = torch.ones_like(lq) if pi is None else pi
    mean_lq = per_member_mean((weights * lq).sum(-1), sizes)
    h_s = data.member_values([training_entropy(d) for d in data.datas])
    if data.discrete:
        hit = (out.argmax(-1).reshape(k, -1, m) == s[..., None]).to(weights.dtype)
        acc = per_member_mean((weights * hit).sum(-1), sizes)
        how = "plug-in entropy of the training labels"
    else:
        mean_lq = mean_lq - 0.5 * data.datas[0].s.shape[1] * math.log(2 * math.pi)
        acc = None
        how = "Gaussian entropy of the standardised training S (log Q in the same units)"
    note = "final adversary vs the final release of the first {} training rows; H(S): " + how
    return [{"mi": float(h_s[i] + mean_lq[i]), "accuracy": None if acc is None else float(acc[i]),
             "h_s": h_s[i], "mean_log_q": float(mean_lq[i]), "n": sizes[i], "note": note.format(sizes[i])}
            for i in range(k)]


def per_member_mean(x: torch.Tensor, sizes: list[int]) -> np.ndarray:
    """Mean of each member's first ``sizes[i]`` entries of ``x`` (k, M) (the rest is padding), float64."""
    if len(set(sizes)) == 1:
        return x[:, :sizes[0]].mean(1).double().cpu().numpy()
    return np.array([float(x[i, :m].mean()) for i, m in enumerate(sizes)])


def training_entropy(data: TrainingData) -> float:
    """H^(S) of one training set: the plug-in entropy of its labels (discrete S), else the Gaussian
    entropy of its standardised S."""
    if data.discrete:
        labels = data.s.cpu().numpy()
        freq = np.bincount(labels, minlength=data.n_out) / len(labels)
        return float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum())
    s_std = data.s.double().cpu().numpy()
    return 0.5 * float(np.linalg.slogdet(2 * math.pi * math.e * np.atleast_2d(np.cov(s_std.T)))[1])


@torch.no_grad()
def diagnose(mech: SweepRelease, data: TrainingData | Bundle, gen: torch.Generator | Streams,
             collapse_tol: float) -> list[dict[str, Any]]:
    """Per member, on (up to ``DIAGNOSE_N``) training rows of its own set: distortion, noise variance
    E Var(Z|W) (two releases), Gaussian-approx leakage vs the noise baseline at that distortion."""
    k = mech.k
    data = as_bundle(data, k)
    gen = Streams.of(gen, k).with_rows(data.head_sizes(DIAGNOSE_N))
    w, _, _ = data.head(DIAGNOSE_N)
    z1 = mech.sample(w, gen).double().cpu().numpy()
    z2 = mech.sample(w, gen).double().cpu().numpy()
    us, ss = data.numpy_rows("u_np", DIAGNOSE_N), data.numpy_rows("s_np", DIAGNOSE_N)
    out = []
    for i in range(k):
        u, s = us[i], ss[i]
        z1_i, z2_i = z1[i][:len(u)], z2[i][:len(u)]  # the member's own set's rows (the rest is padding)
        dist = float(np.mean(np.sum((z1_i - u) ** 2, axis=1)))
        cond_var = float(np.mean(np.sum((z1_i - z2_i) ** 2, axis=1)) / 2)
        leak, base = gaussian_mi(s, z1_i), noise_baseline_mi(s, u, dist)
        out.append({"train_distortion": dist, "noise_variance": cond_var,
                    "noise_ratio": cond_var / max(dist, 1e-12), "leak_gauss_train": leak,
                    "baseline_gauss_train": base, "excess": leak - base, "collapsed": bool(leak - base > collapse_tol)})
    return out


def as_bundle(data: TrainingData | Bundle, k: int) -> Bundle:
    """``data`` itself if a Bundle, else one training set for all ``k`` members."""
    return data if isinstance(data, Bundle) else Bundle([data], [k])


def member_column(data: Bundle, values: list[float]) -> torch.Tensor:
    """One number per training set -> a (k, 1, 1) float32 tensor, per member, on the sets' device."""
    col = torch.tensor(data.member_values(values), dtype=torch.float32)
    return col.to(data.datas[0].w.device)[:, None, None]


def setup_release(data: Bundle, cfg: dict[str, Any], budgets: np.ndarray, gens: list[torch.Generator],
                  shrink: bool) -> SweepRelease:
    """The k-member release, each set's block initialised as a sweep of that set alone would be
    (member seeds, the set's input standardisation and, with ``shrink``, its covariance of U)."""
    parts, start = [], 0
    for d, c in zip(data.datas, data.counts):
        part = build_release(c, cfg)
        part.setup(gens[start: start + c], d.w_mean, d.w_std, budgets[start: start + c],
                   d.u_cov if shrink else None)
        parts.append(part)
        start += c
    if len(parts) == 1:
        return parts[0]
    mech = build_release(data.k, cfg)
    states = [p.state_dict() for p in parts]
    mech.load_state_dict({name: torch.cat([st[name] for st in states]) for name in states[0]})
    return mech

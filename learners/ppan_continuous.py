"""PPAN for continuous releases (Tripathy, Wang, Ishwar §II-C, §III-B, appendix F).

A release network P(Z|W) and an adversary Q(S|Z) play the minimax game (3): min over
the mechanism, max over the adversary, of E log Q(S|Z) plus a distortion term.  The
adversary is Gaussian (mean, log-variance) for a continuous S (gaussian tasks) and a
softmax for a discrete S (mixture tasks).  ``adversary_steps = k >= 1`` adversary
updates precede each mechanism update (appendix A); ``k = 0`` updates both players
from one forward/backward pass (simultaneous gradient descent-ascent, half the cost).
Mechanism families are in :mod:`privbench.learners.nn.release` (``linear``,
``gaussian``, ``seed``, ``gmm``); each registered learner fixes one.

Distortion term, with d the batch mean of ||U - Z||^2 and delta the budget:

``mean-penalty``    lambda max(0, d - delta)^2.
``sample-penalty``  eq (8): lambda mean_i max(0, ||u_i - z_i||^2 - delta)^2 (it pushes every
                    sample under delta, leaving most of the budget unused).
``lagrangian``      augmented Lagrangian of the equality E d = delta (the optimal leakage is
                    non-increasing in the budget, so spending all of it loses nothing):
                    nu g + rho/2 g^2 with g = d - delta, nu <- nu + dual_lr g every step, and
                    g^2 estimated without bias as g_1 g_2 over the two half-batches.  (A
                    penalty on the batch mean itself also penalises its sampling spread and
                    keeps the mean distortion below the budget.)

``schedule="paper"``: §III-B's settings (Adam 1e-3, batch 200, 250 epochs, 5 adversary
steps, 5 hidden units for scalars and 20 otherwise, lambda 10 / 50 (full, scalar), eq
(8), Z = f(W, eps) without residual, adversary on U-standardised Z).  ``"default"``:
tuned (:data:`DEFAULT`): simultaneous updates, the Lagrangian, cosine learning rate,
the average of the last 30% of iterates, an adversary on the whitened release with a
linear skip (for the nonlinear families a mixture of 5 Gaussians for a continuous S:
a nonlinear release can make the posterior non-Gaussian and hide from a Gaussian
adversary, as the KSG estimates of the benchmark showed), and the linear, Gaussian and
GMM families started at the shrink-and-noise release of exactly the budget.  Every budget of a call trains as one batched model (one member each).

``threads=1`` (torch intra-op threads) by default: 2 threads were no faster on this
machine's 2 shared cores (vector curve 18.2 s vs 17.9 s), and these networks are too
small for a GPU to help (the same curve took 29.6 s on an H100: launch-bound).

Collapse: after training, each member's release of the training W is compared with the
Gaussian-noise baseline Z = U + N(0, d/d_u I) at the member's own distortion d, both
scored by the Gaussian approximation of I(S;Z) (PPAN §III-B1).  A member that leaks
more than the baseline by ``collapse_tol`` nats (e.g. a seed network whose noise input
died: a nearly noiseless release) is retrained from a new derived seed, up to
``max_restarts`` times; ``info["restarts"]`` counts retries, ``info["collapsed"]`` says
whether the member kept (the least excess) still fails the check.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .mechanisms import LinearGaussian
from .nn.adversary import Whitener, adversary_outputs, build_adversary, log_q
from .nn.core import check_loss, cosine_lr, generator, seeds, to_tensor, torch_threads
from .nn.leakage import gaussian_mi, noise_baseline_mi
from .nn.release import SweepRelease, build_release, member_tensors
from .nn.sweep import init_members
from .ppan_net import PPANNet
from .registry import register

SCHEDULES = ("default", "paper")
CONSTRAINTS = ("lagrangian", "mean-penalty", "sample-penalty")
INITS = ("shrink", "noise")

#: the tuned schedule (see the module docstring and tests/benchmarks/test_bench_learners_continuous.py)
DEFAULT: dict[str, Any] = {
    "steps": 6000, "batch_size": 256, "adversary_steps": 0, "lr": 5e-3, "hidden": (32, 32),
    "adversary_hidden": (16, 16), "constraint": "lagrangian", "penalty": 1.0, "dual_lr": 0.02,
    "average_fraction": 0.3, "init": "shrink", "whiten": True, "residual": True, "cosine": True,
}
#: PPAN §III-B (widths, lambda and seed-noise size depend on the task, see ``resolved``)
PAPER: dict[str, Any] = {
    "epochs": 250, "batch_size": 200, "adversary_steps": 5, "lr": 1e-3, "constraint": "sample-penalty",
    "dual_lr": 0.02, "average_fraction": 0.0, "init": "noise", "whiten": False, "residual": False,
    "cosine": False,
}
_OVERRIDES = ("steps", "epochs", "batch_size", "adversary_steps", "lr", "adversary_lr", "hidden",
              "adversary_hidden", "constraint", "penalty", "dual_lr", "average_fraction", "init", "whiten",
              "adversary_components", "n_noise")


class _PPANContinuous(Learner):
    """PPAN with continuous releases; ``family`` is fixed by each registered subclass.

    Every hyper-parameter left None takes the schedule's value (:meth:`resolved`).
    ``steps`` (mechanism updates) wins over ``epochs``.
    """

    family: ClassVar[str] = ""
    #: components of the default schedule's adversary for a continuous S (1: Gaussian)
    mixture_adversary: ClassVar[int] = 5
    serves = ("gaussian", "mixture")
    observations = ("useful", "full")
    privacies = ("mi",)
    test_params = {"steps": 12, "batch_size": 64, "hidden": (8,), "adversary_hidden": (8,), "max_restarts": 0}

    def __init__(self, schedule: str = "default", steps: int | None = None, epochs: int | None = None,
                 batch_size: int | None = None, adversary_steps: int | None = None, lr: float | None = None,
                 adversary_lr: float | None = None, hidden: tuple[int, ...] | None = None,
                 adversary_hidden: tuple[int, ...] | None = None, constraint: str | None = None,
                 penalty: float | None = None, dual_lr: float | None = None,
                 average_fraction: float | None = None, init: str | None = None, whiten: bool | None = None,
                 adversary_components: int | None = None, n_noise: int | None = None, n_components: int = 3,
                 activation: str = "relu",
                 threads: int | None = 1, max_restarts: int = 2, collapse_tol: float = 0.02) -> None:
        self.schedule = schedule
        self.steps = steps
        self.epochs = epochs
        self.batch_size = batch_size
        self.adversary_steps = adversary_steps
        self.lr = lr
        self.adversary_lr = adversary_lr
        self.hidden = hidden
        self.adversary_hidden = adversary_hidden
        self.constraint = constraint
        self.penalty = penalty
        self.dual_lr = dual_lr
        self.average_fraction = average_fraction
        self.init = init
        self.whiten = whiten
        self.adversary_components = adversary_components
        self.n_noise = n_noise
        self.n_components = n_components
        self.activation = activation
        self.threads = threads
        self.max_restarts = max_restarts
        self.collapse_tol = collapse_tol

    # ------------------------------------------------------------------
    def resolved(self, task: Task, n: int) -> dict[str, Any]:
        """The hyper-parameters used for ``task`` with ``n`` training samples (validated)."""
        check_choice("schedule", self.schedule, SCHEDULES)
        scalar = task.d_u == 1 and (task.kind == "mixture" or task.d_s == 1)
        if self.schedule == "paper":
            width = 5 if scalar else 20
            hp = dict(PAPER, hidden=(width, width), adversary_hidden=(width, width),
                      penalty=50.0 if (task.observation == "full" and scalar) else 10.0)
        else:
            hp = dict(DEFAULT)
        hp.update(n_noise=1 if scalar else 8, adversary_lr=None,
                  adversary_components=self.mixture_adversary if self.schedule == "default" else 1)
        for key in _OVERRIDES:
            if getattr(self, key) is not None:
                hp[key] = getattr(self, key)
        if self.steps is None and self.epochs is not None:
            hp["steps"] = None
        if hp["adversary_lr"] is None:
            hp["adversary_lr"] = hp["lr"]
        check_choice("constraint", hp["constraint"], CONSTRAINTS)
        check_choice("init", hp["init"], INITS)
        check_choice("activation", self.activation, ("relu", "tanh", "elu", "leaky_relu"))
        if not isinstance(hp["whiten"], (bool, np.bool_)):
            raise InputError(f"whiten={hp['whiten']!r} must be True or False")
        for key in ("batch_size", "n_noise", "adversary_components"):
            _check_int(key, hp[key])
        _check_int("adversary_steps", hp["adversary_steps"], 0)
        _check_int("n_components", self.n_components)
        _check_int("max_restarts", self.max_restarts, 0)
        if self.threads is not None:
            _check_int("threads", self.threads)
        for key in ("lr", "adversary_lr", "penalty", "dual_lr"):
            _check_number(key, hp[key], lo=0.0, open_lo=True)
        _check_number("average_fraction", hp["average_fraction"], lo=0.0, hi=1.0)
        _check_number("collapse_tol", self.collapse_tol, lo=0.0)
        for key in ("hidden", "adversary_hidden"):
            if isinstance(hp[key], (int, np.integer)) or not hasattr(hp[key], "__iter__"):
                raise InputError(f"{key}={hp[key]!r} must be a tuple of layer widths")
            hp[key] = tuple(hp[key])
            for h in hp[key]:
                _check_int(key, h)
        hp["batch_size"] = min(int(hp["batch_size"]), n)
        if hp.get("steps") is not None:
            _check_int("steps", hp["steps"])
        else:
            _check_int("epochs", hp["epochs"])
            hp["steps"] = int(hp["epochs"]) * math.ceil(n / hp["batch_size"])
        return hp

    def _config(self, task: Task, hp: dict[str, Any]) -> dict[str, Any]:
        cfg: dict[str, Any] = {"family": self.family, "d_w": task.d_w, "d_u": task.d_u}
        if self.family == "linear":
            cfg["bias"] = task.kind != "gaussian"
        else:
            cfg.update(hidden=list(hp["hidden"]), activation=self.activation)
        if self.family == "seed":
            cfg.update(n_noise=int(hp["n_noise"]), residual=bool(hp["residual"]))
        if self.family == "gmm":
            cfg["n_components"] = int(self.n_components)
        return cfg

    # ------------------------------------------------------------------
    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        hp = self.resolved(task, len(samples))
        cfg = self._config(task, hp)
        data = _Data(samples, task, device, int(hp["adversary_components"]))
        k, rounds = len(budgets), self.max_restarts + 1
        derived = seeds(seed, (k + 1) * rounds)  # member seeds per attempt, then one sweep seed per attempt
        best: list[dict[str, Any]] = [{} for _ in range(k)]
        history: list[list[float]] = [[] for _ in range(k)]
        todo = list(range(k))
        t0 = time.perf_counter()
        with torch_threads(self.threads):
            for attempt in range(rounds):
                if not todo:
                    break
                mseeds = [derived[attempt * k + i] for i in todo]
                sweep_seed = derived[k * rounds + attempt]
                mech, extra = _train(data, cfg, hp, budgets[todo], mseeds, sweep_seed, device)
                diag = _diagnose(mech, data, generator(sweep_seed ^ 1, device), self.collapse_tol)
                for j, i in enumerate(todo):
                    res = {**diag[j], "multiplier": float(extra["nu"][j]),
                           "training_adversary": extra["training_adversary"][j],
                           "adversary_loglik": float(extra["loglik"][j]), "attempt": attempt,
                           "member_seed": mseeds[j], "tensors": member_tensors(mech, j)}
                    history[i].append(res["excess"])
                    if not best[i] or res["excess"] < best[i]["excess"]:
                        best[i] = res
                todo = [i for j, i in enumerate(todo) if diag[j]["collapsed"]]
        wall = time.perf_counter() - t0
        mechs: list[Mechanism] = []
        for i, b in enumerate(budgets):
            res = dict(best[i])
            tensors = res.pop("tensors")
            res.update(family=self.family, schedule=self.schedule, constraint=hp["constraint"],
                       steps=int(hp["steps"]), restarts=len(history[i]) - 1, collapse_history=history[i],
                       sweep_size=k, train_time_s=wall)
            mechs.append(self._mechanism(task, float(b), cfg, tensors, res))
        return mechs

    def _mechanism(self, task: Task, budget: float, cfg: dict[str, Any], tensors: dict[str, torch.Tensor],
                   info: dict[str, Any]) -> Mechanism:
        if self.family == "linear" and task.kind == "gaussian":
            module = build_release(1, cfg)
            module.load_state_dict(tensors)
            A, B, noise = module.linear_gaussian()  # type: ignore[operator]
            if task.observation == "useful":
                B = np.zeros((task.d_u, task.d_s))
            return LinearGaussian(task, budget, A, B, noise, info)
        return PPANNet(task, budget, cfg, tensors, info)


def _check_int(name: str, value: Any, lo: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise InputError(f"{name}={value!r} must be an integer >= {lo}")


def _check_number(name: str, value: Any, lo: float | None = None, hi: float | None = None,
                  open_lo: bool = False) -> None:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (lo is None or (value > lo if open_lo else value >= lo)) and (hi is None or value <= hi)
    if not ok:
        rng = f"{'>' if open_lo else '>='} {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise InputError(f"{name}={value!r} must be a finite number {rng}")


class _Data:
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


def _train(data: _Data, cfg: dict[str, Any], hp: dict[str, Any], budgets: np.ndarray, member_seeds: list[int],
           sweep_seed: int, device: torch.device) -> tuple[SweepRelease, dict[str, np.ndarray]]:
    """Train one batched sweep: member i at budgets[i], initialised from member_seeds[i].

    Returns the release module and per-member ``nu`` (final multiplier) and ``loglik``
    (the adversary's mean log Q on the last batch).  NaN/inf -> TrainingError naming the step.
    """
    k = len(budgets)
    mech = build_release(k, cfg)
    adv = build_adversary(k, cfg["d_u"], hp["adversary_hidden"], data.n_out, skip=hp["whiten"])
    gens = [generator(s) for s in member_seeds]
    mech.setup(gens, data.w_mean, data.w_std, budgets, data.u_cov if hp["init"] == "shrink" else None)
    init_members(adv, gens)
    mech.to(device)
    adv.to(device)
    gen = generator(sweep_seed, device)
    delta = to_tensor(np.asarray(budgets, float), device)
    mech_params, adv_params = list(mech.parameters()), list(adv.parameters())
    opt_m = torch.optim.Adam(mech_params, lr=hp["lr"], foreach=True)
    opt_a = torch.optim.Adam(adv_params, lr=hp["adversary_lr"], foreach=True)
    simultaneous = int(hp["adversary_steps"]) == 0
    nu = torch.zeros(k, device=device)
    rho, lam, eta = float(hp["penalty"]), float(hp["penalty"]), float(hp["dual_lr"])
    n, bs, steps = data.n, int(hp["batch_size"]), int(hp["steps"])
    per_epoch = max(n // bs, 1)
    perm = torch.randperm(n, generator=gen, device=device)
    avg_from = int(steps * (1.0 - hp["average_fraction"]))
    avg = [p.detach().clone() for p in mech_params] if avg_from < steps else None
    n_avg = 0
    whiten = Whitener(k, float((data.u_std ** 2).mean())) if hp["whiten"] else None

    def privacy(z: torch.Tensor, pi: torch.Tensor | None, s: torch.Tensor, update: bool) -> torch.Tensor:
        """Mean log Q(s|z) per member, (k,); z (k, B, m, d_u), pi (k, B, m) or None."""
        m = z.shape[2]
        flat = z.reshape(k, -1, z.shape[-1])
        if whiten is None:
            x = (flat - data.u_mean) / data.u_std
        else:
            if update or whiten.W is None:
                whiten.update(flat.detach(), None if pi is None else pi.reshape(k, -1).detach())
            x = whiten(flat)
        lq = log_q(adv(x), s.repeat_interleave(m, dim=0) if m > 1 else s, data.discrete,
                   data.n_mix).reshape(k, -1, m)
        return (lq[..., 0] if pi is None else (pi * lq).sum(-1)).mean(1)

    priv = torch.zeros(k, device=device)
    for step in range(steps):
        if hp["cosine"]:
            cosine_lr(((opt_m, hp["lr"]), (opt_a, hp["adversary_lr"])), step, steps)
        j = step % per_epoch
        if j == 0 and step > 0:
            perm = torch.randperm(n, generator=gen, device=device)
        idx = perm[j * bs:(j + 1) * bs]
        w, u, s = data.w[idx][None].expand(k, -1, -1), data.u[idx], data.s[idx]
        for _ in range(0 if simultaneous else int(hp["adversary_steps"])):
            with torch.no_grad():
                z, pi = mech(w, gen)
            loss_a = -privacy(z, pi, s, update=True).sum()
            check_loss(loss_a, step, "adversary loss")
            opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            opt_a.step()
        z, pi = mech(w, gen)
        priv = privacy(z, pi, s, update=simultaneous)
        sq = ((z - u[None, :, None, :]) ** 2).sum(-1)  # (k, B, m)
        per_sample = sq[..., 0] if pi is None else (pi * sq).sum(-1)  # (k, B)
        g = per_sample.mean(1) - delta
        if hp["constraint"] == "sample-penalty":
            over = torch.relu(sq - delta[:, None, None]) ** 2
            pen = lam * (over[..., 0] if pi is None else (pi * over).sum(-1)).mean(1)
        elif hp["constraint"] == "mean-penalty":
            pen = lam * torch.relu(g) ** 2
        else:
            half = per_sample.shape[1] // 2
            g1, g2 = per_sample[:, :half].mean(1) - delta, per_sample[:, half:].mean(1) - delta
            pen = nu * g + 0.5 * rho * (g1.detach() * g2 + g2.detach() * g1)
        loss = (priv + pen).sum()
        check_loss(loss, step, "mechanism loss")
        opt_m.zero_grad(set_to_none=True)
        if simultaneous:  # one backward pass; the adversary ascends what the mechanism descends
            opt_a.zero_grad(set_to_none=True)
            loss.backward()
            for p in adv_params:
                p.grad.neg_()  # type: ignore[union-attr]
            opt_a.step()
        else:
            loss.backward(inputs=mech_params)
        opt_m.step()
        if hp["constraint"] == "lagrangian":
            nu = nu + eta * g.detach()
        if avg is not None and step >= avg_from:
            n_avg += 1
            with torch.no_grad():
                torch._foreach_lerp_(avg, [p.detach() for p in mech_params], 1.0 / n_avg)
    if avg is not None and n_avg:
        with torch.no_grad():
            for p, a in zip(mech_params, avg):
                p.copy_(a)
    for name, p in mech.named_parameters():
        check_loss(p.detach(), steps, f"mechanism parameter {name!r}")
    final = _final_adversary(mech, adv, whiten, data, generator(sweep_seed ^ 2, device), hp)
    return mech, {"nu": nu.cpu().numpy(), "loglik": priv.detach().cpu().numpy(), "training_adversary": final}


#: training rows (the first ones) on which the final adversary is scored after training
ADVERSARY_CHECK_N = 4096


@torch.no_grad()
def _final_adversary(mech: SweepRelease, adv: torch.nn.Module, whiten: Whitener | None, data: _Data,
                     gen: torch.Generator, hp: dict[str, Any]) -> list[dict[str, Any]]:
    """Per member: the final adversary's estimate on the first ``ADVERSARY_CHECK_N`` training rows.

    The final (averaged) release of those rows, drawn with its own generator ``gen`` (training
    is untouched), is scored by the final adversary through the final whitening statistics:
    ``mi`` = H^(S) + mean log Q(S|Z), H^(S) the plug-in entropy of the training labels
    (discrete S) or the Gaussian entropy of the standardised training S (continuous S; log Q
    is in the same standardised units, the -d_s/2 log 2 pi constant restored); ``accuracy``
    (discrete S) of argmax Q.  Mixture releases (``gmm``) average over components exactly.
    """
    k, m_chk = mech.k, min(data.n, ADVERSARY_CHECK_N)
    w = data.w[:m_chk][None].expand(k, -1, -1)
    s = data.s[:m_chk]
    z, pi = mech(w, gen)
    m = z.shape[2]
    flat = z.reshape(k, -1, z.shape[-1])
    x = (flat - data.u_mean) / data.u_std if whiten is None or whiten.W is None else whiten(flat)
    out = adv(x)
    lq = log_q(out, s.repeat_interleave(m, dim=0) if m > 1 else s, data.discrete, data.n_mix).reshape(k, -1, m)
    weights = torch.ones_like(lq) if pi is None else pi
    mean_lq = (weights * lq).sum(-1).mean(1).double().cpu().numpy()
    if data.discrete:
        labels = data.s.cpu().numpy()
        freq = np.bincount(labels, minlength=data.n_out) / len(labels)
        h_s = float(-(freq[freq > 0] * np.log(freq[freq > 0])).sum())
        hit = (out.argmax(-1).reshape(k, -1, m) == s.view(1, -1, 1)).to(weights.dtype)
        acc = (weights * hit).sum(-1).mean(1).double().cpu().numpy()
        how = "plug-in entropy of the training labels"
    else:
        s_std = data.s.double().cpu().numpy()
        d_s = s_std.shape[1]
        h_s = 0.5 * float(np.linalg.slogdet(2 * math.pi * math.e * np.atleast_2d(np.cov(s_std.T)))[1])
        mean_lq = mean_lq - 0.5 * d_s * math.log(2 * math.pi)
        acc = None
        how = "Gaussian entropy of the standardised training S (log Q in the same units)"
    note = f"final adversary vs the final release of the first {m_chk} training rows; H(S): {how}"
    return [{"mi": float(h_s + mean_lq[i]), "accuracy": None if acc is None else float(acc[i]),
             "h_s": h_s, "mean_log_q": float(mean_lq[i]), "n": m_chk, "note": note} for i in range(k)]


@torch.no_grad()
def _diagnose(mech: SweepRelease, data: _Data, gen: torch.Generator, collapse_tol: float) -> list[dict[str, Any]]:
    """Per member, on (up to 20000) training rows: distortion, noise variance E Var(Z|W)
    (two releases), Gaussian-approx leakage vs the noise baseline at that distortion."""
    k = mech.k
    n_chk = min(data.n, 20000)
    w = data.w[:n_chk][None].expand(k, -1, -1)
    z1 = mech.sample(w, gen).double().cpu().numpy()
    z2 = mech.sample(w, gen).double().cpu().numpy()
    u, s = data.u_np[:n_chk], data.s_np[:n_chk]
    out = []
    for i in range(k):
        dist = float(np.mean(np.sum((z1[i] - u) ** 2, axis=1)))
        cond_var = float(np.mean(np.sum((z1[i] - z2[i]) ** 2, axis=1)) / 2)
        leak, base = gaussian_mi(s, z1[i]), noise_baseline_mi(s, u, dist)
        out.append({"train_distortion": dist, "noise_variance": cond_var,
                    "noise_ratio": cond_var / max(dist, 1e-12), "leak_gauss_train": leak,
                    "baseline_gauss_train": base, "excess": leak - base, "collapsed": bool(leak - base > collapse_tol)})
    return out


@register
class PPANLinear(_PPANContinuous):
    name = "ppan-linear"
    summary = "PPAN, affine Gaussian mechanism Z = A U + B S + N(0, L^T L) (released as linear-gaussian)"
    family = "linear"
    mixture_adversary = 1  # S, Z jointly Gaussian for Gaussian data: the Gaussian posterior is exact


@register
class PPANGaussian(_PPANContinuous):
    name = "ppan-gaussian"
    summary = "PPAN §II-C2: Z = U + mu(W) + A(W) eps, (mu, A) from an MLP (reparameterised Gaussian)"
    family = "gaussian"


@register
class PPANSeed(_PPANContinuous):
    name = "ppan-seed"
    summary = "PPAN §II-C3 universal approximator: Z = f(W, eps), uniform seed noise as an input"
    family = "seed"


@register
class PPANGMM(_PPANContinuous):
    name = "ppan-gmm"
    summary = "PPAN appendix F: mixture-of-Gaussians release, exact expectation over components (29)"
    family = "gmm"

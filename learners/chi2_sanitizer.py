"""Chi-square sanitizer: Wang & Tay's data-driven chi-square privacy framework (§IV-A, §V-A).

The paper's sanitizer is ``Y = h_theta(X, N)`` (eq 24); its experiment (§V-A) uses
``Y = X + h'_theta(N)``.  Its privacy function is the square root of the
variational chi-square estimate (eq 21) of chi^2(p_{S,Y} || p_S p_Y), the
chi-square information between S and Y, computed with a critic ("generating
function") network g_phi; the sanitizer minimises objective (25) by alternating
critic and sanitizer steps (Algorithm 1).

Mapping to privbench (DESIGN.md vocabulary)
-------------------------------------------
Paper §V-A ("privacy-preserving hypothesis testing"): binary private hypothesis
S, a noisy measurement X of (S, U) that the sanitizer perturbs, the release Y,
and a utility hypothesis U scored by a classifier.  In a privbench ``mixture``
task the paper's S is our S (a label), the paper's X is our U (continuous, what
the mechanism observes: W = U, or W = (S, U) with observation ``full``), and
the paper's Y is our release Z.  The paper's utility hypothesis is the task's
utility label (``Task.utility``): ``formulation="utility"`` trains against a
classifier of it with eta as the budget, the paper's objective
(:mod:`~privbench.learners.chi2_utility`).  The default ``formulation="distortion"``
scores utility by E||Z - U||^2 instead, the paper's other example of a utility
function (§IV-A, "the reconstruction loss of X from Y by letting U = X"), and
reads budgets as distortion budgets (below).  The ``gaussian`` kind
(continuous S) uses the same estimator with permuted pairs for the product
p_S p_Z.

Mechanism: ``Y = U + a h(C, N)``, N ~ N(0, I) of ``noise_dim``, with
the noise network conditioned on C: nothing (``condition="none"``, the paper's
experiment), S (``"s"``: one-hot label, or the standardised S vector), or all of
W (``"w"``, the general eq 24).  ``"auto"`` is ``none`` for observation
``useful`` and ``s`` for ``full``.  With ``utility="mlp"`` the release is
Z = f_tau(Y), a utility network trained to reconstruct U from Y (the paper's
utility model tau; post-processing, so chi^2(S; Z) <= chi^2(S; Y)); with
``utility="identity"`` (default) Z = Y.

Budget: privbench budgets are distortion budgets, so objective (25)
``min L + lambda max(P, sqrt(eta))`` (utility loss plus a privacy penalty) is
used with the roles swapped: each budget b trains
``min_theta max_phi lambda max(sqrt(chi2_hat), sqrt(eta)) + rho [D_hat / b - 1]_+``
with D_hat the batch mean of ||Z - U||^2 (eta, the paper's privacy floor, is 0
by default).  With ``fill_budget`` (default) the noise is normalised to batch
power b, a = sqrt(b / E||h||^2), so the identity utility spends the budget
exactly and only the noise's shape is learned; this loses nothing, because
adding independent noise never increases chi^2(S; Z).  After training the
amplitude a is fixed on the whole training set (fixed noise draws; bisection
below the training amplitude where the utility network is used) so that the
training-set distortion is at most b.

Formulas verified numerically (tests/learners/test_chi2_sanitizer.py): (20) and
(21) attain chi^2 at g = 1 - p/q and never exceed it; the chi-square
information of a bivariate Gaussian with correlation rho is rho^2 / (1 - rho^2).
The paper's §III closed form chi^2(N(mu0, s^2) || N(mu1, s^2)) =
exp((mu0 - mu1)^2 / s^2) lacks the "- 1" (exp(.) - 1 is correct).

Measured (binary-gmm prior 0.5, mu 1, sigmas 1, observation useful, 4000 samples,
default schedule, budget 1): the learned noise is bimodal (kurtosis 1.2) and a
histogram-Bayes attacker on 4e5 fresh releases reaches 0.744 at distortion 0.993,
below the 0.760 of the best Gaussian noise (GAP Theorem 2): that optimum holds
within Gaussian noise only, not over all additive noise.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_HYPER_INT
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .chi2_utility import noise_amplitude, s_tensors, train_utility_sanitizers
from .nn.chi2 import Critic
from .nn.core import ADVERSARY_CHECK_N, check_loss, generator, init_module, seeds, to_tensor, torch_threads
from .nn.sweep import SweepMLP, sweep_slice
from .noise_sanitizer import NoiseSanitizer
from .registry import register
from .serves import Serves

CONDITIONS = ("auto", "none", "s", "w")
UTILITIES = ("identity", "mlp")
FORMULATIONS = ("distortion", "utility")

# schedule -> hyper-parameter defaults (paper: §V-A, 5-layer MLPs, Adam 1e-4, batch 500)
SCHEDULES: dict[str, dict[str, Any]] = {
    "paper": dict(steps=8000, batch_size=500, lr=1e-4, critic_lr=1e-4, hidden=32, layers=5, critic_steps=1),
    "default": dict(steps=1500, batch_size=500, lr=2e-3, critic_lr=2e-3, hidden=32, layers=3, critic_steps=2),
}


# --------------------------------------------------------------------------
# learner
# --------------------------------------------------------------------------


@register
class Chi2Sanitizer(Learner):
    """Wang & Tay's chi-square sanitizer (eq 21 critic, objective 25, Algorithm 1).

    Parameters
    ----------
    schedule : {"default", "paper"}
        Defaults for steps, batch_size, lr, critic_lr, hidden, layers, critic_steps
        (``paper``: Adam 1e-4, batch 500, 5-layer MLPs, one critic step per sanitizer step).
    steps, batch_size, lr, critic_lr, hidden, layers, critic_steps : optional overrides.
    condition : {"auto", "none", "s", "w"}
        What the noise network sees besides N (module docstring).
    noise_dim : int or None
        Dimension of N (None: d_u).
    utility : {"identity", "mlp"}
        Release Y itself, or f_tau(Y) with a utility (reconstruction) network.
    privacy_weight : float
        lambda of objective (25).
    penalty : float
        rho, the weight of the hinge [D/b - 1]_+ on the batch-mean distortion.
    eta : float
        The paper's privacy floor eta of (25) (0: none).
    lam_m : float
        The regulariser lambda_m of eq (21).
    fill_budget : bool
        Normalise the noise to batch power 1 so that the distortion equals the budget (identity
        utility) and the hinge never binds; loses nothing, since adding independent noise to
        use up a budget never increases chi2(S; Z) (data processing).
    formulation : {"distortion", "utility"}
        ``distortion`` (default): the budget is a distortion budget (module docstring).
        ``utility``: the paper's objective (25) with a utility classifier on the task's utility
        labels, the budget being the chi-square privacy level eta
        (:mod:`~privbench.learners.chi2_utility`); needs a task with ``Task.utility`` and
        ``utility="identity"``; ``penalty`` and ``fill_budget`` do not apply.
    threads : int or None
        torch intra-op threads while training on CPU.
    """

    name = "chi2-sanitizer"
    summary = "Wang & Tay chi-square sanitizer: Z = U + h(C, N), critic estimate of chi2(S;Z) (eq 21), objective (25)"
    serves = Serves(kinds=("mixture", "gaussian"))
    observations = ("useful", "full")
    privacies = ("chi2",)
    test_params = {"steps": 25, "batch_size": 64, "hidden": 8, "layers": 2}

    def __init__(self, schedule: str = "default", steps: int | None = None, batch_size: int | None = None,
                 lr: float | None = None, critic_lr: float | None = None, hidden: int | None = None,
                 layers: int | None = None, critic_steps: int | None = None, condition: str = "auto",
                 noise_dim: int | None = None, utility: str = "identity", privacy_weight: float = 1.0,
                 penalty: float = 10.0, eta: float = 0.0, lam_m: float = 1e-4, fill_budget: bool = True,
                 formulation: str = "distortion", threads: int | None = 1) -> None:
        self.schedule = schedule
        self.steps = steps
        self.batch_size = batch_size
        self.lr = lr
        self.critic_lr = critic_lr
        self.hidden = hidden
        self.layers = layers
        self.critic_steps = critic_steps
        self.condition = condition
        self.noise_dim = noise_dim
        self.utility = utility
        self.privacy_weight = privacy_weight
        self.penalty = penalty
        self.eta = eta
        self.lam_m = lam_m
        self.fill_budget = fill_budget
        self.formulation = formulation
        self.threads = threads

    def budget_kind(self) -> str:  # the privacy level eta under formulation="utility"
        return "chi2-level" if self.formulation == "utility" else "distortion"

    def refusal(self, task: Task) -> str | None:
        """The declarations' refusal, or: ``formulation="utility"`` on a task without utility labels."""
        why = super().refusal(task)
        if why is None and self.formulation == "utility" and not task.utility:
            why = "trains a utility classifier (formulation='utility'), but the task declares no utility labels"
        return why

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """Hyper-parameters after the schedule's defaults are applied (validated)."""
        check_choice("schedule", self.schedule, tuple(SCHEDULES))
        check_choice("condition", self.condition, CONDITIONS)
        check_choice("utility", self.utility, UTILITIES)
        check_choice("formulation", self.formulation, FORMULATIONS)
        if self.formulation == "utility" and self.utility != "identity":
            raise InputError(f"utility={self.utility!r} does not apply to formulation='utility' (allowed: identity; "
                             "the utility classifier is a training aid, the release is Y)")
        hp = dict(SCHEDULES[self.schedule])
        for key in hp:
            if getattr(self, key) is not None:
                hp[key] = getattr(self, key)
        for key in ("steps", "batch_size", "hidden", "layers", "critic_steps"):
            v = hp[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= MAX_HYPER_INT:
                raise InputError(f"{key}={hp[key]!r} must be an integer in [1, {MAX_HYPER_INT}]")
        if hp["layers"] < 2:
            raise InputError(f"layers={hp['layers']!r} must be >= 2")
        for key in ("lr", "critic_lr"):
            if not (isinstance(hp[key], (int, float)) and hp[key] > 0 and math.isfinite(hp[key])):
                raise InputError(f"{key}={hp[key]!r} must be a positive number")
        for key in ("privacy_weight", "penalty", "eta", "lam_m"):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and v >= 0 and math.isfinite(v)):
                raise InputError(f"{key}={v!r} must be a finite number >= 0")
        if self.noise_dim is not None and (not isinstance(self.noise_dim, int) or self.noise_dim < 1):
            raise InputError(f"noise_dim={self.noise_dim!r} must be a positive integer or None")
        return hp

    # ------------------------------------------------------------------
    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        hp = self.resolved(task, len(samples))
        cond = self.condition
        if cond == "auto":
            cond = "none" if task.observation == "useful" else "s"
        if cond == "s" and task.observation == "useful":
            raise InputError("condition='s' needs observation 'full' (the mechanism does not see S)")
        u = np.asarray(samples.u, dtype=float).reshape(len(samples), -1)
        config: dict[str, Any] = {
            "condition": cond, "noise_dim": int(self.noise_dim or task.d_u), "activation": "leaky_relu",
            "utility": self.utility, "utility_activation": "tanh",
            "u_mean": u.mean(0).tolist(), "u_std": np.maximum(u.std(0), 1e-9).tolist(),
        }
        if task.kind == "gaussian":
            sa = np.asarray(samples.s, dtype=float).reshape(len(samples), -1)
            config["s_mean"], config["s_std"] = sa.mean(0).tolist(), np.maximum(sa.std(0), 1e-9).tolist()
        probe = NoiseSanitizer(task, 0.0, {**config, "amplitude": 0.0}, {})
        w = task.observe(samples)
        cfeat = probe.conditioning(w)
        if self.formulation == "utility":  # every budget is an eta, 0 included
            config["amplitude"] = noise_amplitude(u)
            with torch_threads(self.threads if device.type == "cpu" else None):
                trained = train_utility_sanitizers(samples, task, budgets, cfeat, config, hp, self.privacy_weight,
                                                   seed, device)
            return [NoiseSanitizer(task, float(b), config, tensors, info) for b, (tensors, info) in zip(budgets, trained)]
        active = [i for i, b in enumerate(budgets) if b > 0]
        mechs: list[Mechanism | None] = [None] * len(budgets)
        with torch_threads(self.threads if device.type == "cpu" else None):
            trained = self._train(samples, task, budgets[active], cfeat, u, config, hp, seed, device) if active else []
        for i, (tensors, info) in zip(active, trained):
            mechs[i] = NoiseSanitizer(task, float(budgets[i]), {**config, "amplitude": info.pop("amplitude")},
                                      tensors, info)
        d_c = cfeat.shape[1] + config["noise_dim"]
        zero = {"h.0.weight": torch.zeros(d_c, task.d_u), "h.0.bias": torch.zeros(task.d_u)}  # type: ignore[arg-type]
        for i, b in enumerate(budgets):
            if mechs[i] is None:  # budget 0: Z = U
                mechs[i] = NoiseSanitizer(task, float(b), {**config, "amplitude": 0.0, "utility": "identity"}, zero,
                                          {"steps": 0, "training_adversary": {
                                              "mi": None, "accuracy": None, "chi2": None,
                                              "note": "budget 0: Z = U, no critic was trained"}})
        return mechs  # type: ignore[return-value]

    def _train(self, samples: Samples, task: Task, budgets: np.ndarray, cfeat: np.ndarray, u_np: np.ndarray,
               config: dict[str, Any], hp: dict[str, Any], seed: int, device: torch.device
               ) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
        k, n, d_u = len(budgets), len(samples), task.d_u
        s_np, g_np, b_np = seeds(seed, 3)
        rng = np.random.default_rng(s_np)
        gen = generator(g_np)
        ngen = generator(b_np, device)
        hidden, layers = hp["hidden"], hp["layers"]
        d_c, d_n = cfeat.shape[1], config["noise_dim"]
        h, f = _networks(k, d_c + d_n, d_u, hidden, layers, config["utility"] == "mlp", gen, device)
        label = task.kind == "mixture"
        amp = torch.as_tensor(np.sqrt(budgets), dtype=torch.float32, device=device).view(k, 1, 1)
        bud = torch.as_tensor(budgets, dtype=torch.float32, device=device)
        u_mean = torch.as_tensor(config["u_mean"], dtype=torch.float32, device=device)
        u_std = torch.as_tensor(config["u_std"], dtype=torch.float32, device=device)
        critic = Critic(k, d_u, None if label else task.d_s, task.n_s if label else None, hidden, layers, gen,
                         device, u_mean, u_std)
        ut, ct = to_tensor(u_np, device), to_tensor(cfeat, device)
        st, p_s = s_tensors(samples, task, label, device)
        gen_params = list(h.parameters())
        util_params = list(f.parameters()) if f is not None else []
        opt_g = torch.optim.Adam(gen_params + util_params, lr=hp["lr"])
        opt_c = torch.optim.Adam(critic.net.parameters(), lr=hp["critic_lr"])
        bs = min(hp["batch_size"], n)

        fill = self.fill_budget

        def forward(idx: torch.Tensor, noise: torch.Tensor, a: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
            """(Y, Z) for rows idx; amplitude a (k,) or, in training, sqrt(b) (normalised if fill)."""
            x = torch.cat([ct[idx].expand(k, -1, -1), noise], -1)
            hx = h(x)
            if a is None:
                scale = amp / hx.pow(2).sum(-1).mean(-1).sqrt().clamp_min(1e-12).view(k, 1, 1) if fill else amp
            else:
                scale = a.view(k, 1, 1)
            y = ut[idx] + scale * hx
            z = y if f is None else y + u_std * f((y - u_mean) / u_std)
            return y, z

        last: dict[str, float] = {}
        for step in range(hp["steps"]):
            idx = torch.as_tensor(rng.integers(0, n, bs), device=device)
            noise = torch.randn(k, bs, d_n, generator=ngen, device=device)
            y, z = forward(idx, noise)
            shift = int(rng.integers(1, bs)) if bs > 1 else 0
            for _ in range(hp["critic_steps"]):
                r = critic.ratio(y.detach(), st[idx], p_s, shift)
                check_loss(r, step, "chi-square critic objective (eq 21)")
                opt_c.zero_grad()
                (-r.sum()).backward()
                opt_c.step()
            r = critic.ratio(y, st[idx], p_s, shift)
            priv = torch.sqrt(r + 1e-12).clamp_min(math.sqrt(self.eta))
            dist = ((z - ut[idx]) ** 2).sum(-1).mean(-1)
            hinge = torch.relu(dist / bud - 1.0)
            loss_theta = (self.privacy_weight * priv + self.penalty * hinge).sum()
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
        out = self._calibrate(k, h, f, forward, ut, budgets, ngen, d_n, n, device, hp, last, fill)
        _score_final_critic(out, critic, forward, st, p_s, k, n, d_n, label, generator(b_np ^ 2, device), device)
        return out

    @staticmethod
    def _calibrate(k: int, h: SweepMLP, f: SweepMLP | None, forward: Any, ut: torch.Tensor, budgets: np.ndarray,
                   ngen: torch.Generator, d_n: int, n: int, device: torch.device, hp: dict[str, Any],
                   last: dict[str, Any], fill: bool) -> list[tuple[dict[str, torch.Tensor], dict[str, Any]]]:
        """Noise amplitude a per budget: the largest a <= a_max with training-set distortion <= budget.

        a_max is the training amplitude: sqrt(b / E||h||^2) with ``fill_budget`` (so the identity
        utility spends the budget exactly), else sqrt(b); bisection with fixed noise draws.
        """
        bud = torch.as_tensor(budgets, dtype=torch.float64, device=device)
        with torch.no_grad():
            idx = torch.arange(n, device=device)
            noise = torch.randn(k, n, d_n, generator=ngen, device=device)

            def dist(a: torch.Tensor) -> torch.Tensor:
                return ((forward(idx, noise, a.float())[1] - ut) ** 2).sum(-1).mean(-1).double()

            a_max = bud.sqrt()
            if fill:  # the training amplitude sqrt(b) / sqrt(E||h||^2), here on the whole training set
                ones = torch.ones(k, device=device)
                power = ((forward(idx, noise, ones)[0] - ut) ** 2).sum(-1).mean(-1).double()
                a_max = a_max / power.sqrt().clamp_min(1e-12)
            full = dist(a_max)
            lo, hi = torch.zeros_like(a_max), a_max.clone()
            for _ in range(40):
                mid = 0.5 * (lo + hi)
                ok = dist(mid) <= bud
                lo, hi = torch.where(ok, mid, lo), torch.where(ok, hi, mid)
            a = torch.where(full <= bud, a_max, lo)
            final = dist(a)
        out = []
        for i in range(k):
            tensors = sweep_slice(h, i, "h")
            if f is not None:
                tensors.update(sweep_slice(f, i, "f"))
            info = {"steps": hp["steps"], "amplitude": float(a[i]), "train_distortion": float(final[i]),
                    "over_budget": bool(final[i] > bud[i] * (1 + 1e-6)),
                    "last_batch_chi2_estimate": float(last["chi2_estimate"][i]) if last else None}
            out.append((tensors, info))
        return out


def _networks(k: int, d_in: int, d_u: int, hidden: int, layers: int, utility_mlp: bool, gen: torch.Generator,
              device: torch.device) -> tuple[SweepMLP, SweepMLP | None]:
    """The noise network h (last bias 0) and, for ``utility="mlp"``, the utility network f (last layer 0)."""
    h = init_module(SweepMLP(k, [d_in] + [hidden] * (layers - 1) + [d_u], "leaky_relu"), gen).to(device)
    with torch.no_grad():
        h.net[-1].bias.zero_()
    f = None
    if utility_mlp:
        f = init_module(SweepMLP(k, [d_u] + [hidden] * (layers - 1) + [d_u], "tanh"), gen).to(device)
        with torch.no_grad():
            f.net[-1].weight.zero_()
            f.net[-1].bias.zero_()
    return h, f


def _score_final_critic(out: list[tuple[dict[str, torch.Tensor], dict[str, Any]]], critic: Critic, forward: Any,
                        st: torch.Tensor, p_s: torch.Tensor | None, k: int, n: int, d_n: int, label: bool,
                        gen: torch.Generator, device: torch.device) -> None:
    """Add ``training_adversary`` to each member's info: the final critic vs the calibrated release."""
    with torch.no_grad():  # the final critic vs the calibrated release, on a fixed slice, its own noise
        m_chk = min(n, ADVERSARY_CHECK_N)
        idx = torch.arange(m_chk, device=device)
        noise = torch.randn(k, m_chk, d_n, generator=gen, device=device)
        a = torch.as_tensor([info["amplitude"] for _, info in out], dtype=torch.float32, device=device)
        y = forward(idx, noise, a)[0]
        chi2 = critic.ratio(y, st[idx], p_s, max(1, m_chk // 2)).double().cpu().numpy()
    note = (f"eq (21) with the final critic g_phi on the final sanitized Y of the first {m_chk} training rows "
            "(fresh noise, calibrated amplitude; the critic reads Y, before any utility network)"
            + ("" if label else "; product pairs by rolling S by half the rows")
            + "; a lower bound on chi^2(S;Y) up to sampling error; no MI surrogate (mi: None)")
    for i, (_, info) in enumerate(out):
        info["training_adversary"] = {"mi": None, "accuracy": None, "chi2": float(chi2[i]), "n": m_chk,
                                      "note": note}

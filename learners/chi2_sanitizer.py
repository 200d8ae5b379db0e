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
from .chi2_sets import Chi2Sets, train_distortion_sanitizers
from .chi2_utility import noise_amplitude, train_utility_sanitizers
from .nn.core import torch_threads
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
    batches_fits = True  # a case's repetitions: one sweep over every set's budgets (chi2_sets.Chi2Sets)

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        return self._fit_many([samples], task, budgets, [seed], device)[0]

    def _fit_many(self, samples_list: list[Samples], task: Task, budgets: np.ndarray, seed_list: list[int],
                  device: Any) -> list[list[Mechanism]]:
        """One batched sweep over every set's budgets (:mod:`.chi2_sets`; the utility formulation's in
        :mod:`.chi2_utility`), set r's members seeded, fed and drawn as in a fit of set r alone."""
        hp = self.resolved(task, len(samples_list[0]))
        cond = self.condition
        if cond == "auto":
            cond = "none" if task.observation == "useful" else "s"
        if cond == "s" and task.observation == "useful":
            raise InputError("condition='s' needs observation 'full' (the mechanism does not see S)")
        us = [np.asarray(s.u, dtype=float).reshape(len(s), -1) for s in samples_list]
        configs = [self._mechanism_config(task, s, u, cond) for s, u in zip(samples_list, us)]
        cfeats = [NoiseSanitizer(task, 0.0, {**c, "amplitude": 0.0}, {}).conditioning(task.observe(s))
                  for c, s in zip(configs, samples_list)]
        if self.formulation == "utility":  # every budget is an eta, 0 included
            configs = [{**c, "amplitude": noise_amplitude(u)} for c, u in zip(configs, us)]
            sets = Chi2Sets(samples_list, task, us, cfeats, configs, seed_list, len(budgets), device)
            with torch_threads(self.threads if device.type == "cpu" else None):
                trained = train_utility_sanitizers(sets, task, budgets, configs[0]["noise_dim"],
                                                   [c["amplitude"] for c in configs], [s.utility for s in samples_list],
                                                   hp, self.privacy_weight)
            return [[NoiseSanitizer(task, float(b), c, tensors, info) for b, (tensors, info) in zip(budgets, t)]
                    for c, t in zip(configs, trained)]
        active = [i for i, b in enumerate(budgets) if b > 0]
        trained: list[list[Any]] = [[] for _ in samples_list]
        if active:
            sets = Chi2Sets(samples_list, task, us, cfeats, configs, seed_list, len(active), device)
            with torch_threads(self.threads if device.type == "cpu" else None):
                trained = train_distortion_sanitizers(sets, task, budgets[active], configs[0]["noise_dim"], hp,
                                                      self.utility == "mlp", self.fill_budget, self.privacy_weight,
                                                      self.penalty, self.eta)
        return [self._mechanisms(task, budgets, active, c, cf, t) for c, cf, t in zip(configs, cfeats, trained)]

    def _mechanism_config(self, task: Task, samples: Samples, u: np.ndarray, cond: str) -> dict[str, Any]:
        """The mechanism's fixed configuration for one training set (its standardisations, its noise size)."""
        config: dict[str, Any] = {
            "condition": cond, "noise_dim": int(self.noise_dim or task.d_u), "activation": "leaky_relu",
            "utility": self.utility, "utility_activation": "tanh",
            "u_mean": u.mean(0).tolist(), "u_std": np.maximum(u.std(0), 1e-9).tolist(),
        }
        if task.kind == "gaussian":
            sa = np.asarray(samples.s, dtype=float).reshape(len(samples), -1)
            config["s_mean"], config["s_std"] = sa.mean(0).tolist(), np.maximum(sa.std(0), 1e-9).tolist()
        return config

    @staticmethod
    def _mechanisms(task: Task, budgets: np.ndarray, active: list[int], config: dict[str, Any], cfeat: np.ndarray,
                    trained: list[tuple[dict[str, torch.Tensor], dict[str, Any]]]) -> list[Mechanism]:
        """One set's mechanisms: the trained members at the active budgets, Z = U at budget 0."""
        mechs: list[Mechanism | None] = [None] * len(budgets)
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

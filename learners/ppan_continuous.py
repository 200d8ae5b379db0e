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

ppan-seed's tuned values (:attr:`PPANSeed.tuned`): ``affine`` Z = W M + c + eps L + f(W, eps) with
``seed_noise="gaussian"`` eps ~ N(0, I) (the affine part started at the shrink-and-noise release, f's
last layer at zero: the optimal linear-Gaussian release, reverse water-filling, and the constant
release are in the family with f = 0), and ``gaussian_term=0.5``: the mechanism minimises
``(1 - w) E log Q(S|Z) + w I_G(S; Z)``, I_G the Gaussian approximation of the batch (log-det formula,
:func:`~privbench.learners.nn.continuous_game.batch_gaussian_mi`; continuous S only), exact where the
release is linear-Gaussian and the adversary's mixture catches what it cannot see; and ``residual_penalty=5``:
plus 5 E||f||^2 / tr cov U, so that f stays 0 unless it buys leakage (M with f = -W M cancelling it was a
flat direction of the game: at D = 2.5 on Fig. 4 the gain stayed, leaving ~0.004 nats of nonlinear leakage
that KSG saw and neither training term did; with f held at 0 the Gaussian term sees W M and sends it
to 0, the constant release).  With the plain
seed MLP (``affine=False``, uniform noise, ``gaussian_term=0``, the values before) the generator hid
its nonlinear release from the mixture adversary instead of becoming constant: on PPAN Fig. 4 the
bench's headline gap was 0.17 nats median, 0.74 worst (KSG at D = 2.5 >= the total variance).

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

Budget calibration (``calibrate=True``, :mod:`privbench.learners.calibration`): after training, a
member whose release of the training rows (fresh noise) is above its budget is scaled about its
mean and, if need be, blended with U down to ``budget - budget_margin`` standard errors (default 0), so that a
short or unconverged schedule still meets its budget on fresh data; ``info["budget_calibration"]``.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import numpy as np
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_HYPER_INT
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .calibration import budget_calibration, training_releases
from .mechanisms import LinearGaussian
from .nn.bundle import Bundle, Streams
from .nn.continuous_game import TrainingData, diagnose, train_sweep
from .nn.core import generator, seeds, torch_threads
from .nn.release import build_release, member_tensors
from .ppan_net import PPANNet
from .registry import register
from .serves import Serves

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
              "adversary_components", "n_noise", "affine", "seed_noise", "gaussian_term", "residual_penalty")
SEED_NOISES = ("uniform", "gaussian")
#: training rows released (twice) to measure and calibrate the distortion after training
CALIBRATION_ROWS = 20000


class _PPANContinuous(Learner):
    """PPAN with continuous releases; ``family`` is fixed by each registered subclass.

    Every hyper-parameter left None takes the schedule's value (:meth:`resolved`).
    ``steps`` (mechanism updates) wins over ``epochs``.
    """

    family: ClassVar[str] = ""
    #: the family's own values of the default schedule, over :data:`DEFAULT`
    tuned: ClassVar[dict[str, Any]] = {}
    #: components of the default schedule's adversary for a continuous S (1: Gaussian)
    mixture_adversary: ClassVar[int] = 5
    serves = Serves(kinds=("gaussian", "mixture"))
    observations = ("useful", "full")
    privacies = ("mi",)
    test_params = {"steps": 12, "batch_size": 64, "hidden": (8,), "adversary_hidden": (8,), "max_restarts": 0}

    def __init__(self, schedule: str = "default", steps: int | None = None, epochs: int | None = None,
                 batch_size: int | None = None, adversary_steps: int | None = None, lr: float | None = None,
                 adversary_lr: float | None = None, hidden: tuple[int, ...] | None = None,
                 adversary_hidden: tuple[int, ...] | None = None, constraint: str | None = None,
                 penalty: float | None = None, dual_lr: float | None = None,
                 average_fraction: float | None = None, init: str | None = None, whiten: bool | None = None,
                 adversary_components: int | None = None, n_noise: int | None = None, affine: bool | None = None,
                 seed_noise: str | None = None, gaussian_term: float | None = None,
                 residual_penalty: float | None = None, n_components: int = 3, activation: str = "relu",
                 threads: int | None = 1, max_restarts: int = 2, collapse_tol: float = 0.02,
                 calibrate: bool = True, budget_margin: float = 0.0) -> None:
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
        self.affine = affine
        self.seed_noise = seed_noise
        self.gaussian_term = gaussian_term
        self.residual_penalty = residual_penalty
        self.n_components = n_components
        self.activation = activation
        self.threads = threads
        self.max_restarts = max_restarts
        self.collapse_tol = collapse_tol
        self.calibrate = calibrate
        self.budget_margin = budget_margin

    # ------------------------------------------------------------------
    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The hyper-parameters used for ``task`` with ``n_train`` training samples (validated)."""
        check_choice("schedule", self.schedule, SCHEDULES)
        scalar = task.d_u == 1 and (task.kind == "mixture" or task.d_s == 1)
        if self.schedule == "paper":
            width = 5 if scalar else 20
            hp = dict(PAPER, hidden=(width, width), adversary_hidden=(width, width),
                      penalty=50.0 if (task.observation == "full" and scalar) else 10.0)
        else:
            hp = dict(DEFAULT, **self.tuned)
        hp = {"affine": False, "seed_noise": "uniform", "gaussian_term": 0.0, "residual_penalty": 0.0, **hp}
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
        check_choice("seed_noise", hp["seed_noise"], SEED_NOISES)
        for key in ("whiten", "affine"):
            if not isinstance(hp[key], (bool, np.bool_)):
                raise InputError(f"{key}={hp[key]!r} must be True or False")
        for key in ("batch_size", "n_noise", "adversary_components"):
            _check_int(key, hp[key])
        _check_int("adversary_steps", hp["adversary_steps"], 0)
        _check_int("n_components", self.n_components)
        _check_int("max_restarts", self.max_restarts, 0)
        if self.threads is not None:
            _check_int("threads", self.threads)
        for key in ("lr", "adversary_lr", "penalty", "dual_lr"):
            _check_number(key, hp[key], lo=0.0, open_lo=True)
        _check_number("gaussian_term", hp["gaussian_term"], lo=0.0, hi=1.0)
        _check_number("residual_penalty", hp["residual_penalty"], lo=0.0)
        _check_number("average_fraction", hp["average_fraction"], lo=0.0, hi=1.0)
        _check_number("collapse_tol", self.collapse_tol, lo=0.0)
        _check_number("budget_margin", self.budget_margin, lo=0.0)
        if not isinstance(self.calibrate, (bool, np.bool_)):
            raise InputError(f"calibrate={self.calibrate!r} must be True or False")
        for key in ("hidden", "adversary_hidden"):
            if isinstance(hp[key], (int, np.integer)) or not hasattr(hp[key], "__iter__"):
                raise InputError(f"{key}={hp[key]!r} must be a tuple of layer widths")
            hp[key] = tuple(hp[key])
            for h in hp[key]:
                _check_int(key, h)
        hp["batch_size"] = min(int(hp["batch_size"]), n_train)
        if hp.get("steps") is not None:
            _check_int("steps", hp["steps"])
        else:
            _check_int("epochs", hp["epochs"])
            hp["steps"] = int(hp["epochs"]) * math.ceil(n_train / hp["batch_size"])
        return hp

    def _architecture(self, task: Task, hp: dict[str, Any]) -> dict[str, Any]:
        cfg: dict[str, Any] = {"family": self.family, "d_w": task.d_w, "d_u": task.d_u}
        if self.family == "linear":
            cfg["bias"] = task.kind != "gaussian"
        else:
            cfg.update(hidden=list(hp["hidden"]), activation=self.activation)
        if self.family == "seed":
            cfg.update(n_noise=int(hp["n_noise"]), residual=bool(hp["residual"]))
            if hp.get("affine"):
                cfg.update(affine=True, seed_noise=str(hp["seed_noise"]))
        if self.family == "gmm":
            cfg["n_components"] = int(self.n_components)
        return cfg

    # ------------------------------------------------------------------
    batches_fits = True

    def batch_group(self, task: Task, n_train: int) -> Any:
        """Sets of any size share a network when their hyper-parameters agree (``batch_size`` and, with
        ``epochs``, ``steps`` depend on the size): each member draws its own set's minibatches."""
        return repr(sorted(self.resolved(task, n_train).items()))

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        return self._fit_many([samples], task, budgets, [seed], device)[0]

    def _fit_many(self, samples_list: list[Samples], task: Task, budgets: np.ndarray, seed_list: list[int],
                  device: Any) -> list[list[Mechanism]]:
        """One batched sweep per attempt over every training set's members (a :class:`Bundle`): set r's
        members get exactly the seeds, minibatches and noise of a fit of set r alone."""
        hp = self.resolved(task, len(samples_list[0]))
        cfg = self._architecture(task, hp)
        datas = [TrainingData(s, task, device, int(hp["adversary_components"])) for s in samples_list]
        k, rounds, n_sets = len(budgets), self.max_restarts + 1, len(datas)
        derived = [seeds(sd, (k + 1) * rounds) for sd in seed_list]  # member seeds per attempt, then sweep seeds
        best: list[list[dict[str, Any]]] = [[{} for _ in range(k)] for _ in range(n_sets)]
        history: list[list[list[float]]] = [[[] for _ in range(k)] for _ in range(n_sets)]
        todo = [list(range(k)) for _ in range(n_sets)]
        t0 = time.perf_counter()
        with torch_threads(self.threads):
            for attempt in range(rounds):
                sets = [r for r in range(n_sets) if todo[r]]
                if not sets:
                    break
                members = [(r, i) for r in sets for i in todo[r]]
                mseeds = [derived[r][attempt * k + i] for r, i in members]
                sweep_seeds = [derived[r][k * rounds + attempt] for r in sets]
                bundle = Bundle([datas[r] for r in sets], [len(todo[r]) for r in sets])
                mech, extra = train_sweep(bundle, cfg, hp, budgets[[i for _, i in members]], mseeds, sweep_seeds,
                                          device)
                diag = diagnose(mech, bundle, Streams([generator(x ^ 1, device) for x in sweep_seeds],
                                                      bundle.counts), self.collapse_tol)
                for j, (r, i) in enumerate(members):
                    res = {**diag[j], "multiplier": float(extra["nu"][j]),
                           "training_adversary": extra["training_adversary"][j],
                           "adversary_loglik": float(extra["loglik"][j]), "attempt": attempt,
                           "member_seed": mseeds[j], "tensors": member_tensors(mech, j)}
                    history[r][i].append(res["excess"])
                    if not best[r][i] or res["excess"] < best[r][i]["excess"]:
                        best[r][i] = res
                todo = [[i for j, (r2, i) in enumerate(members) if r2 == r and diag[j]["collapsed"]]
                        for r in range(n_sets)]
        wall = (time.perf_counter() - t0) / n_sets
        return [self._mechanisms(samples_list[r], task, budgets, cfg, hp, best[r], history[r], wall)
                for r in range(n_sets)]

    def _mechanisms(self, samples: Samples, task: Task, budgets: np.ndarray, cfg: dict[str, Any],
                    hp: dict[str, Any], best: list[dict[str, Any]], history: list[list[float]],
                    wall: float) -> list[Mechanism]:
        k = len(budgets)
        mechs: list[Mechanism] = []
        for i, b in enumerate(budgets):
            res = dict(best[i])
            tensors = res.pop("tensors")
            res.update(family=self.family, schedule=self.schedule, constraint=hp["constraint"],
                       steps=int(hp["steps"]), restarts=len(history[i]) - 1, collapse_history=history[i],
                       sweep_size=k, train_time_s=wall)
            mechs.append(self._calibrated(samples, task, self._mechanism(task, float(b), cfg, tensors, res), cfg,
                                           tensors))
        return mechs

    def _calibrated(self, samples: Samples, task: Task, mech: Mechanism, cfg: dict[str, Any],
                    tensors: dict[str, torch.Tensor]) -> Mechanism:
        """``mech`` after the budget calibration (:mod:`.calibration`) on up to ``CALIBRATION_ROWS``
        training rows released twice with fresh noise (``calibrate=False``: ``mech`` as trained)."""
        if not self.calibrate:
            return mech
        rng = np.random.default_rng([int(mech.info["member_seed"]), 3])
        z1, z2, u = training_releases(samples, task, mech, CALIBRATION_ROWS, rng)
        linear = isinstance(mech, LinearGaussian)
        cal = budget_calibration(z1, z2, u, mech.budget, float(self.budget_margin), centre=not linear)
        info = {**mech.info, "budget_calibration": cal}
        if not cal["applied"]:
            mech.info = info
            return mech
        ta = info.get("training_adversary")
        if isinstance(ta, dict):  # the learner's own claim describes the release it trained, not this one
            info["training_adversary"] = {**ta, "calibrated": False,
                                          "note": f"{ta.get('note', '')}; of the release before the budget "
                                                  "calibration (info['budget_calibration'])"}
        P, Q, b = (np.asarray(cal[key]) for key in ("P", "Q", "b"))
        if linear:
            A, B, noise = mech.A, mech.B, mech.noise_cov  # type: ignore[attr-defined]
            return LinearGaussian(task, mech.budget, P @ A + Q, P @ B, P @ noise @ P.T, info)
        config = {**cfg, "calibration": {"P": cal["P"], "Q": cal["Q"], "b": cal["b"]}}
        return PPANNet(task, mech.budget, config, tensors, info)

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
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= MAX_HYPER_INT:
        raise InputError(f"{name}={value!r} must be an integer in [{lo}, {MAX_HYPER_INT}]")


def _check_number(name: str, value: Any, lo: float | None = None, hi: float | None = None,
                  open_lo: bool = False) -> None:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (lo is None or (value > lo if open_lo else value >= lo)) and (hi is None or value <= hi)
    if not ok:
        rng = f"{'>' if open_lo else '>='} {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise InputError(f"{name}={value!r} must be a finite number {rng}")


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
    tuned = {"affine": True, "seed_noise": "gaussian", "gaussian_term": 0.5, "residual_penalty": 5.0}


@register
class PPANGMM(_PPANContinuous):
    name = "ppan-gmm"
    summary = "PPAN appendix F: mixture-of-Gaussians release, exact expectation over components (29)"
    family = "gmm"

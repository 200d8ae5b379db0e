"""PPAN's image mechanism (Tripathy, Wang & Ishwar, §III-C, Figs 7-9): ``ppan-image``.

The mechanism is a "universal approximator" network (PPAN §II-C3): it maps the
observed image, concatenated with ``n_noise`` Uniform[-1, 1] seed-noise values, to
a released image Z in [0, 1]^d_u through a sigmoid output.  An adversary network
Q(S | Z) (softmax over the n_s labels) is trained to maximise E log Q(S | Z), the
variational lower bound of I(S; Z) - H(S) (PPAN eq. 2); the mechanism minimises

    E log Q(S | Z) + penalty * max(0, mean_batch d(U, Z) - budget)^2          (PPAN eq. 3)
                   [+ gamma * discriminator term, PPAN eq. 9]

with d the per-pixel binary cross-entropy of PPAN §III-C,
d(U, Z) = -(1/d_u) sum_i U_i log Z_i + (1 - U_i) log(1 - Z_i), averaged over the
batch before the penalty (the paper's budget-targeting variant of eq. 3).  With
``gamma > 0`` a discriminator D(Z) = P(Z is a release, not a real image) joins
the game as in eq. 9: it ascends gamma*(log D(z) + log(1 - D(u))) and the
mechanism descends gamma*log D(z) (schedule ``paper``) or the non-saturating
surrogate -gamma*log(1 - D(z)) (the other schedules; same fixed point).
Updates alternate: ``adv_steps`` adversary (and discriminator) steps on a batch,
then one mechanism step on the same batch (PPAN Appendix A; the paper uses 1).

Architectures (``arch``)
------------------------
``plain``  Z = sigmoid(bound(net(.))): the paper's generator; on the MNIST subset its releases
           start at a blur (about 0.19 nats/pixel, against the identity's 0.059).
``skip``   Z = sigmoid(bound(net(.) + logit(clamp(U, c, 1 - c)))): starts at Z close to U and
           stays sharp, but changing a saturated pixel takes a large logit step, so the
           adversary's gradient barely moves it: on the MNIST subset it left large budgets unused.
``gated``  Z = g clamp(U, c, 1 - c) + (1 - g) sigmoid(bound(r)), [r, h] = net(.), a per-pixel gate
           g = sigmoid(h + gate_bias) starting at 0.95: the release starts as the image, and the
           mechanism trades it pixel by pixel for a generated one, as far as the budget allows.

The adversary (:class:`.nn.image_game.ImageAdversary`) mirrors the bench's fresh classifier:
per-pixel standardisation of the release, then a ReLU MLP; ``adv_standardise=False`` and tanh
give the paper's plain MLP.  It trains on 85% of the training rows only; its accuracy on the
other 15% is the ``training_adversary`` accuracy a mechanism records.

Schedules
---------
``paper``    the paper's networks: mechanism (d_u + 20) -> 1000 -> 1000 -> d_u (plain),
             adversary d_u -> 1000 -> 1000 -> n_s, discriminator d_u -> 500 -> 1,
             tanh, Adam(1e-3), batches of 100, 50 epochs, one adversary step per
             mechanism step.  Heavy on a CPU (about 4.4M weights per budget).
``default``  the paper's design, smaller: 256-unit layers, 100 epochs, one adversary step, the
             discriminator's non-saturating mechanism loss (the paper suite overrides widths and epochs).
``sharp``    the CPU configuration of the sharp design: gated mechanism 128 -> 128 ReLU started at
             its budget (``start="budget"``), the paper's E log Q(S|Z) term, adversary and discriminator one
             standardised layer of 128, 20 epochs of batches of 50, Adam 5e-4 for the mechanism (cosine
             decay), 2e-3 and 3 steps per mechanism step for the adversary (two time scales), one
             discriminator step per mechanism step.
``gpu``      the sharp design at GPU scale: 1024 x 3 mechanism, 512-unit adversary and discriminator,
             64 noise inputs, 120 epochs of 100, mechanism 3e-4, adversary 1e-3 and 3 steps.

The paper's MNIST runs trade off with a Lagrange weight (lambda from 35 to 2); here
every run targets a budget through the penalty above (PPAN §II-B's variant).

Budgets are batched: one network per budget, all trained as one with the sweep layers of
:mod:`.nn.sweep` (independent weights, one Adam state each). On an H100 five budgets cost what one
does (about 5 ms a step, default and paper, measured before the sharp design); on one CPU thread the
cost grows linearly (default: 11 ms a step per budget, paper: 55 ms, 3,500 MNIST-subset images).
The soft logit bound ``logit_max * tanh(logit / logit_max)`` keeps releases strictly inside (0, 1)
(cost below 1e-5 nats per pixel) so that the cross-entropy of a release is always finite.
After training, a member over its budget is blended with the training images' mean image where that
meets its budget, else with the image (:mod:`.image_calibration`), and
a new adversary trains against the frozen release before the learner reports (:mod:`.nn.image_refit`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch


from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .calibration import training_releases
from .image_calibration import image_budget_calibration
from .registry import register
from .nn.core import seeds, to_tensor, torch_threads
from .nn.image_game import ImageGame, entropy_of_labels, train_image_game
from .nn.image_refit import converge_adversary, converged_claim
from .nn.sweep import SweepLinear, SweepMLP
from .ppan_image_mechanism import ACTIVATIONS, ImageMLPMechanism
from .ppan_image_schedules import ARCHS, OBJECTIVES, OVERRIDABLE, SCHEDULES, STARTS
from .serves import Serves

CALIBRATION_ROWS = 5000  # training rows released (twice) to measure and calibrate the distortion
ANCHOR_CLAMP = 1e-6  # the calibration's anchor (the mean image) strictly inside (0, 1), as releases are


def sweep_linears(net: SweepMLP) -> list[SweepLinear]:
    return [m for m in net.net if isinstance(m, SweepLinear)]


@register
class PPANImage(Learner):
    """PPAN for images: seed-noise mechanism net, softmax adversary, per-pixel cross-entropy budget.

    Parameters
    ----------
    schedule : {"default", "sharp", "gpu", "paper"}
        Supplies every hyper-parameter left as None (see the module docstring).
    hidden, adv_hidden, disc_hidden : tuple of int or None
        Hidden layer widths of the mechanism, adversary and discriminator.
    n_noise : int or None
        Seed-noise dimension.
    epochs, batch_size, adv_steps : int or None
        Passes over the training set, batch size, adversary steps per mechanism step.
    lr, adv_lr : float or None
        Adam learning rates of the mechanism and of the adversary (and discriminator).
    penalty : float or None
        Weight of the squared budget excess max(0, mean d - budget)^2 (schedules: 1e4, sharp and gpu 1e5).
    gamma : float
        Discriminator weight (0: no discriminator; the paper shows gamma = 2).
    activation : str or None
        Hidden activation of the mechanism.
    arch : {"plain", "skip", "gated"} or None
        The mechanism's output (see the module docstring).
    skip : bool or None
        Older spelling: True is ``arch="skip"``, False ``arch="plain"`` (``arch`` wins).
    skip_clamp : float or None
        c of the sharp path clamp(U, c, 1 - c) (``skip``, ``gated``), in (0, 0.5).
    objective : {"xent", "confusion", "mi"} or None
        The mechanism's privacy term (see :meth:`.nn.image_game.ImageGame.privacy_loss`).
    start : {"image", "budget"} or None
        ``gated`` only: start at the image (gate sigmoid(gate_bias)), or each member at the blend
        of the image and the mean image whose distortion is its budget.
    gate_bias : float or None
        Starting logit of the gate of ``gated`` (3: the release starts 95% the image).
    free_gate : float or None
        ``start="budget"`` only: a member whose start would keep less than this of the image (its gate)
        starts image-free instead (sharp and gpu 0.25; 0: never).
    input_l1 : float or None
        Image-free members only: their image inputs' weights are soft-thresholded by this many Adam
        steps after every update, so that only a gradient that keeps asking for the image buys it (0: off).
    threads : int or None
        torch intra-op threads while training (None: leave torch's setting).
    calibrate : bool
        Blend a member over its budget with the image until it meets it (:mod:`.image_calibration`).
    budget_margin : float
        Standard errors of its measured distortion a calibrated member is brought below its budget.
    adversary_epochs : int
        After training (and calibration), a new adversary of the game's architecture trains against
        the frozen release for at most this many epochs (early stopping; :mod:`.nn.image_refit`), and
        its accuracy is the ``training_adversary`` claim (0: the game's adversary as the game left it).
    """

    name = "ppan-image"
    gpu_task_kinds = ("image",)
    summary = "PPAN §III-C: noise-seeded image mechanism vs softmax adversary, per-pixel xent budget"
    serves = Serves(kinds=("image",))
    observations = ("useful", "full")
    privacies = ("mi",)
    test_params = dict(hidden=(16,), adv_hidden=(16,), disc_hidden=(8,), n_noise=4, epochs=2, batch_size=32,
                       adversary_epochs=5)

    def __init__(self, schedule: str = "default", hidden: tuple[int, ...] | None = None,
                 adv_hidden: tuple[int, ...] | None = None, disc_hidden: tuple[int, ...] | None = None,
                 n_noise: int | None = None, epochs: int | None = None, batch_size: int | None = None,
                 adv_steps: int | None = None, lr: float | None = None, adv_lr: float | None = None,
                 penalty: float | None = None, gamma: float = 0.0, activation: str | None = None,
                 skip: bool | None = None, skip_clamp: float | None = None, arch: str | None = None,
                 gate_bias: float | None = None, objective: str | None = None,
                 start: str | None = None, free_gate: float | None = None, input_l1: float | None = None,
                 threads: int | None = 1, calibrate: bool = True,
                 budget_margin: float = 2.0, adversary_epochs: int = 200) -> None:
        self.schedule = schedule
        self.hidden = hidden
        self.adv_hidden = adv_hidden
        self.disc_hidden = disc_hidden
        self.n_noise = n_noise
        self.epochs = epochs
        self.batch_size = batch_size
        self.adv_steps = adv_steps
        self.lr = lr
        self.adv_lr = adv_lr
        self.penalty = penalty
        self.gamma = gamma
        self.activation = activation
        self.skip = skip
        self.skip_clamp = skip_clamp
        self.arch = arch
        self.gate_bias = gate_bias
        self.objective = objective
        self.start = start
        self.free_gate = free_gate
        self.input_l1 = input_l1
        self.threads = threads
        self.calibrate = calibrate
        self.budget_margin = budget_margin
        self.adversary_epochs = adversary_epochs

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The schedule's hyper-parameters with this learner's overrides (validated)."""
        check_choice("schedule", self.schedule, tuple(SCHEDULES))
        cfg = dict(SCHEDULES[self.schedule])
        if self.skip is not None:
            if not isinstance(self.skip, bool):
                raise InputError(f"skip={self.skip!r} must be True or False")
            cfg["arch"] = "skip" if self.skip else "plain"
        for key in OVERRIDABLE:
            if getattr(self, key) is not None:
                cfg[key] = getattr(self, key)
        for key, like in (("adv_lr", "lr"), ("adv_activation", "activation")):
            cfg[key] = cfg[like] if cfg[key] is None else cfg[key]
        for key in ("hidden", "adv_hidden", "disc_hidden"):
            cfg[key] = tuple(int(h) for h in cfg[key])
            if any(h < 1 for h in cfg[key]):
                raise InputError(f"{key}={cfg[key]!r} must hold positive layer widths")
        for key in ("n_noise", "epochs", "batch_size", "adv_steps", "adversary_epochs"):
            v = getattr(self, key) if key == "adversary_epochs" else cfg[key]
            lo = 0 if key in ("n_noise", "adversary_epochs") else 1
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise InputError(f"{key}={v!r} must be an integer >= {lo}")
        check_choice("arch", cfg["arch"], ARCHS)
        check_choice("objective", cfg["objective"], OBJECTIVES)
        check_choice("start", cfg["start"], STARTS)
        gb = cfg["gate_bias"]
        if isinstance(gb, bool) or not isinstance(gb, (int, float)) or not math.isfinite(gb):
            raise InputError(f"gate_bias={gb!r} must be a finite number")
        check_choice("activation", cfg["activation"], tuple(ACTIVATIONS))
        c = cfg["skip_clamp"]
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c < 0.5:
            raise InputError(f"skip_clamp={c!r} must be a number in (0, 0.5)")
        if not isinstance(self.calibrate, (bool, np.bool_)):
            raise InputError(f"calibrate={self.calibrate!r} must be True or False")
        if task.distortion not in ("xent", "mse") and self.calibrate:
            raise InputError(f"calibrate=True needs an xent or mse distortion, not {task.distortion!r}")
        for key, v in (("lr", cfg["lr"]), ("adv_lr", cfg["adv_lr"]), ("penalty", cfg["penalty"]),
                       ("gamma", self.gamma), ("budget_margin", self.budget_margin), ("input_l1", cfg["input_l1"]),
                       ("free_gate", cfg["free_gate"])):
            positive = key in ("lr", "adv_lr")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 \
                    or (positive and v == 0):
                raise InputError(f"{key}={v!r} must be a finite number {'> 0' if positive else '>= 0'}")
        if cfg["free_gate"] > 1:
            raise InputError(f"free_gate={cfg['free_gate']!r} must lie in [0, 1] (a fraction of the image)")
        return cfg

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        cfg = self.resolved(task, len(samples))
        s_init, s_train, s_refit = seeds(seed, 3)
        w, s = task.observe(samples), np.asarray(samples.s)
        with torch_threads(self.threads if device.type == "cpu" else None):
            game = ImageGame(task, len(budgets), cfg, s_init, device, float(self.gamma), float(cfg["penalty"]))
            final, step = train_image_game(game, w, samples.u, s, budgets, s_train, device)
            mechs = [self._calibrated(samples, task, m, seed, i)  # type: ignore[arg-type]
                     for i, m in enumerate(self._mechanisms(game.mech, final, samples, task, budgets, cfg, step))]
            if self.adversary_epochs:
                own = converge_adversary(game, to_tensor(w, device), to_tensor(samples.u, device),
                                         torch.as_tensor(s, dtype=torch.long, device=device), final["fit_rows"],
                                         [m.blend or 0.0 for m in mechs], s_refit,  # type: ignore[attr-defined]
                                         int(self.adversary_epochs), [m.anchor for m in mechs])  # type: ignore
                for i, m in enumerate(mechs):
                    m.info["training_adversary"] = converged_claim(m.info["training_adversary"], own, i)
        return mechs

    def _calibrated(self, samples: Samples, task: Task, mech: ImageMLPMechanism, seed: int, i: int) -> Mechanism:
        """``mech`` after the budget calibration (:mod:`.image_calibration`) on up to ``CALIBRATION_ROWS``
        training rows released twice with fresh noise (``calibrate=False``: ``mech`` as trained), its
        anchor the training images' mean image (inside [ANCHOR_CLAMP, 1 - ANCHOR_CLAMP])."""
        if not self.calibrate:
            return mech
        z1, z2, u = training_releases(samples, task, mech, CALIBRATION_ROWS, np.random.default_rng([int(seed), 3, i]))
        anchor = np.clip(np.asarray(samples.u, dtype=float).mean(0), ANCHOR_CLAMP, 1 - ANCHOR_CLAMP)
        cal = image_budget_calibration(z1, z2, u, mech.budget, float(self.budget_margin), str(task.distortion),
                                       anchor)
        info = {**mech.info, "budget_calibration": cal}
        if not cal["applied"]:
            mech.info = info
            return mech
        info["over_budget"] = bool(cal["calibrated_distortion"] > mech.budget * 1.05 + 1e-3)
        ta = info["training_adversary"]  # the game's claim describes the release it trained, not this one
        info["training_adversary"] = {**ta, "calibrated": False, "note": ta["note"] + "; of the release before the "
                                      "budget calibration (info['budget_calibration'])"}
        return ImageMLPMechanism(task, mech.budget, mech.weights, mech.biases, mech.n_noise, mech.activation,
                                 mech.skip_clamp, info, mech.gate_bias, cal["blend"],
                                 anchor if cal["toward"] == "anchor" else None)

    def _mechanisms(self, mech: SweepMLP, final: dict[str, list[float]], samples: Samples, task: Task,
                    budgets: np.ndarray, cfg: dict[str, Any], step: int) -> list[Mechanism]:
        """One ImageMLPMechanism per budget (member i of the sweep) with its training facts."""
        n = len(samples)
        gamma, penalty = float(self.gamma), float(cfg["penalty"])
        h_s = entropy_of_labels(np.asarray(samples.s), task.n_s)
        mechs: list[Mechanism] = []
        for i, b in enumerate(budgets):
            weights = [layer.weight[i].detach().cpu() for layer in sweep_linears(mech)]
            biases = [layer.bias[i, 0].detach().cpu() for layer in sweep_linears(mech)]
            info = {"schedule": self.schedule, "steps": step, "gamma": gamma, "penalty": penalty,
                    "train_distortion": final["dist"][i], "train_adversary_xent": final["xent"][i],
                    "over_budget": bool(final["dist"][i] > float(b) * 1.05 + 1e-3),
                    "training_adversary": {
                        "mi": h_s - final["xent"][i], "accuracy": final["accuracy_held"][i],
                        "accuracy_fit_rows": final["accuracy_fit"][i], "h_s": h_s, "n": n,
                        "n_held": final["n_held"][i],
                        "note": "final adversary vs the final mechanism: accuracy on the n_held training rows it "
                                "never trained on (the mechanism did), accuracy_fit_rows on the others; mi from "
                                "its cross-entropy on every training row (train_adversary_xent); H(S) the "
                                "plug-in entropy of the training labels"}}
            arch = cfg["arch"]
            mechs.append(ImageMLPMechanism(task, float(b), weights, biases, cfg["n_noise"], cfg["activation"],
                                           None if arch == "plain" else float(cfg["skip_clamp"]), info,
                                           float(cfg["gate_bias"]) if arch == "gated" else None))
        return mechs

"""GAP for finite alphabets (GAP paper §2.3, §3.2): privatizer vs computational adversary.

GAP §3.2 trains, for binary S and U, a privatizer whose parameters are the
mechanism's probabilities themselves (theta_p = s = P(Z | U, S) for PDD, P(Z | U)
for PDI) against an adversary table theta_a = q(S | Z), with the cross-entropy
adversary of eq (11) (or the alpha-loss of eq (12)), and enforces the
distortion budget with the penalty method (13) or the augmented Lagrangian
(14).  Nothing there needs binary alphabets, so this learner takes any finite
S, U and Z; observation ``full`` is GAP's PDD, ``useful`` its PDI.

It runs on the game engine of :mod:`.nn.finite_game` (exact expectation over the
empirical joint, all budgets batched).  Choices:

``adversary``
    ``xent``: cross-entropy adversary, the privatizer maximises its log-loss
    (with ``belief="expected"`` this is exactly the variational MI game, so
    ``privacy="mi"`` is served honestly).  ``alpha``: the adversary trains on
    the alpha-loss (eq (7); eq (12) has a typo: for y = 1 it must read
    1 - h^(1-1/alpha)).  ``xent-tilted``: the adversary trains on cross-entropy
    (a belief q(S|Z)) and decides with the alpha-tilted rule q^alpha / sum q^alpha
    (the alpha-loss-optimal decision for that belief, after GAP eq (8)); the
    privatizer maximises that decision's alpha-loss.  For alpha -> inf this is
    the expected 0-1 loss of the MAP guess, so it targets MAP accuracy.
    Default: ``xent-tilted`` with alpha = 100 for ``privacy="map"``, ``xent`` for ``mi``.
    Measured (benchmarks): a plain cross-entropy adversary leaves up to ~0.4 pp
    MAP excess on PDI binary models (the MI-optimal mechanism is not MAP-optimal
    there); an adversary trained on the alpha-loss itself with alpha >= 10
    saturates (confidently wrong, vanishing gradient) and the privatizer relabels
    Z, leaving gaps of 10-25 pp.
``belief``
    ``expected`` (default) scores E_Z[loss(q(S|Z))]; ``mixture`` is GAP eq (33):
    the privatizer scores the loss of the mixed belief sum_z P(z|w) q(S|z).
``constraint``
    ``augmented`` (default): eq (14) with the slack delta minimised out in
    closed form (the PHR form, see :mod:`.nn.finite_game`), multiplier updated each
    step with ``dual_lr``: reaches the budget.  ``linear-penalty``: eq (13) with
    rho_t = penalty + penalty_growth * t (the paper does not give rho_t).
    ``penalty`` (squared hinge) and ``lagrangian`` are also available.
``schedule="paper"``
    GAP §3.3: Adam with learning rate 0.01 for both players, the penalty method
    (13), the cross-entropy adversary with the eq (33) belief, theta_p the
    probabilities themselves (projected back onto the simplex after each step,
    initialised uniformly at random).  The paper states neither the number of
    steps nor rho_t: we use 5,000 full-batch steps (100 epochs of its 10,000
    samples in minibatches of 200 would be 5,000 updates) and rho_t = 1 + 0.02 t.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from privbench.datasets.tasks import Task

from .base import Learner, Mechanism, check_choice
from .nn.core import torch_threads
from .nn.finite_game import DTYPES, GameConfig, channel_mechanisms, empirical_tables, play
from .registry import register
from .serves import Serves

ADVERSARIES = {"xent": "log", "alpha": "alpha", "xent-tilted": "tilted"}

GAP_PAPER = GameConfig(steps=5000, lr=0.01, adversary_lr=0.01, adversary_steps=1, lr_decay="none",
                       constraint="linear-penalty", penalty=1.0, penalty_growth=0.02, init="dirichlet",
                       parametrization="direct", adversary_loss="log", belief="mixture")
# tuned (see tests/benchmarks/test_bench_learners_finite.py)
GAP_DEFAULT = GameConfig(steps=3000, lr=0.05, adversary_lr=0.3, adversary_steps=1, lr_decay="cosine",
                         constraint="augmented", penalty=20.0, dual_lr=1.0, init="least-distortion")


@register
class GAPFinite(Learner):
    """GAP's data-driven privatizer for finite S, U (binary in the paper); MAP or MI privacy.

    Parameters
    ----------
    schedule : {"default", "paper"}
    adversary : {"xent", "alpha", "xent-tilted"} or None
        None: ``xent-tilted`` for privacy ``map`` (``xent`` under the paper schedule), ``xent`` for ``mi``.
    alpha : float
        Order of the alpha-loss (>= 1; ``inf`` allowed), used by ``alpha`` and ``xent-tilted``.
    belief : {"expected", "mixture"} or None
    parametrization : {"softmax", "direct"} or None
    constraint : {"augmented", "linear-penalty", "penalty", "lagrangian"} or None
    steps, lr, adversary_lr, adversary_steps, penalty, penalty_growth, dual_lr, init : optional
        Override the schedule (see :class:`~privbench.learners.nn.finite_game.GameConfig`).
    threads : int or None
    dtype : {"float64", "float32"}
    """

    name = "gap"
    summary = "GAP (finite, binary in the paper): privatizer vs cross-entropy/alpha-loss adversary, PDD/PDI"
    serves = Serves(kinds=("finite",))
    observations = ("full", "useful")
    privacies = ("map", "mi")
    test_params = {"steps": 300}

    def __init__(self, schedule: str = "default", adversary: str | None = None, alpha: float = 100.0,
                 belief: str | None = None, parametrization: str | None = None, constraint: str | None = None,
                 steps: int | None = None, lr: float | None = None, adversary_lr: float | None = None,
                 adversary_steps: int | None = None, penalty: float | None = None,
                 penalty_growth: float | None = None, dual_lr: float | None = None, init: str | None = None,
                 threads: int | None = 1, dtype: str = "float64") -> None:
        self.schedule = schedule
        self.adversary = adversary
        self.alpha = alpha
        self.belief = belief
        self.parametrization = parametrization
        self.constraint = constraint
        self.steps = steps
        self.lr = lr
        self.adversary_lr = adversary_lr
        self.adversary_steps = adversary_steps
        self.penalty = penalty
        self.penalty_growth = penalty_growth
        self.dual_lr = dual_lr
        self.init = init
        self.threads = threads
        self.dtype = dtype

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The game configuration for ``task`` (schedule, privacy and overrides): the fields of :class:`GameConfig`."""
        paper = check_choice("schedule", self.schedule, ("default", "paper")) == "paper"
        cfg = GAP_PAPER if paper else GAP_DEFAULT
        adversary = self.adversary
        if adversary is None:
            adversary = "xent-tilted" if task.privacy == "map" and not paper else "xent"
        check_choice("adversary", adversary, tuple(ADVERSARIES))
        over = {k: getattr(self, k) for k in ("belief", "parametrization", "constraint", "steps", "lr",
                                              "adversary_lr", "adversary_steps", "penalty", "penalty_growth",
                                              "dual_lr", "init")}
        over = {k: v for k, v in over.items() if v is not None}
        alpha = 1.0 if adversary == "xent" else self.alpha
        return asdict(replace(cfg, adversary_loss=ADVERSARIES[adversary], alpha=alpha, **over).check())

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        cfg = GameConfig(**self.resolved(task, len(samples)))
        dtype = DTYPES[check_choice("dtype", self.dtype, tuple(DTYPES))]
        g_sw, d_wz, unseen = empirical_tables(samples, task)
        with torch_threads(self.threads):
            channels, info = play(g_sw, d_wz, task, budgets, cfg, seed, device, dtype, "GAP privatizer loss")
        return channel_mechanisms(channels, task, budgets, info,
                                  {"schedule": self.schedule, "adversary_loss": cfg.adversary_loss,
                                   "alpha": cfg.alpha, "constraint": cfg.constraint, "unseen_w": unseen})


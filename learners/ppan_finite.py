"""PPAN for finite alphabets (PPAN paper §II-B, §II-C1, §III-A), and the finite game engine.

The mechanism is a softmax channel P(Z=z | W=w) = softmax(logits[w])_z (PPAN's
"single linear layer without bias on a one-hot input, then softmax") and the
adversary a softmax table q(S=s | Z=z).  Both are trained on the *exact*
expectation over Z (PPAN eq (6)) and over the empirical joint of (S, W) of the
training samples, so a step has no minibatch noise: with G[s, w] = P^(S=s, W=w)
and the channel C, P(S=s, Z=z) = sum_w G[s, w] C[w, z], and the game is

    min_C  max_q  sum_{s,z} P(s, z) log q(s|z) + H^(S)    (= I^(S;Z) at the best q, eq (2))
    subject to  E^ d(U, Z) = sum_{w,z} P^(W=w) E^[d(U, z) | W=w] C[w, z] <= budget.

The constraint is the *batch-mean* distortion (the whole empirical joint):
``penalty`` adds lambda * max(0, d - budget)^2 (PPAN §II-B; applied per sample,
as eq (8) literally reads, it pushes every sample below the budget and
collapses to Z = U); ``lagrangian`` adds mu * (d - budget) with dual ascent on
mu >= 0; ``augmented`` is the PHR augmented Lagrangian
(rho/2) [max(0, d - budget + mu/rho)^2 - (mu/rho)^2] with mu <- max(0, mu + dual_lr (d - budget)).

All budgets train at once: parameters carry a leading sweep dimension (logits
of shape (k, n_w, n_z), adversary (k, n_z, n_s)).  Gradients are written out by
hand (no autograd graph: ~3x faster for these tiny tensors) and fed to a
batched Adam.  One thread by default: with two threads on a shared 2-core
machine a 20-budget curve took 45 s instead of 2-5 s (see
tests/benchmarks/test_bench_learners_finite.py).

:func:`play` is the engine; the GAP learner (:mod:`.gap_binary`) reuses it with
its own adversary losses, belief and constraint forms.
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


# PPAN §III-A: Adam (Chainer defaults: alpha=1e-3, betas 0.9/0.999, eps 1e-8), lambda = 500 on
# the squared hinge, one adversary update per mechanism update, 1000 samples in minibatches of
# 100 for 2500 epochs (full) / 2000 epochs (useful) = 25,000 / 20,000 updates.  Our steps
# are full-batch (exact expectation over the empirical joint); we keep the paper's count.
PPAN_PAPER = GameConfig(steps=25_000, lr=1e-3, adversary_lr=1e-3, adversary_steps=1, lr_decay="none",
                        constraint="penalty", penalty=500.0, init="random")
PPAN_PAPER_USEFUL_STEPS = 20_000
PPAN_DEFAULT = GameConfig()  # tuned: see tests/benchmarks/test_bench_learners_finite.py


@register
class PPANFinite(Learner):
    """PPAN with softmax mechanism and adversary on finite alphabets (mutual-information privacy).

    Parameters
    ----------
    schedule : {"default", "paper"}
        ``paper``: PPAN §III-A's hyper-parameters (see ``PPAN_PAPER``); ``default``:
        tuned (augmented Lagrangian, larger learning rates with cosine decay,
        least-distortion initialisation, 3000 steps).
    steps, lr, adversary_lr, adversary_steps, constraint, penalty, dual_lr, init, lr_decay : optional
        Override the schedule's value (see :class:`GameConfig`).  ``penalty`` is
        lambda for ``penalty`` and rho for ``augmented``.
    threads : int or None
        torch intra-op threads while training (1: fastest here; None leaves it).
    dtype : {"float64", "float32"}
    """

    name = "ppan"
    summary = "PPAN (finite): softmax channel vs softmax adversary, exact expectation, variational MI"
    serves = Serves(kinds=("finite",))
    observations = ("useful", "full")
    privacies = ("mi",)
    test_params = {"steps": 300}

    def __init__(self, schedule: str = "default", steps: int | None = None, lr: float | None = None,
                 adversary_lr: float | None = None, adversary_steps: int | None = None,
                 constraint: str | None = None, penalty: float | None = None, dual_lr: float | None = None,
                 init: str | None = None, lr_decay: str | None = None, threads: int | None = 1,
                 dtype: str = "float64") -> None:
        self.schedule = schedule
        self.steps = steps
        self.lr = lr
        self.adversary_lr = adversary_lr
        self.adversary_steps = adversary_steps
        self.constraint = constraint
        self.penalty = penalty
        self.dual_lr = dual_lr
        self.init = init
        self.lr_decay = lr_decay
        self.threads = threads
        self.dtype = dtype

    def resolved(self, task: Task, n_train: int) -> dict[str, Any]:
        """The game configuration for ``task`` (schedule plus overrides): the fields of :class:`GameConfig`."""
        check_choice("schedule", self.schedule, ("default", "paper"))
        cfg = PPAN_DEFAULT
        if self.schedule == "paper":
            cfg = PPAN_PAPER if task.observation == "full" else replace(PPAN_PAPER, steps=PPAN_PAPER_USEFUL_STEPS)
        over = {k: getattr(self, k) for k in ("steps", "lr", "adversary_lr", "adversary_steps", "constraint",
                                              "penalty", "dual_lr", "init", "lr_decay")}
        return asdict(replace(cfg, **{k: v for k, v in over.items() if v is not None}).check())

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        cfg = GameConfig(**self.resolved(task, len(samples)))
        dtype = DTYPES[check_choice("dtype", self.dtype, tuple(DTYPES))]
        g_sw, d_wz, unseen = empirical_tables(samples, task)
        with torch_threads(self.threads):
            channels, info = play(g_sw, d_wz, task, budgets, cfg, seed, device, dtype, "PPAN privatizer loss")
        return channel_mechanisms(channels, task, budgets, info,
                                  {"schedule": self.schedule, "constraint": cfg.constraint, "unseen_w": unseen})

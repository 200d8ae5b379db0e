"""Evaluators of finite releases under the log-loss distortion H(U | Z) (the privacy funnel).

Like :mod:`.finite`, a mechanism's ``channel()`` is used only after it passed
:func:`~.finite.claimed_channel_verdict` against fresh releases.  Then the leakage
(``exact-channel``) and H(U | Z) (``exact-logloss``) are exact, and the per-sample log
loss -log P(u | z) under that channel's posterior (``sample-logloss``, an unbiased
estimate of H(U | Z) with its stderr) must agree with it, or the channel is ignored.
Without a usable channel the numbers are plug-in estimates from fresh (S, U, Z):
``finite-plugin`` leakages and the plug-in H(U | Z) (``logloss-plugin``, biased downwards).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.tasks import Task
from privbench.theory.funnel import conditional_entropy
from privbench.theory.measures import PRIVACY_MEASURES, release_joint

from .evaluation import Evaluation, batch_stderr, make_evaluation, sample_distortion
from .finite import claimed_channel_verdict, plugin_estimates
from .verify import distortion_disagreement, verdict


def evaluate_finite_logloss(mech: Any, sc: Any, task: Task, s: np.ndarray, u: np.ndarray, z: np.ndarray,
                            seed: int = 0) -> list[Evaluation]:
    """Exact leakage and H(U | Z) of a verified channel, else plug-in estimates (see the module docstring)."""
    z = z.astype(np.int64)
    ch = mech.channel()
    if ch is not None:
        ch = np.asarray(ch, dtype=float)
        check = claimed_channel_verdict(mech, sc, task, ch, seed)
        if check.value == 1:
            p_suz = release_joint(sc.joint(), ch, task.observation)
            out = [make_evaluation(k, f(p_suz.sum(axis=1)), "exact-channel", "exact")
                   for k, f in PRIVACY_MEASURES.items()]
            p_uz = p_suz.sum(axis=0)
            exact_d = make_evaluation("distortion", conditional_entropy(p_uz), "exact-logloss", "exact")
            posterior = p_uz / np.where(p_uz.sum(axis=0) > 0, p_uz.sum(axis=0), 1.0)
            with np.errstate(divide="ignore"):
                loss = -np.log(posterior)
            sample_d = sample_distortion(loss[u, z], "sample-logloss")
            reason = typical_disagreement(p_uz, loss, u, z, exact_d, sample_d)
            if reason is None:
                return out + [exact_d, sample_d, check]
            check = verdict(False, reason)
        return plugin_estimates(task, s, z) + [plugin_logloss(task, u, z), check]
    return plugin_estimates(task, s, z) + [plugin_logloss(task, u, z)]


def plugin_logloss(task: Task, u: np.ndarray, z: np.ndarray) -> Evaluation:
    """``logloss-plugin``: H(U | Z) of the plug-in pmf of fresh (U, Z), with a batch stderr."""
    n_u, n_z = int(task.n_u), int(task.n_z)  # type: ignore[arg-type]

    def h(uu: np.ndarray, zz: np.ndarray) -> float:
        return conditional_entropy(np.bincount(uu * n_z + zz, minlength=n_u * n_z).reshape(n_u, n_z) / uu.size)

    return make_evaluation("distortion", h(u, z), "logloss-plugin", "estimate", batch_stderr(h, u.size, u, z),
                           n=u.size, note="plug-in H(U | Z) of fresh (U, Z); biased downwards for small n")


#: A (u, z) cell enters the comparison of exact and sample log loss when the claimed channel expects at
#: least this many of the fresh draws in it (rarer cells: the G-test of the channel checks them).
TYPICAL_COUNT = 10


def typical_disagreement(p_uz: np.ndarray, loss: np.ndarray, u: np.ndarray, z: np.ndarray,
                         exact_d: Evaluation, sample_d: Evaluation) -> str | None:
    """Whether the verified channel's exact H(U | Z) and the log loss of the same releases disagree.

    The log loss is heavy-tailed: a cell of claimed mass 1e-4 with loss 10 nats adds 1e-3 nats to H(U | Z),
    yet 2,000 draws usually miss it, and then the sample's std / sqrt(n) is far too small (an honest
    channel was flagged so in the quick suite at 5 seeds).  So the means are compared over the cells the
    claim expects at least :data:`TYPICAL_COUNT` times (a 5-sigma test where the CLT holds); a release in
    a cell the claim gives mass 0 (infinite loss) is always a disagreement.
    """
    if not np.isfinite(sample_d.value):
        return distortion_disagreement(exact_d, sample_d)
    keep = p_uz >= TYPICAL_COUNT / max(u.size, 1)
    part = np.where(keep, loss, 0.0)
    exact_t = make_evaluation("distortion", float((p_uz * part).sum()), exact_d.evaluator, "exact")
    reason = distortion_disagreement(exact_t, sample_distortion(part[u, z], sample_d.evaluator))
    return None if reason is None else reason + f" (cells with >= {TYPICAL_COUNT} expected draws)"

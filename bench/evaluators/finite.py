"""Evaluators of finite scenarios: ``exact-channel``, ``exact-distortion``, ``finite-plugin``.

A mechanism's ``channel()`` is used only after :func:`~.verify.verify_channel`
has tested it against fresh releases; a channel that fails (or whose exact
distortion disagrees with the sample distortion of the same releases) is
ignored, the plug-in estimates are the numbers, and a ``consistency``
evaluation with value 0 carries the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.tasks import Task
from privbench.theory.measures import PRIVACY_MEASURES, scenario_channel_measures

from .evaluation import Evaluation, batch_stderr, make_evaluation, sample_distortion
from .verify import distortion_disagreement, verdict, verify_channel, w_marginal


def evaluate_finite(mech: Any, sc: Any, task: Task, s: np.ndarray, u: np.ndarray, z: np.ndarray,
                    seed: int = 0) -> list[Evaluation]:
    """Finite scenarios: the exact channel measures where the mechanism has a ``channel()`` that
    passes verification (exact-channel, exact-distortion), else plug-in estimates from fresh (S, Z)
    (finite-plugin); always the sample distortion; a ``consistency`` verdict where a channel was claimed."""
    dm = sc.distortion_matrix()
    sample_d = sample_distortion(dm[u, z.astype(np.int64)])
    ch = mech.channel()
    check: list[Evaluation] = []
    if ch is not None:
        ch = np.asarray(ch, dtype=float)
        check = [claimed_channel_verdict(mech, sc, task, ch, seed)]
        if check[0].value == 1:
            m = scenario_channel_measures(sc, ch, task.observation)
            out = [make_evaluation(k, m[k], "exact-channel", "exact") for k in PRIVACY_MEASURES]
            exact_d = make_evaluation("distortion", m["distortion"], "exact-distortion", "exact")
            reason = distortion_disagreement(exact_d, sample_d)
            if reason is None:
                return out + [exact_d, sample_d] + check
            check = [verdict(False, reason)]
    return plugin_estimates(task, s, z) + [sample_d] + check


def claimed_channel_verdict(mech: Any, sc: Any, task: Task, ch: np.ndarray, seed: int) -> Any:
    """The consistency verdict of a claimed channel: its shape, its rows, then its fresh releases."""
    n_w = len(w_marginal(sc, task.observation))
    if ch.shape != (n_w, task.n_z) or not np.all(np.isfinite(ch)) or np.any(ch < 0) \
            or not np.allclose(ch.sum(axis=1), 1.0, atol=1e-9):
        return verdict(False, f"channel() is not a ({n_w}, {task.n_z}) row-stochastic matrix")
    return verify_channel(mech, ch, w_marginal(sc, task.observation), task.n_z, seed)


def plugin_estimates(task: Task, s: np.ndarray, z: np.ndarray) -> list[Evaluation]:
    """``finite-plugin``: each privacy measure of the plug-in pmf of fresh (S, Z), with a batch stderr."""
    n_s, n_z = task.n_s, task.n_z

    def pmf(ss: np.ndarray, zz: np.ndarray) -> np.ndarray:
        return np.bincount(ss * n_z + zz, minlength=n_s * n_z).reshape(n_s, n_z) / ss.size

    z = z.astype(np.int64)
    out = []
    for k, f in PRIVACY_MEASURES.items():
        fn = lambda a, b, f=f: f(pmf(a, b))  # noqa: E731
        out.append(make_evaluation(k, fn(s, z), "finite-plugin", "estimate", batch_stderr(fn, s.size, s, z),
                       n=s.size, note="plug-in pmf of fresh (S, Z); biased upwards for small n"))
    return out

"""Evaluators of finite scenarios: ``exact-channel``, ``exact-distortion``, ``finite-plugin``."""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.tasks import Task
from privbench.theory.measures import PRIVACY_MEASURES, scenario_channel_measures

from .evaluation import Evaluation, batch_stderr, make_evaluation, sample_distortion


def evaluate_finite(mech: Any, sc: Any, task: Task, s: np.ndarray, u: np.ndarray, z: np.ndarray) -> list[Evaluation]:
    """Finite scenarios: the exact channel measures where the mechanism has a ``channel()``
    (exact-channel, exact-distortion), else plug-in estimates from fresh (S, Z) (finite-plugin);
    always the sample distortion."""
    dm = sc.distortion_matrix()
    sample_d = sample_distortion(dm[u, z.astype(np.int64)])
    ch = mech.channel()
    if ch is not None:
        m = scenario_channel_measures(sc, np.asarray(ch, dtype=float), task.observation)
        out = [make_evaluation(k, m[k], "exact-channel", "exact") for k in PRIVACY_MEASURES]
        return out + [make_evaluation("distortion", m["distortion"], "exact-distortion", "exact"), sample_d]
    n_s, n_z = task.n_s, task.n_z

    def pmf(ss: np.ndarray, zz: np.ndarray) -> np.ndarray:
        return np.bincount(ss * n_z + zz, minlength=n_s * n_z).reshape(n_s, n_z) / ss.size

    z = z.astype(np.int64)
    out = []
    for k, f in PRIVACY_MEASURES.items():
        fn = lambda a, b, f=f: f(pmf(a, b))  # noqa: E731
        out.append(make_evaluation(k, fn(s, z), "finite-plugin", "estimate", batch_stderr(fn, s.size, s, z),
                       n=s.size, note="plug-in pmf of fresh (S, Z); biased upwards for small n"))
    return out + [sample_d]

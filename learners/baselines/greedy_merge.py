"""``greedy-merge``: the privacy funnel's agglomerative heuristic (a deterministic release of merged U values).

Makhdoumi, Salamatian, Fawaz and Medard (2014), "From the information bottleneck to
the privacy funnel": start from Z = U and repeatedly merge the pair of current
groups of U values that costs the least utility per unit of leakage saved,
(increase of H(U | Z)) / (decrease of I(S; Z)), while H(U | Z) stays within the
budget (nats).  The joint is the empirical one of the training samples; the
release is Z = the group of U (it never looks at S, so it serves both observations;
ties go to the first pair in index order).  Log-loss tasks and mutual information only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import entr

from privbench.datasets.errors import InputError

from ..mechanisms import FiniteChannel
from ..registry import register
from .fixed import FixedLearner, lift


def _h(p: np.ndarray) -> float:
    return float(entr(np.clip(p, 0.0, None)).sum())


def _measures(p_sz: np.ndarray, p_uz: np.ndarray) -> tuple[float, float]:
    """(I(S; Z), H(U | Z)) of the joints P(S, Z), P(U, Z)."""
    p_z = p_sz.sum(axis=0)
    return _h(p_sz.sum(axis=1)) + _h(p_z) - _h(p_sz), _h(p_uz) - _h(p_z)


def greedy_groups(joint: np.ndarray, budget: float) -> list[list[int]]:
    """The groups of U values after greedy merging under H(U | Z) <= ``budget`` (joint P(S, U))."""
    p_u = joint.sum(axis=0)
    groups = [[u] for u in range(joint.shape[1])]
    while len(groups) > 1:
        leak0, dist0 = _measures(_group_s(joint, groups), _group_joint(p_u, groups))
        best = None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                trial = groups[:a] + groups[a + 1:b] + groups[b + 1:] + [groups[a] + groups[b]]
                leak, dist = _measures(_group_s(joint, trial), _group_joint(p_u, trial))
                if dist > budget + 1e-12:
                    continue
                saved, cost = leak0 - leak, dist - dist0
                ratio = cost / saved if saved > 1e-15 else (0.0 if cost <= 1e-15 else np.inf)
                if best is None or ratio < best[0]:
                    best = (ratio, trial)
        if best is None:
            break
        groups = best[1]
    return groups


def _group_s(joint: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    return np.stack([joint[:, g].sum(axis=1) for g in groups], axis=1)


def _group_joint(p_u: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    p_uz = np.zeros((p_u.size, len(groups)))
    for z, g in enumerate(groups):
        p_uz[g, z] = p_u[g]
    return p_uz


@register
class GreedyMerge(FixedLearner):
    name = "greedy-merge"
    summary = ("finite, logloss: the privacy funnel's greedy merge of U values (least utility lost per unit "
               "of leakage saved, empirical joint), a deterministic release")
    serves = ("finite",)
    privacies = ("mi",)
    distortions = ("logloss",)

    def _one(self, samples, task, budget):
        counts = np.bincount(samples.s * task.n_u + samples.u, minlength=task.n_s * task.n_u)
        joint = counts.reshape(task.n_s, task.n_u) / max(1, len(samples))
        groups = greedy_groups(joint, budget)
        if len(groups) > task.n_z:  # pragma: no cover - n_z = n_w + 1 >= n_u for logloss tasks
            raise InputError(f"greedy-merge needs n_z >= {len(groups)} (got {task.n_z})")
        useful = np.zeros((task.n_u, task.n_z))
        for z, g in enumerate(groups):
            useful[g, z] = 1.0
        return FiniteChannel(task, budget, lift(task, useful), {"groups": groups})

"""Theory's optimum at a case's budget, remembered for the life of the process that scores.

Every learner and every seed of an experiment is scored at the same budgets, and the bound at a
budget (a grid search over a mechanism family, a stored sandwich, a finite program) is the same each
time: the long-lived evaluator process (:mod:`privbench.bench.artifact_eval`) computes it once.  The
optimum at an achieved distortion differs from row to row and is not remembered.  Theory is
deterministic, so a remembered answer is the answer a fresh call gives, bit for bit.
"""

from __future__ import annotations

import pickle
from typing import Any

#: Remembered answers at most (a run has a few hundred distinct budgets).
MAX_ENTRIES = 4096

MEMO: dict[tuple[Any, ...], Any] = {}


def budget_optimum(sc: Any, budget: float, privacy: str, observation: str | None, family: str | None,
                   distortion: str | None = None) -> Any:
    """``privbench.theory.optimum.optimum(sc, budget, privacy, observation, family, distortion=...)``,
    remembered by the scenario's kind and parameters (its exceptions are not remembered)."""
    from privbench.theory.optimum import optimum

    key = (type(sc).__name__, pickle.dumps(sc.params(), protocol=4), float(budget), privacy, observation, family,
           distortion)
    if key not in MEMO:
        if len(MEMO) >= MAX_ENTRIES:
            MEMO.clear()
        MEMO[key] = optimum(sc, budget, privacy, observation, family, distortion=distortion)
    return MEMO[key]

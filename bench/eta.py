"""A cost-weighted ETA for a run: cases differ in cost by orders of magnitude.

Assuming every case costs the same (elapsed / done x left) is badly wrong for
a suite that runs its trained learners first and dozens of millisecond
baselines last (issue 13: "9:22" with 38 s left).  :class:`CostETA` instead

1. gives every case a *prior cost* from its features (:func:`prior_cost`):
   whether its learner trains (a learner with ``test_params``) or is a fixed
   baseline, ``n_train``, the number of budgets and the data dimension;
2. calibrates it with the cases already finished in this run: per learner, the
   ratio of the measured seconds to the prior cost of its finished cases (all
   learners' ratio for a learner with no finished case yet);
3. converts the remaining worker-seconds into wall-clock seconds: divided by
   the number of parallel workers when it is known, else scaled by the run's
   own throughput so far (elapsed wall time per worker-second done; this counts
   the workers' start-up, so it overestimates early in a short run).

The prior's exponents are rough guesses (fits are mostly step-bound, so cost
grows slower than n_train); what keeps the estimate honest is step 2.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable, Iterable

#: Prior cost of a case of a fixed baseline (no training) relative to a trained learner's, at equal features.
BASELINE_COST = 0.02
#: n_train at which a case's prior cost is its base cost; the cost grows as (n_train / N_REF) ** N_EXPONENT.
N_REF, N_EXPONENT = 10_000, 0.5


def case_dimension(params: dict[str, Any]) -> int:
    """Size of the data a case's scenario describes: the longest list parameter or the alphabet size ``m``."""
    dims = [len(v) for v in params.values() if isinstance(v, (list, tuple))]
    m = params.get("m")
    if isinstance(m, int) and not isinstance(m, bool):
        dims.append(m)
    return max(dims, default=1)


def prior_cost(case: Any, trains: Callable[[str], bool]) -> float:
    """Prior cost (arbitrary units) of ``case`` from its learner, n_train, budgets and dimension."""
    params = json.loads(case.params_json) if isinstance(case.params_json, str) else {}
    base = 1.0 if trains(case.learner) else BASELINE_COST
    n = max(int(case.n_train), 1) / N_REF
    return base * n ** N_EXPONENT * (1.0 + 0.25 * (len(case.budgets) - 1)) * (1.0 + 0.05 * case_dimension(params))


def learner_trains(name: str) -> bool:
    """True for a learner that trains (it declares tiny ``test_params``), False for a fixed baseline."""
    from privbench.learners import resolve_learner

    try:
        return bool(resolve_learner(name).test_params)
    except Exception:  # noqa: BLE001 - an unknown learner: assume it trains (the pessimistic guess)
        return True


class CostETA:
    """Remaining wall-clock seconds of a run, weighting each case by its estimated cost.

    Parameters
    ----------
    cases : iterable of Case
        The cases this run will execute.
    trains : callable, optional
        ``trains(learner_name) -> bool`` (default :func:`learner_trains`).
    workers : int, optional
        Cases run at the same time (the run's jobs); None: inferred from the throughput.
    """

    def __init__(self, cases: Iterable[Any], trains: Callable[[str], bool] | None = None,
                 workers: int | None = None) -> None:
        trains = trains or functools.cache(learner_trains)  # resolving a learner may import a plug-in
        cases = list(cases)
        self.workers = None if workers is None else max(1, min(int(workers), len(cases)))
        #: case key -> (learner, prior cost) of the cases not finished yet
        self.left: dict[str, tuple[str, float]] = {c.key: (c.learner, prior_cost(c, trains)) for c in cases}
        self.seconds: dict[str, float] = {}  # learner -> measured seconds of its finished cases
        self.units: dict[str, float] = {}  # learner -> prior cost of the same cases

    def finished(self, key: str, seconds: float | None) -> None:
        """The case ``key`` finished after ``seconds`` of work (None: not measured, e.g. done by another run)."""
        learner, cost = self.left.pop(key, (None, 0.0))
        if learner is not None and seconds is not None and seconds >= 0:
            self.seconds[learner] = self.seconds.get(learner, 0.0) + float(seconds)
            self.units[learner] = self.units.get(learner, 0.0) + cost

    def remaining_work(self) -> float | None:
        """Estimated worker-seconds the unfinished cases need (None before any case is measured)."""
        total_s, total_u = sum(self.seconds.values()), sum(self.units.values())
        if total_u <= 0:
            return None
        overall = total_s / total_u
        rate = {k: self.seconds[k] / u for k, u in self.units.items() if u > 0}
        return sum(cost * rate.get(learner, overall) for learner, cost in self.left.values())

    def eta(self, elapsed: float) -> float | None:
        """Estimated wall-clock seconds left, given ``elapsed`` wall-clock seconds so far (None: unknown)."""
        work = self.remaining_work()
        done = sum(self.seconds.values())
        if work is None:
            return None
        if self.workers is not None:
            return work / min(self.workers, max(len(self.left), 1))
        if done <= 0:
            return None
        return work * elapsed / done if elapsed > 0 else work

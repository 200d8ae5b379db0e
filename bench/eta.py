"""A cost-weighted ETA for a run: cases differ in cost by orders of magnitude.

Assuming every case costs the same (elapsed / done x left) is badly wrong for
a suite that runs its trained learners first and dozens of millisecond
baselines last (issue 13: "9:22" with 38 s left).  :class:`CostETA` instead

1. gives every case a *prior cost* from its features (:func:`prior_cost`):
   whether its learner trains (a learner with ``test_params``) or is a fixed
   baseline, ``n_train``, the number of budgets and the data dimension;
2. calibrates it with the cases already finished in this run: per learner (per
   measured kind of case, below), the ratio of the measured seconds
   to the prior cost of its finished cases (all cases' ratio for one with no
   finished case yet);
3. converts the remaining worker-seconds into wall-clock seconds: divided by
   the number of parallel workers when it is known, else scaled by the run's
   own throughput so far (elapsed wall time per worker-second done; this counts
   the workers' start-up, so it overestimates early in a short run).

The prior's exponents are rough guesses (fits are mostly step-bound, so cost
grows slower than n_train); what keeps the estimate honest is step 2.  Step 2
cannot help with learners the run has not reached yet (the paper suite's image
learners cost a hundred times a linear PPAN case), so a (scenario, learner) pair
measured on the reference machine (``case_costs.csv``, written by
``scripts/case_costs.py`` from a full run: per experiment, learner and n_train,
else per scenario and learner) takes its prior from that measurement, in
seconds; the feature prior is put in the same seconds by the median ratio of
measurement to feature prior over the table.
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


@functools.cache
def measured_costs() -> dict[tuple, tuple[int, float]]:
    """Reference-machine wall seconds per budget: (experiment, learner, n_train) -> (n_train, seconds),
    and (scenario, learner) -> (median n_train, median seconds) over that pair's lines."""
    import csv
    import statistics
    from importlib import resources

    try:
        text = resources.files("privbench.bench").joinpath("case_costs.csv").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return {}
    exact: dict[tuple, tuple[int, float]] = {}
    pairs: dict[tuple, list[tuple[int, float]]] = {}
    for r in csv.DictReader(text.splitlines()):
        n, sec = max(int(r["n_train"]), 1), float(r["seconds_per_budget"])
        exact[(r["experiment"], r["learner"], n)] = (n, sec)
        pairs.setdefault((r["scenario"], r["learner"]), []).append((n, sec))
    for key, lines in pairs.items():
        exact[key] = (round(statistics.median(n for n, _ in lines)), statistics.median(s for _, s in lines))
    return exact


def measured_key(case: Any, table: dict[tuple, tuple[int, float]]) -> tuple | None:
    """The key of ``table`` that measured ``case``: its experiment, learner and n_train, else its
    scenario and learner; None when neither was measured."""
    for key in ((getattr(case, "experiment", None), case.learner, int(case.n_train)),
                (getattr(case, "scenario", None), case.learner)):
        if key in table:
            return key
    return None


def prior_seconds(case: Any, trains: Callable[[str], bool], table: dict[tuple, tuple[int, float]],
                  scale: float) -> float:
    """Prior cost of ``case`` in reference seconds: measured when the table has it (scaled to the case's
    n_train and budgets), else ``scale`` x :func:`prior_cost`."""
    key = measured_key(case, table)
    if key is None:
        return scale * prior_cost(case, trains)
    n_ref, per_budget = table[key]
    return per_budget * len(case.budgets) * (max(int(case.n_train), 1) / n_ref) ** N_EXPONENT


def feature_scale(table: dict[tuple, tuple[int, float]], trains: Callable[[str], bool]) -> float:
    """Median over the table's (scenario, learner) pairs of measured seconds per budget / the feature
    prior of one budget (1.0: no table)."""
    import statistics
    from types import SimpleNamespace

    ratios = [sec / prior_cost(SimpleNamespace(params_json="{}", learner=key[1], n_train=n, budgets=[0.0]), trains)
              for key, (n, sec) in table.items() if len(key) == 2]
    return statistics.median(ratios) if ratios else 1.0


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
    table : dict, optional
        Measured costs as :func:`measured_costs` returns them (default: the shipped ``case_costs.csv``).
    """

    def __init__(self, cases: Iterable[Any], trains: Callable[[str], bool] | None = None,
                 workers: int | None = None, table: dict[tuple, tuple[int, float]] | None = None) -> None:
        trains = trains or functools.cache(learner_trains)  # resolving a learner may import a plug-in
        cases = list(cases)
        self.workers = None if workers is None else max(1, min(int(workers), len(cases)))
        table = measured_costs() if table is None else table
        scale = feature_scale(table, trains) if table else 1.0
        #: case key -> (calibration group, prior cost) of the cases not finished yet; the group is the
        #: table's key of a measured case, else the learner (one learner's cases differ by orders of
        #: magnitude across experiments, so a measured case is calibrated only by its own kind)
        self.left: dict[str, tuple[Any, float]] = {
            c.key: (measured_key(c, table) or c.learner, prior_seconds(c, trains, table, scale)) for c in cases}
        self.seconds: dict[Any, float] = {}  # group -> measured seconds of its finished cases
        self.units: dict[Any, float] = {}  # group -> prior cost of the same cases

    def finished(self, key: str, seconds: float | None) -> None:
        """The case ``key`` finished after ``seconds`` of work (None: not measured, e.g. done by another run)."""
        group, cost = self.left.pop(key, (None, 0.0))
        if group is not None and seconds is not None and seconds >= 0:
            self.seconds[group] = self.seconds.get(group, 0.0) + float(seconds)
            self.units[group] = self.units.get(group, 0.0) + cost

    def remaining_work(self) -> float | None:
        """Estimated worker-seconds the unfinished cases need (None before any case is measured)."""
        total_s, total_u = sum(self.seconds.values()), sum(self.units.values())
        if total_u <= 0:
            return None
        overall = total_s / total_u
        rate = {k: self.seconds[k] / u for k, u in self.units.items() if u > 0}
        return sum(cost * rate.get(group, overall) for group, cost in self.left.values())

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

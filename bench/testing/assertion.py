"""``assert_near_optimal``: fit a learner, score its saved mechanisms, assert its gap (see :mod:`privbench.testing`).

Imports nothing of pytest.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["assert_near_optimal", "NearOptimalReport"]


class NearOptimalReport(list):
    """The scored rows (one dict per budget) that :func:`assert_near_optimal` checked."""


def assert_near_optimal(learner: Any, scenario: Any, budgets: Sequence[float], tol: float, *,
                        observation: str | None = None, privacy: str | None = None, family: str | None = None,
                        n_train: int = 20000, n_eval: int = 20000, seed: int = 0, device: str = "cpu",
                        overshoot_tol: float = 1e-3) -> NearOptimalReport:
    """Fit ``learner`` on samples of ``scenario`` and assert its gap is <= ``tol`` at every budget.

    As in ``privbench run``, the fitted mechanisms are saved and scored from those files in a process of
    their own (:mod:`privbench.bench.artifacts`): a mechanism class must be registered with
    ``@mechanism_type`` and defined in an importable module (or a file).

    Parameters
    ----------
    learner : privbench.learners.Learner
        An instance (hyper-parameters set); it is fitted once on all budgets.
    scenario : privbench.datasets.Scenario
    budgets : sequence of float
    tol : float
        Largest allowed gap (leakage minus optimum at the achieved distortion), in
        the privacy metric's units.
    observation, privacy, family : str, optional
        As for ``privbench optimum``.
    n_train, n_eval, seed, device
        Training sample size, fresh evaluation sample size, seed, device.
    overshoot_tol : float
        Allowed excess of the achieved distortion over the budget.

    Returns
    -------
    NearOptimalReport
        The scored rows, for further assertions.

    Raises
    ------
    AssertionError
        Listing every budget that failed and why.
    """
    import numpy as np

    from privbench.bench.artifacts import defining_modules, evaluate_saved, save_mechanisms, temporary_directory
    from privbench.bench.scores import strict_gap
    from privbench.bench.suites import make_case
    from privbench.datasets.tasks import task_for
    from privbench.learners import Learner
    from privbench.theory import resolve

    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a privbench Learner instance, got {type(learner).__name__}")
    privacy, observation, family = resolve(scenario, privacy, observation, family)
    task = task_for(scenario, observation, privacy)
    rng = np.random.default_rng(seed)
    samples = scenario.sample(n_train, rng)
    mechs = learner.fit(samples, task, list(budgets), seed=seed, device=device)
    case = make_case("testing", "assert_near_optimal", scenario.name, scenario.params(), observation, privacy,
                     family, "identity", {}, budgets, 0, n_train, n_eval)
    case = type(case)(**{**case.__dict__, "learner": type(learner).__name__})
    report, problems = NearOptimalReport(), []
    with temporary_directory() as where:  # scored from the saved files, in the evaluator process
        scored = evaluate_saved(case, save_mechanisms(mechs, where), defining_modules(mechs))
    for budget, (row, _) in zip(case.budgets, scored):
        row["budget"] = budget
        report.append(row)
        if row.get("status") != "ok":
            problems.append(f"budget {budget:g}: {row.get('status')}: {row.get('error')}")
            continue
        if row["below_bound"]:
            problems.append(f"budget {budget:g}: leakage {row['leakage']:.6g} is below the bound "
                            f"{row['optimum_at_distortion']:.6g} ({row['below_bound_reason']})")
        gap = float(strict_gap(row["leakage"], row["optimum_at_distortion"], row["optimum_at_budget"]))
        if gap > tol:
            opt = min(row["optimum_at_distortion"], row["optimum_at_budget"])
            problems.append(f"budget {budget:g}: gap {gap:.4g} > tol {tol:g} (leakage {row['leakage']:.6g} by "
                            f"{row['leakage_evaluator']}; optimum {opt:.6g} at max(distortion "
                            f"{row['distortion']:.6g}, budget {budget:g}))")
        if row["overshoot"] > overshoot_tol:
            problems.append(f"budget {budget:g}: distortion {row['distortion']:.6g} overshoots the budget "
                            f"by {row['overshoot']:.4g} > {overshoot_tol:g}")
    if problems:
        raise AssertionError(f"{type(learner).__name__} is not near optimal on {scenario.id}:\n  "
                             + "\n  ".join(problems))
    return report

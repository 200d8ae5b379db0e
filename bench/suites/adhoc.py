"""A suite of one experiment from command-line options (``privbench run --scenario ...``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from privbench.bench.suites.case import DEFAULT_N_EVAL, Suite
from privbench.bench.suites.loading import count
from privbench.bench.suites.make import make_case
from privbench.datasets.errors import InputError


def adhoc_suite(scenario: str, params: dict[str, Any], observation: str | None, privacy: str | None,
                family: str | None, learners: list[str], learner_params: dict[str, Any],
                budgets: list[float], reps: int = 1, n_train: int | None = None,
                n_eval: int = DEFAULT_N_EVAL, name: str = "adhoc", objective: str | None = None,
                distortion: str | None = None) -> Suite:
    """A suite of one experiment from command-line options (``privbench run --scenario ...``).

    ``learner_params`` apply to every learner given; ``distortion`` (``--distortion``; None: the
    scenario's own) another one, e.g. ``logloss``, refused where the scenario cannot state its task
    for it (:func:`~privbench.bench.suites.make.case_distortion`); ``n_train`` None is
    :func:`~privbench.bench.suites.make.default_n_train` (the training partition's size
    where that is smaller).

    Raises
    ------
    InputError
        No learner, no budget, a bad repetition count, or anything :func:`make_case` refuses.
    """
    if not learners:
        raise InputError("an ad-hoc run needs --learner (see 'privbench list learners')")
    if not budgets:
        raise InputError("an ad-hoc run needs at least one --budget")
    reps = count(reps, "--seeds", "privbench run", 1)
    firsts = [make_case(name, scenario, scenario, params, observation, privacy, family, lname, learner_params,
                        budgets, 0, n_train, n_eval, objective, distortion=distortion)
              for lname in dict.fromkeys(learners)]
    cases = [replace(first, rep=rep) for first in firsts for rep in range(reps)]  # validated once per learner
    return Suite(name=name, cases=cases, description="ad-hoc run from the command line", source="command line")

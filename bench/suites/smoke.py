"""Subsets of a suite: the experiments named by ``--only``, and the ``--smoke`` miniature."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Iterable

from privbench.bench.suites.case import Suite
from privbench.datasets.errors import InputError

SMOKE_N_TRAIN = 300
SMOKE_N_EVAL = 400


def select_experiments(suite: Suite, only: Iterable[str]) -> Suite:
    """The cases of ``suite`` whose experiment is named in ``only`` (``--only``).

    A name selects the experiment of that name and every experiment below it in
    the ``/`` hierarchy: ``ppan-fig5`` selects ``ppan-fig5/useful`` and
    ``ppan-fig5/full``.

    Raises
    ------
    InputError
        A name that selects nothing (the message lists the experiments).
    """
    only = list(dict.fromkeys(only))
    names = list(dict.fromkeys(c.experiment for c in suite.cases))
    keep: set[str] = set()
    for want in only:
        hit = [n for n in names if n == want or n.startswith(want.rstrip("/") + "/")]
        if not hit:
            raise InputError(f"--only {want!r} matches no experiment of suite {suite.name!r} "
                             f"(experiments: {', '.join(names)})")
        keep.update(hit)
    return replace(suite, cases=[c for c in suite.cases if c.experiment in keep],
                   skipped=[s for s in suite.skipped if s.experiment in keep])


def smoke_suite(suite: Suite) -> Suite:
    """A miniature of every experiment of ``suite`` (``privbench run --smoke``; CI runs the paper suite so).

    One case per (experiment, learner, scenario, observation, privacy, protocol): repetition 0,
    the first and last budget, at most ``SMOKE_N_TRAIN`` training and ``SMOKE_N_EVAL`` evaluation
    samples, and the learner's tiny ``test_params`` over its suite hyper-parameters (a case that
    would coincide with another experiment's gets one more evaluation sample, so that every
    experiment keeps its own stored rows, as in the full suite).  It runs
    every code path of the experiment (fit, evaluators, protocol, report) in seconds; its
    numbers mean nothing.
    """
    from privbench.learners import resolve_learner

    seen: set[tuple] = set()
    keys: set[str] = set()
    cases = []
    for c in suite.cases:
        k = (c.experiment, c.learner, c.scenario, c.params_json, c.observation, c.privacy, c.protocol,
             c.distortion)
        if k in seen:
            continue
        seen.add(k)
        tiny = dict(getattr(resolve_learner(c.learner), "test_params", None) or {})
        lp = {**c.learner_params, **tiny}
        budgets = (c.budgets[0], c.budgets[-1]) if len(c.budgets) > 1 else c.budgets
        small = replace(c, rep=0, n_train=min(c.n_train, SMOKE_N_TRAIN), n_eval=min(c.n_eval, SMOKE_N_EVAL),
                        budgets=tuple(budgets), learner_params_json=json.dumps(lp, sort_keys=True))
        while small.key in keys:  # two experiments' cases shrunk to one: keep them distinct, as in the suite
            small = replace(small, n_eval=small.n_eval + 1)
        keys.add(small.key)
        cases.append(small)
    return replace(suite, cases=cases, name=f"{suite.name}-smoke")

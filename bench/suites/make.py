"""Building one validated :class:`~privbench.bench.suites.case.Case`: scenario, task, learner, budgets."""

from __future__ import annotations

import json
from typing import Any, Iterable

from privbench.bench.suites.case import DEFAULT_N_EVAL, DEFAULT_N_TRAIN, Case, normalize_value
from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_SAMPLES
from privbench.datasets.validate import check_budgets, check_choice, check_int
from privbench.datasets.vocabulary import EVALUATOR_SETS, PROTOCOLS


def make_case(suite: str, experiment: str, scenario: str, params: dict[str, Any] | None,
              observation: str | None, privacy: str | None, family: str | None, learner: str,
              learner_params: dict[str, Any] | None, budgets: Iterable[float], rep: int = 0,
              n_train: int | None = DEFAULT_N_TRAIN, n_eval: int = DEFAULT_N_EVAL, objective: str | None = None,
              evaluators: str | None = None, protocol: str | None = None,
              distortion: str | None = None) -> Case:
    """Validate and canonicalise one case (scenario, optimum and learner must exist).

    ``distortion`` (None or the scenario's own: stored as None) asks for another one, e.g.
    ``logloss`` (H(U | Z), the privacy funnel) on a finite scenario.

    ``objective`` (the metric the learner trains for) defaults to ``privacy`` when
    the learner serves it, else to the learner's first privacy metric.

    Raises
    ------
    InputError
        Unknown scenario, parameter, learner or hyper-parameter; a (privacy,
        observation) pair without a known optimum; a learner that does not
        serve the task; a bad budget or sample size.
    """
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner

    sc = make_scenario(scenario, params or {})
    distortion = case_distortion(sc, distortion, protocol)
    privacy, observation, family = resolve_case(sc, privacy, observation, family, distortion)
    lp = normalize_value(dict(learner_params or {}))
    inst = make_learner(learner, **lp)
    task = task_for(sc, observation, privacy, distortion)
    objective, why = unserved(inst, task, objective)
    if objective is None:
        raise InputError(f"learner {learner!r} does not serve {sc.id} (task {task.kind}, observation "
                         f"{task.observation}, privacy {privacy}, distortion {task.distortion}): it {why}")
    b = tuple(float(x) for x in check_budgets(list(budgets)))
    if len(set(b)) != len(b):
        raise InputError(f"budgets {list(b)} repeat a value")
    n_train = check_int("n_train", default_n_train(sc) if n_train is None else n_train, 2, maximum=MAX_SAMPLES)
    n_eval = check_int("n_eval", n_eval, 2, maximum=MAX_SAMPLES)
    rep = check_int("rep", rep, 0)
    max_n = getattr(sc, "max_n", None)
    if max_n is not None and n_train > max_n:
        raise InputError(f"n_train={n_train} exceeds the training partition of {sc.name} (maximum {max_n})")
    check_hyper_parameters(inst, learner, task, n_train)
    return Case(suite=suite, experiment=experiment, scenario=sc.name,
                params_json=json.dumps(sc.params(), sort_keys=True), observation=observation,
                privacy=privacy, family=family, learner=learner,
                learner_params_json=json.dumps(lp, sort_keys=True), budgets=b, rep=rep,
                n_train=n_train, n_eval=n_eval, objective=None if objective == privacy else objective,
                evaluators=choice_or_none("evaluators", evaluators, EVALUATOR_SETS),
                protocol=choice_or_none("protocol", protocol, PROTOCOLS), distortion=distortion)


def case_distortion(sc: Any, distortion: Any, protocol: Any) -> str | None:
    """None for no distortion or the scenario's own, else the validated other one (InputError otherwise:
    an unknown name, one the scenario cannot state its task for, or a non-standard protocol).
    A scenario without a known optimum declares its others itself (``other_distortion``: images'
    ``logloss``)."""
    if distortion is None or distortion == getattr(sc, "distortion_name", None):
        return None
    if not sc.has_optimum:
        own = getattr(sc, "other_distortion", None)
        if own is None:
            raise InputError(f"distortion={distortion!r} is not available for {sc.name} (it has no known optimum; "
                             f"allowed: its own, {getattr(sc, 'distortion_name', '?')})")
        distortion = own(distortion)
    if protocol is not None:
        raise InputError(f"distortion={distortion!r} applies to the standard protocol only, not protocol={protocol!r}")
    if not sc.has_optimum:
        return distortion
    from privbench.theory.optimum import other_distortion

    return other_distortion(sc, str(distortion))


def check_hyper_parameters(inst: Any, learner: str, task: Any, n_train: int) -> None:
    """Resolve the learner's hyper-parameters for ``task`` now (``Learner.resolved``), so that a bad
    one is refused before the run starts, not recorded as a failed case."""
    try:
        inst.resolved(task, n_train)
    except InputError as exc:
        raise InputError(f"learner {learner!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a learner's own check of a bad value is bad input
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"learner {learner!r}: bad hyper-parameters ({type(exc).__name__}: {first})") from None


def resolve_case(sc: Any, privacy: str | None, observation: str | None,
                 family: str | None, distortion: str | None = None) -> tuple[str, str | None, str | None]:
    """(privacy, observation, family) of a case (under ``distortion``, None: the scenario's own).

    Theory's checks, or the scenario's own where it has no known optimum
    (labelled scenarios: privacy map | mi, observation useful | full).
    """
    if not sc.has_optimum:
        return sc.resolve(privacy, observation, family)
    from privbench.theory import resolve

    return resolve(sc, privacy, observation, family, distortion)


def default_n_train(sc: Any) -> int:
    """Training samples when none are given: DEFAULT_N_TRAIN, capped by a finite training partition."""
    max_n = getattr(sc, "max_n", None)
    return DEFAULT_N_TRAIN if max_n is None else min(DEFAULT_N_TRAIN, int(max_n))


def choice_or_none(name: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    """None for None, else ``value`` as str if it is one of ``allowed`` (InputError otherwise)."""
    if value is None:
        return None
    return str(check_choice(name, value, allowed))


def training_objective(learner: Any, task: Any, objective: str | None = None) -> str | None:
    """The privacy metric ``learner`` trains for on ``task``; None when it cannot serve the task.

    ``objective`` given: it, if the learner serves the task with it.  Otherwise ``task.privacy``
    if served, else the learner's first (native) privacy metric.  Whether a learner serves a
    task is its :meth:`~privbench.learners.Learner.supports` (the one test; see :func:`unserved`).
    """
    return unserved(learner, task, objective)[0]


def unserved(learner: Any, task: Any, objective: str | None = None) -> tuple[str | None, str | None]:
    """(training objective, None) when ``learner`` serves ``task``, else (None, why not: one phrase)."""
    if objective is None:
        if learner.supports(task):
            return task.privacy, None
        native = learner.privacies[0] if learner.privacies else None
        if native is None or native == task.privacy:
            return None, refusal_of(learner, task)
        objective = native
    trained = task.with_privacy(objective)
    if learner.supports(trained):
        return objective, None
    return None, refusal_of(learner, trained)


def refusal_of(learner: Any, task: Any) -> str:
    """Why ``learner`` refuses ``task``: its :meth:`refusal` or, where only ``supports()`` refuses, that."""
    why = learner.refusal(task) if callable(getattr(learner, "refusal", None)) else None
    return why or "its supports() refuses this task"

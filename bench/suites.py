"""Cases and suites: what the bench runs, declared as data.

A :class:`Case` is one training run: a scenario (name and parameters), the
observation model, the privacy metric, the mechanism family (``binary-gmm``
only), one or more distortion budgets (trained as one batched ``fit``), a
learner with its hyper-parameters, the repetition index, and the training and
evaluation sample sizes.  The store keeps one row per budget.

A suite is a YAML file (benchopt style: parameter grids expanded into cases)::

    description: what it is for
    reps: 1                     # repetitions (seeds) per case; --seeds overrides
    n_train: 4000               # defaults for every experiment
    n_eval: 4000
    timeout: 60                 # optional per-case timeout in seconds
    learners:                   # hyper-parameters per learner, one line each
      identity: {}
      ppan: {on: [sympair], params: {steps: 300}}   # only on the experiments named
    experiments:
      - name: sympair
        scenario: symmetric-pair
        params: {m: 4, p: 0.3}  # or a list of such mappings (a grid of scenarios)
        observation: [useful, full]   # a value or a list (grid); same for privacy,
        privacy: mi                   # family, objective, n_train and n_eval
        budgets: [0.1, 0.3]     # one batched fit per case
        learners: all           # every suite learner that serves the task, or a list of
                                # names and {name: {hyper-parameters}}; a `budgets` key there
                                # gives that learner its own budgets (another unit: a KL budget)

``privacy`` is the metric a case is scored on; a learner trains for it when it
can, else for its own first metric (``objective``, recorded in the store): PPAN's
MI objective is scored by MAP accuracy on ``binary-gmm``, as in the GAP paper.

Seeds: every case derives its training seed from a SHA-256 hash of its own
parameters and repetition (:attr:`Case.seed`), so the same command gives the
same numbers on any machine.  The training samples are drawn with
:attr:`Case.train_seed` (scenario, parameters, ``n_train``, repetition) and the
evaluation samples with :attr:`Case.eval_seed`: every learner of a suite sees
the same data (common random numbers), which makes comparisons paired.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import EVALUATOR_SETS, PROTOCOLS

SUITE_KEYS = {"name", "description", "reps", "n_train", "n_eval", "timeout", "learners", "experiments"}
EXPERIMENT_KEYS = {"name", "scenario", "params", "observation", "privacy", "family", "objective", "budgets",
                   "learners", "n_train", "n_eval", "reps", "evaluators", "protocol", "paper"}
DEFAULT_N_TRAIN = 20000
DEFAULT_N_EVAL = 20000
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def stable_hash(obj: Any, n: int = 16) -> str:
    """Hex SHA-256 of the canonical JSON of ``obj`` (stable across runs, machines, Python versions)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def _seed_of(obj: Any) -> int:
    return int(stable_hash(obj, 8), 16) & 0x7FFFFFFF


def normalize_value(value: Any) -> Any:
    """Canonical JSON-able hyper-parameter value: numeric strings (``1e-3``) become numbers."""
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        v = value.strip()
        return int(v) if re.fullmatch(r"[+-]?\d+", v) else float(v)
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): normalize_value(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Case:
    """One training run of one learner on one scenario at one or more budgets.

    Attributes
    ----------
    suite, experiment : str
        Where it was declared (not part of its identity or seed).
    scenario : str
        Scenario name (``privbench list scenarios``).
    params_json : str
        Canonical JSON of the scenario parameters (as ``Scenario.params()``).
    observation : str or None
        ``useful`` or ``full``; None for ``gaussian-source``.
    privacy : str
        ``mi``, ``map`` or ``chi2``.
    family : str or None
        Mechanism family of a ``binary-gmm`` bound.
    learner : str
        Registered name or ``module:Class``.
    learner_params_json : str
        Canonical JSON of the learner's hyper-parameters.
    budgets : tuple of float
        Distortion budgets, trained as one batched fit; one store row each.
    rep, n_train, n_eval : int
    objective : str or None
        The privacy metric the learner trains for when it differs from
        ``privacy``, the metric it is scored on (e.g. PPAN's MI objective scored
        by MAP accuracy on ``binary-gmm``); None: the same.
    evaluators : str or None
        An extra evaluator set run on top of the standard ones (``mismatch``:
        fresh attackers of several architectures, the attacker-mismatch study);
        None: only the standard evaluators.
    protocol : str or None
        A non-standard experiment protocol run instead of fit-then-evaluate
        (``two-user``: the generative-filter paper's §6.7.5 per-user filters);
        None: the standard protocol.
    """

    suite: str
    experiment: str
    scenario: str
    params_json: str
    observation: str | None
    privacy: str
    family: str | None
    learner: str
    learner_params_json: str
    budgets: tuple[float, ...]
    rep: int = 0
    n_train: int = DEFAULT_N_TRAIN
    n_eval: int = DEFAULT_N_EVAL
    objective: str | None = None
    evaluators: str | None = None
    protocol: str | None = None

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.params_json)

    @property
    def learner_params(self) -> dict[str, Any]:
        return json.loads(self.learner_params_json)

    def identity(self) -> dict[str, Any]:
        """Everything that determines the case's numbers except the budgets."""
        return {"scenario": self.scenario, "params": self.params, "observation": self.observation,
                "privacy": self.privacy, "family": self.family, "learner": self.learner,
                "learner_params": self.learner_params, "n_train": self.n_train, "n_eval": self.n_eval,
                "rep": self.rep, **({"objective": self.objective} if self.objective else {}),
                **({"evaluators": self.evaluators} if self.evaluators else {}),
                **({"protocol": self.protocol} if self.protocol else {})}

    @property
    def training_privacy(self) -> str:
        """The privacy metric of the learner's Task (its training objective)."""
        return self.objective or self.privacy

    @property
    def key(self) -> str:
        """Stable id of the batched fit (all budgets): names its store part and claim."""
        return stable_hash(self.identity())

    @property
    def seed(self) -> int:
        """Training seed: a hash of the case's parameters and repetition (31 bits)."""
        return _seed_of(["fit", self.identity()])

    @property
    def train_seed(self) -> int:
        """Seed of the training samples (shared by all learners on the same data)."""
        return _seed_of(["train", self.scenario, self.params, self.n_train, self.rep])

    @property
    def eval_seed(self) -> int:
        """Seed of the fresh evaluation samples (shared by all learners)."""
        return _seed_of(["eval", self.scenario, self.params, self.n_eval, self.rep])

    def case_id(self, budget: float) -> str:
        """Stable id of one store row: the case's parameters, repetition and budget."""
        return stable_hash({**self.identity(), "budget": float(budget)})

    def case_ids(self) -> list[str]:
        return [self.case_id(b) for b in self.budgets]

    def with_budgets(self, budgets: Iterable[float]) -> "Case":
        return replace(self, budgets=tuple(float(b) for b in budgets))

    def label(self) -> str:
        obs = f"/{self.observation}" if self.observation else ""
        return f"{self.learner} on {self.scenario}{obs}/{self.privacy} rep {self.rep}"


@dataclass
class Suite:
    """A named, declared list of cases."""

    name: str
    cases: list[Case]
    description: str = ""
    timeout: float | None = None
    source: str = ""
    learners: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"params", "on"}


def make_case(suite: str, experiment: str, scenario: str, params: dict[str, Any] | None,
              observation: str | None, privacy: str | None, family: str | None, learner: str,
              learner_params: dict[str, Any] | None, budgets: Iterable[float], rep: int = 0,
              n_train: int | None = DEFAULT_N_TRAIN, n_eval: int = DEFAULT_N_EVAL, objective: str | None = None,
              evaluators: str | None = None, protocol: str | None = None) -> Case:
    """Validate and canonicalise one case (scenario, optimum and learner must exist).

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
    from privbench.learners.base import check_budgets

    sc = make_scenario(scenario, params or {})
    privacy, observation, family = resolve_case(sc, privacy, observation, family)
    lp = normalize_value(dict(learner_params or {}))
    inst = make_learner(learner, **lp)
    task = task_for(sc, observation, privacy)
    objective = training_objective(inst, task, objective)
    if objective is None:
        raise InputError(
            f"learner {learner!r} does not serve {sc.name} (task {task.kind}, observation "
            f"{task.observation}, privacy {privacy}); it serves kinds {', '.join(inst.serves)}, "
            f"observations {', '.join(inst.observations)}, privacy {', '.join(inst.privacies)}")
    b = tuple(float(x) for x in check_budgets(list(budgets)))
    if len(set(b)) != len(b):
        raise InputError(f"budgets {list(b)} repeat a value")
    n_train = default_n_train(sc) if n_train is None else n_train
    for name, v in (("n_train", n_train), ("n_eval", n_eval), ("rep", rep)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "rep" else 2):
            raise InputError(f"{name}={v!r} must be an integer >= {0 if name == 'rep' else 2}")
    max_n = getattr(sc, "max_n", None)
    if max_n is not None and n_train > max_n:
        raise InputError(f"n_train={n_train} exceeds the training partition of {sc.name} (maximum {max_n})")
    return Case(suite=suite, experiment=experiment, scenario=sc.name,
                params_json=json.dumps(sc.params(), sort_keys=True), observation=observation,
                privacy=privacy, family=family, learner=learner,
                learner_params_json=json.dumps(lp, sort_keys=True), budgets=b, rep=rep,
                n_train=n_train, n_eval=n_eval, objective=None if objective == privacy else objective,
                evaluators=_choice_or_none("evaluators", evaluators, EVALUATOR_SETS),
                protocol=_choice_or_none("protocol", protocol, PROTOCOLS))


def resolve_case(sc: Any, privacy: str | None, observation: str | None,
                 family: str | None) -> tuple[str, str | None, str | None]:
    """(privacy, observation, family) of a case: theory's checks, or the scenario's own where it
    has no known optimum (labelled scenarios: privacy map | mi, observation useful | full)."""
    if not getattr(sc, "has_optimum", True):
        return sc.resolve(privacy, observation, family)
    from privbench.theory import resolve

    return resolve(sc, privacy, observation, family)


def default_n_train(sc: Any) -> int:
    """Training samples when none are given: DEFAULT_N_TRAIN, capped by a finite training partition."""
    max_n = getattr(sc, "max_n", None)
    return DEFAULT_N_TRAIN if max_n is None else min(DEFAULT_N_TRAIN, int(max_n))




def _choice_or_none(name: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    if value not in allowed:
        raise InputError(f"{name}={value!r} is unknown (allowed: {', '.join(allowed)})")
    return str(value)


def training_objective(learner: Any, task: Any, objective: str | None = None) -> str | None:
    """The privacy metric ``learner`` trains for on ``task``; None when it cannot serve the task.

    ``objective`` given: it, if the learner serves it.  Otherwise ``task.privacy``
    if served, else the learner's first (native) privacy metric.
    """
    if task.kind not in learner.serves or task.observation not in learner.observations:
        return None
    if objective is not None:
        return objective if objective in learner.privacies else None
    if task.privacy in learner.privacies:
        return task.privacy
    return learner.privacies[0] if learner.privacies else None


# --------------------------------------------------------------------------
# suite files
# --------------------------------------------------------------------------


def packaged_suites() -> list[str]:
    """Names of the suites shipped with privbench."""
    root = resources.files("privbench.bench") / "suites"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def suite_path(spec: str) -> tuple[str, Any]:
    """(name, path-like) of a suite given by name or by a path to a YAML file."""
    p = Path(spec)
    if spec.endswith((".yaml", ".yml")) or p.is_file():
        if not p.is_file():
            raise InputError(f"suite file {spec!r} does not exist")
        return p.stem, p
    ref = resources.files("privbench.bench") / "suites" / f"{spec}.yaml"
    if ref.is_file():
        return spec, ref
    known = ", ".join(packaged_suites())
    raise InputError(f"suite {spec!r} is unknown (available: {known}, or a path to a .yaml file)")


def load_suite(spec: str, reps: int | None = None,
               learners: dict[str, dict[str, Any]] | None = None) -> Suite:
    """Load a suite by name (shipped) or path, expanding its grids into cases.

    Parameters
    ----------
    spec : str
        ``quick``, ``regression``, ... or a path to a YAML suite file.
    reps : int, optional
        Repetitions per case, overriding the file's ``reps`` (``--seeds``).
    learners : dict, optional
        name or ``module:Class`` -> hyper-parameters, replacing the suite's
        learner choice everywhere: each experiment runs those of them that
        serve its task (``privbench check --learner``).

    Raises
    ------
    InputError
        Unknown suite, malformed file, unknown key, scenario, parameter or learner.
    """
    import yaml

    name, path = suite_path(spec)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"suite file {str(path)!r} is not valid YAML{where}: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"suite file {str(path)!r} cannot be read ({exc})") from None
    return parse_suite(data, name=name, source=str(path), reps=reps, learners=learners)


def parse_suite(data: Any, name: str, source: str = "<suite>", reps: int | None = None,
                learners: dict[str, dict[str, Any]] | None = None) -> Suite:
    """Expand a parsed suite mapping into a :class:`Suite` (see the module docstring)."""
    where = f"suite {name!r} ({source})"
    if not isinstance(data, dict):
        raise InputError(f"{where}: the file must hold a mapping with 'experiments'")
    _no_unknown(data, SUITE_KEYS, where)
    name = str(data.get("name") or name)
    where = f"suite {name!r} ({source})"
    table = _learner_table(data.get("learners"), where)
    if learners is not None:
        table = {k: {"params": normalize_value(dict(v or {})), "on": None} for k, v in learners.items()}
    exps = data.get("experiments")
    if not isinstance(exps, list) or not exps:
        raise InputError(f"{where}: 'experiments' must be a non-empty list")
    d_reps = _int(data.get("reps", 1), "reps", where) if reps is None else _int(reps, "--seeds", where, 1)
    timeout = data.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise InputError(f"{where}: timeout={timeout!r} must be a positive number of seconds")
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for i, exp in enumerate(exps):
        if not isinstance(exp, dict):
            raise InputError(f"{where}: experiment {i + 1} must be a mapping")
        ename = str(exp.get("name") or f"experiment-{i + 1}")
        ewhere = f"{where} experiment {ename!r}"
        _no_unknown(exp, EXPERIMENT_KEYS, ewhere)
        for case in _expand(exp, ename, name, data, table, learners is not None, d_reps, reps, ewhere):
            if case.key in seen:
                raise InputError(f"{ewhere}: declares the same case as experiment {seen[case.key]!r} "
                                 f"({case.label()})")
            seen[case.key] = ename
            cases.append(case)
    if not cases:
        raise InputError(f"{where}: no case is served by the learner(s) {', '.join(table)}")
    names = {str(e.get("name") or f"experiment-{i + 1}") for i, e in enumerate(exps)}
    for lname, entry in table.items():
        for exp_name in entry["on"] or ():
            if exp_name not in names:
                raise InputError(f"{where}: learner {lname!r} is 'on' experiment {exp_name!r}, which does not "
                                 f"exist (experiments: {', '.join(sorted(names))})")
        if entry["on"] and not any(c.learner == lname for c in cases):
            raise InputError(f"{where}: learner {lname!r} serves none of the experiments it is 'on'")
    return Suite(name=name, cases=cases, description=str(data.get("description") or ""),
                 timeout=float(timeout) if timeout is not None else None, source=source, learners=table)


def _expand(exp: dict[str, Any], ename: str, suite: str, top: dict[str, Any], table: dict[str, dict],
            override: bool, d_reps: int, reps_cli: int | None, where: str) -> list[Case]:
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner

    if "scenario" not in exp:
        raise InputError(f"{where}: 'scenario' is missing")
    plist = exp.get("params") or {}
    plist = plist if isinstance(plist, list) else [plist]
    if not all(isinstance(p, dict) for p in plist):
        raise InputError(f"{where}: 'params' must be a mapping or a list of mappings")
    budgets = exp.get("budgets")
    if not isinstance(budgets, list) or not budgets:
        raise InputError(f"{where}: 'budgets' must be a non-empty list of numbers")
    reps = d_reps if reps_cli is not None else _int(exp.get("reps", d_reps), "reps", where)
    grid = {k: _as_list(exp.get(k, top.get(k) if k in ("n_train", "n_eval") else None))
            for k in ("observation", "privacy", "family", "objective", "n_train", "n_eval")}
    choice = exp.get("learners", "all")
    if override or choice == "all":
        picks = [(n, e["params"], None) for n, e in table.items()
                 if override or e["on"] is None or ename in e["on"]]
        strict = False
    elif isinstance(choice, list):
        picks, strict = [], True
        for item in choice:
            if isinstance(item, str):
                picks.append((item, table[item]["params"] if item in table else {}, None))
            elif isinstance(item, dict) and len(item) == 1:
                (lname, lp), = item.items()
                if not isinstance(lp, (dict, type(None))):
                    raise InputError(f"{where}: hyper-parameters of learner {lname!r} must be a mapping")
                lp = dict(lp or {})
                own = lp.pop("budgets", None)  # a learner's own budgets (another unit, e.g. a KL budget)
                if own is not None and (not isinstance(own, list) or not own):
                    raise InputError(f"{where}: budgets of learner {lname!r} must be a non-empty list of numbers")
                picks.append((str(lname), normalize_value(lp), own))
            else:
                raise InputError(f"{where}: learners entry {item!r} must be a name or {{name: params}}")
    else:
        raise InputError(f"{where}: 'learners' must be 'all' or a list, got {choice!r}")
    out: list[Case] = []
    try:
        for params in plist:
            sc = make_scenario(str(exp["scenario"]), {str(k): v for k, v in params.items()})
            for obs in grid["observation"]:
                for priv in grid["privacy"]:
                    for fam in grid["family"]:
                        privacy, observation, family = resolve_case(sc, priv, obs, fam)
                        task = task_for(sc, observation, privacy)
                        for lname, lp, own, objective in ((n, p, b, o) for n, p, b in picks
                                                          for o in grid["objective"]):
                            if not strict and training_objective(make_learner(lname, **lp), task, objective) is None:
                                continue
                            for n_train in grid["n_train"]:
                                for n_eval in grid["n_eval"]:
                                    for rep in range(reps):
                                        out.append(make_case(
                                            suite, ename, sc.name, sc.params(), observation, privacy, family,
                                            lname, lp, own if own is not None else budgets, rep,
                                            _int(n_train if n_train is not None else default_n_train(sc),
                                                 "n_train", where, 2),
                                            _int(n_eval if n_eval is not None else DEFAULT_N_EVAL,
                                                 "n_eval", where, 2), objective,
                                            exp.get("evaluators"), exp.get("protocol")))
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return out


def _learner_table(raw: Any, where: str) -> dict[str, dict[str, Any]]:
    """name -> {"params": hyper-parameters, "on": experiment names or None (all it serves)}.

    An entry is ``name: {hyper-parameters}``, or ``name: {on: [experiments], params: {...}}``.
    """
    from privbench.learners import available, resolve_learner

    if raw is None:
        return {name: {"params": {}, "on": None} for name in available()}
    if not isinstance(raw, dict):
        raise InputError(f"{where}: 'learners' must map learner names to hyper-parameters")
    table = {}
    for lname, lp in raw.items():
        if lp is not None and not isinstance(lp, dict):
            raise InputError(f"{where}: hyper-parameters of learner {lname!r} must be a mapping")
        lp = dict(lp or {})
        if True in lp:  # YAML 1.1 reads an unquoted key `on` as the boolean true
            lp["on"] = lp.pop(True)
        on = None
        if "on" in lp:
            extra = sorted(set(lp) - {"on", "params"})
            if extra:
                raise InputError(f"{where}: learner {lname!r}: with 'on', hyper-parameters go under 'params' "
                                 f"(unexpected key {extra[0]!r})")
            on = lp["on"] if isinstance(lp["on"], list) else [lp["on"]]
            lp = lp.get("params") or {}
            if not isinstance(lp, dict):
                raise InputError(f"{where}: 'params' of learner {lname!r} must be a mapping")
        try:
            resolve_learner(str(lname))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        table[str(lname)] = {"params": normalize_value(lp), "on": [str(x) for x in on] if on else on}
    return table


def _no_unknown(d: dict[str, Any], allowed: set[str], where: str) -> None:
    bad = sorted(set(map(str, d)) - allowed)
    if bad:
        raise InputError(f"{where}: unknown key {bad[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list) else [v]


def _int(v: Any, name: str, where: str, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise InputError(f"{where}: {name}={v!r} must be an integer >= {minimum}")
    return v


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
    return replace(suite, cases=[c for c in suite.cases if c.experiment in keep])


SMOKE_N_TRAIN = 300
SMOKE_N_EVAL = 400


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
        k = (c.experiment, c.learner, c.scenario, c.params_json, c.observation, c.privacy, c.protocol)
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


def adhoc_suite(scenario: str, params: dict[str, Any], observation: str | None, privacy: str | None,
                family: str | None, learners: list[str], learner_params: dict[str, Any],
                budgets: list[float], reps: int = 1, n_train: int | None = None,
                n_eval: int = DEFAULT_N_EVAL, name: str = "adhoc", objective: str | None = None) -> Suite:
    """A suite of one experiment from command-line options (``privbench run --scenario ...``).

    ``learner_params`` apply to every learner given; ``n_train`` None is
    :func:`default_n_train` (the training partition's size where that is smaller).
    """
    if not learners:
        raise InputError("an ad-hoc run needs --learner (see 'privbench list learners')")
    if not budgets:
        raise InputError("an ad-hoc run needs at least one --budget")
    reps = _int(reps, "--seeds", "privbench run", 1)
    cases = [make_case(name, scenario, scenario, params, observation, privacy, family, lname, learner_params,
                       budgets, rep, n_train, n_eval, objective)
             for lname in dict.fromkeys(learners) for rep in range(reps)]
    return Suite(name=name, cases=cases, description="ad-hoc run from the command line", source="command line")

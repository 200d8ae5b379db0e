"""Suite files: finding a shipped or local YAML suite and expanding its grids into cases.

The file format is described in :mod:`privbench.bench.suites`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from privbench.bench.suites.case import DEFAULT_N_EVAL, Case, Skip, Suite, normalize_value
from privbench.bench.suites.make import case_distortion, default_n_train, make_case, resolve_case, unserved
from privbench.bench.suites.schema import check_suite_data
from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_CASES, MAX_REPS, MAX_SAMPLES
from privbench.datasets.validate import check_int

#: The keys of an experiment that may hold a value or a list of values (a grid).
GRID_KEYS = ("observation", "privacy", "family", "objective", "n_train", "n_eval")
#: Where the shipped suites live (this package's own folder).
SUITES_PACKAGE = "privbench.bench.suites"


def packaged_suites() -> list[str]:
    """Names of the suites shipped with privbench."""
    root = resources.files(SUITES_PACKAGE)
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def suite_path(spec: str) -> tuple[str, Any]:
    """(name, path-like) of a suite given by name or by a path to a YAML file."""
    p = Path(spec)
    if spec.endswith((".yaml", ".yml")) or p.is_file():
        if not p.is_file():
            raise InputError(f"suite file {spec!r} does not exist")
        return p.stem, p
    ref = resources.files(SUITES_PACKAGE) / f"{spec}.yaml"
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
    except RecursionError:
        raise InputError(f"suite file {str(path)!r} is nested too deeply to be a suite") from None
    try:
        return parse_suite(data, name=name, source=str(path), reps=reps, learners=learners)
    except RecursionError:
        raise InputError(f"suite file {str(path)!r} is nested too deeply to be a suite") from None


def parse_suite(data: Any, name: str, source: str = "<suite>", reps: int | None = None,
                learners: dict[str, dict[str, Any]] | None = None) -> Suite:
    """Expand a parsed suite mapping into a :class:`Suite` (see :mod:`privbench.bench.suites`)."""
    where = f"suite {name!r} ({source})"
    check_suite_data(data, where)  # the structure, by the JSON Schema of .schema
    name = str(data.get("name") or name)
    where = f"suite {name!r} ({source})"
    table = learner_table(data.get("learners"), where)
    if learners is not None:
        table = {k: {"params": normalize_value(dict(v or {})), "on": None} for k, v in learners.items()}
    exps = data["experiments"]
    d_reps = int(data.get("reps", 1)) if reps is None else count(reps, "--seeds", where, 1)
    timeout = data.get("timeout")
    cases: list[Case] = []
    skips: list[Skip] = []
    seen: dict[str, str] = {}
    for i, exp in enumerate(exps):
        ename = str(exp.get("name") or f"experiment-{i + 1}")
        ewhere = f"{where} experiment {ename!r}"
        for case in expand(exp, ename, name, data, table, learners is not None, d_reps, reps, ewhere, skips):
            if case.key in seen:
                raise InputError(f"{ewhere}: declares the same case as experiment {seen[case.key]!r} "
                                 f"({case.label()})")
            seen[case.key] = ename
            cases.append(case)
        if len(cases) > MAX_CASES:
            raise InputError(f"{where}: declares more than {MAX_CASES} cases (privbench.datasets.limits.MAX_CASES)")
    if not cases:
        why = f" ({skips[0].learner!r} {skips[0].reason})" if skips else ""
        raise InputError(f"{where}: no case is served by the learner(s) {', '.join(table)}{why}")
    check_on(table, cases, {str(e.get("name") or f"experiment-{i + 1}") for i, e in enumerate(exps)}, where)
    return Suite(name=name, cases=cases, description=str(data.get("description") or ""),
                 timeout=float(timeout) if timeout is not None else None, source=source, learners=table,
                 skipped=skips)


def check_on(table: dict[str, dict[str, Any]], cases: list[Case], names: set[str], where: str) -> None:
    """Every experiment a learner is ``on`` exists, and the learner serves at least one of them."""
    for lname, entry in table.items():
        for exp_name in entry["on"] or ():
            if exp_name not in names:
                raise InputError(f"{where}: learner {lname!r} is 'on' experiment {exp_name!r}, which does not "
                                 f"exist (experiments: {', '.join(sorted(names))})")
        if entry["on"] and not any(c.learner == lname for c in cases):
            raise InputError(f"{where}: learner {lname!r} serves none of the experiments it is 'on'")


def expand(exp: dict[str, Any], ename: str, suite: str, top: dict[str, Any], table: dict[str, dict],
           override: bool, d_reps: int, reps_cli: int | None, where: str, skips: list[Skip]) -> list[Case]:
    """The cases of one experiment: its grid of parameters, observations, ..., learners and repetitions.

    ``override`` (``privbench check --learner``): every learner of ``table`` runs wherever it
    serves the task, whatever the experiment's ``learners``.  Learners picked by ``all`` skip
    tasks they do not serve (each appended to ``skips``); learners the experiment names must
    serve every task.
    """
    plist = exp.get("params") or {}  # the shapes of these values were checked by the schema
    plist = plist if isinstance(plist, list) else [plist]
    budgets = exp["budgets"]
    reps = d_reps if reps_cli is not None else int(exp.get("reps", d_reps))
    grid = {k: as_list(exp.get(k, top.get(k) if k in ("n_train", "n_eval") else None)) for k in GRID_KEYS}
    picks, strict = learner_picks(exp.get("learners", "all"), table, ename, override, where)
    declared = len(plist) * reps * max(1, len(picks)) * math.prod(len(v) for v in grid.values())
    if declared > MAX_CASES:
        raise InputError(f"{where}: declares {declared} cases, beyond the limit {MAX_CASES} "
                         "(privbench.datasets.limits.MAX_CASES)")
    try:
        return [case for params in plist
                for case in expand_scenario(exp, ename, suite, params, grid, picks, strict, budgets, reps, where,
                                            skips)]
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def expand_scenario(exp: dict[str, Any], ename: str, suite: str, params: dict[str, Any],
                    grid: dict[str, list[Any]], picks: list[tuple[str, dict[str, Any], Any]], strict: bool,
                    budgets: list[Any], reps: int, where: str, skips: list[Skip]) -> list[Case]:
    """The cases of one experiment on one scenario (one entry of its ``params`` list).

    A task a learner does not serve (:meth:`Learner.supports`) makes no case; outside ``strict``
    it is appended to ``skips``, under ``strict`` :func:`make_case` refuses it.
    """
    from privbench.datasets.scenarios import make_scenario
    from privbench.datasets.tasks import task_for
    from privbench.learners import make_learner

    sc = make_scenario(str(exp["scenario"]), {str(k): v for k, v in params.items()})
    distortion = case_distortion(sc, exp.get("distortion"), exp.get("protocol"))
    out: list[Case] = []
    for obs in grid["observation"]:
        for priv in grid["privacy"]:
            for fam in grid["family"]:
                privacy, observation, family = resolve_case(sc, priv, obs, fam, distortion)
                task = task_for(sc, observation, privacy, distortion)
                for lname, lp, own, objective in ((n, p, b, o) for n, p, b in picks for o in grid["objective"]):
                    if not strict:
                        why = unserved(make_learner(lname, **lp), task, objective)[1]
                        if why is not None:
                            skips.append(Skip(ename, sc.id, observation, privacy, lname, why))
                            continue
                    for n_train in grid["n_train"]:
                        for n_eval in grid["n_eval"]:
                            first = make_case(
                                suite, ename, sc.name, sc.params(), observation, privacy, family,
                                lname, lp, own if own is not None else budgets, 0,
                                count(n_train if n_train is not None else default_n_train(sc),
                                      "n_train", where, 2),
                                count(n_eval if n_eval is not None else DEFAULT_N_EVAL, "n_eval", where, 2),
                                objective, exp.get("evaluators"), exp.get("protocol"), distortion)
                            out.extend(replace(first, rep=rep) for rep in range(reps))  # validated once
    return out


def learner_picks(choice: Any, table: dict[str, dict[str, Any]], ename: str, override: bool,
                  where: str) -> tuple[list[tuple[str, dict[str, Any], Any]], bool]:
    """(name, hyper-parameters, own budgets or None) of each learner an experiment runs, and strictness.

    ``strict`` is True when the experiment names its learners (each must serve the task),
    False for ``all`` or an override (a learner that does not serve a task skips it).
    """
    if override or choice == "all":
        picks = [(n, e["params"], None) for n, e in table.items()
                 if override or e["on"] is None or ename in e["on"]]
        return picks, False
    picks = []  # 'all' or a list of names and {name: params}: checked by the schema
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
    return picks, True


def learner_table(raw: Any, where: str) -> dict[str, dict[str, Any]]:
    """name -> {"params": hyper-parameters, "on": experiment names or None (all it serves)}.

    An entry is ``name: {hyper-parameters}``, or ``name: {on: [experiments], params: {...}}``.
    """
    from privbench.learners import available, resolve_learner

    if raw is None:
        return {name: {"params": {}, "on": None} for name in available()}
    table = {}
    for lname, lp in raw.items():  # a mapping of mappings (or nulls): checked by the schema
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


def as_list(v: Any) -> list[Any]:
    """``v`` if it is a list, else a list of it (a grid of one)."""
    return list(v) if isinstance(v, list) else [v]


def count(v: Any, name: str, where: str, minimum: int = 1) -> int:
    """``v`` if it is an integer >= ``minimum`` and within its documented limit
    (:data:`~privbench.datasets.limits.MAX_SAMPLES` for sample sizes, else
    :data:`~privbench.datasets.limits.MAX_REPS`), else InputError prefixed with ``where``."""
    maximum = MAX_SAMPLES if name.startswith("n_") else MAX_REPS
    try:
        return check_int(name, v, minimum, maximum=maximum)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None

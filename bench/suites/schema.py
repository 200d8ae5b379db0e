"""The suite file's structure as a JSON Schema (validated with ``jsonschema``), and one-line errors from it.

The schema checks shape and ranges: which keys exist, which values are lists, mappings,
strings or numbers, and the documented limits of counts (:mod:`privbench.datasets.limits`).
What needs privbench's registries (scenario and learner names, parameters, budgets'
values, (privacy, observation) pairs with an optimum) stays in :mod:`.loading` and :mod:`.make`.
An ``integer`` is an int (not a bool, not 1.0): the schema's type checker is narrowed so.
"""

from __future__ import annotations

import functools
from typing import Any

from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_MAGNITUDE, MAX_REPS, MAX_SAMPLES

SUITE_KEYS = {"name", "description", "reps", "n_train", "n_eval", "timeout", "learners", "experiments"}
EXPERIMENT_KEYS = {"name", "scenario", "params", "observation", "privacy", "family", "objective", "budgets",
                   "learners", "n_train", "n_eval", "reps", "evaluators", "protocol", "paper", "distortion"}


def _count(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi, "description": f"an integer in [{lo}, {hi}]"}


SIZE = _count(2, MAX_SAMPLES)
SIZES = {"anyOf": [SIZE, {"type": "array", "items": SIZE, "minItems": 1}],
         "description": f"a sample size in [2, {MAX_SAMPLES}] or a non-empty list of them (leave the key out for "
                        "the default)"}
REPS = _count(1, MAX_REPS)
NAMES = {"anyOf": [{"type": ["string", "null"]}, {"type": "array", "items": {"type": "string"}, "minItems": 1}],
         "description": "a name or a non-empty list of names"}
MAPPING = {"type": "object", "description": "a mapping"}
LEARNER_PICK = {"anyOf": [{"type": "string"},
                          {"type": "object", "minProperties": 1, "maxProperties": 1,
                           "additionalProperties": {"type": ["object", "null"]}}],
                "description": "a learner name or {name: {hyper-parameters}}"}
EXPERIMENT = {
    "type": "object",
    "description": "a mapping",
    "required": ["scenario", "budgets"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "description": "a string"},
        "scenario": {"type": "string", "description": "a scenario name (privbench list scenarios)"},
        "params": {"anyOf": [MAPPING, {"type": "array", "items": MAPPING}],
                   "description": "a mapping or a list of mappings"},
        "observation": NAMES, "privacy": NAMES, "family": NAMES, "objective": NAMES,
        "budgets": {"type": "array", "minItems": 1, "items": {"type": "number"},
                    "description": "a non-empty list of numbers"},
        "learners": {"anyOf": [{"const": "all"}, {"type": "array", "items": LEARNER_PICK}],
                     "description": "'all' or a list of learner names and {name: {hyper-parameters}}"},
        "n_train": SIZES, "n_eval": SIZES, "reps": REPS,
        "evaluators": {"type": ["string", "null"], "description": "a string"},
        "protocol": {"type": ["string", "null"], "description": "a string"},
        "distortion": {"type": ["string", "null"],
                       "description": "a distortion name (logloss; leave the key out for the scenario's own)"},
        "paper": MAPPING,
    },
}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "description": "a mapping with 'experiments'",
    "required": ["experiments"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "description": "a string"},
        "description": {"type": ["string", "null"], "description": "a string"},
        "reps": REPS, "n_train": SIZES, "n_eval": SIZES,
        "timeout": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": MAX_MAGNITUDE,
                    "description": "a positive number of seconds"},
        "learners": {"type": ["object", "null"],
                     "additionalProperties": {"type": ["object", "null"], "description": "a mapping of hyper-parameters"},
                     "description": "a mapping of learner names to hyper-parameters"},
        "experiments": {"type": "array", "minItems": 1, "items": EXPERIMENT, "description": "a non-empty list"},
    },
}


def validator() -> Any:
    """A Draft 2020-12 validator of :data:`SCHEMA` whose ``integer`` excludes bools and floats."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, x: isinstance(x, int) and not isinstance(x, bool))
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    return cls(SCHEMA)


@functools.lru_cache(maxsize=1)
def validator() -> Any:
    """A Draft 2020-12 validator of :data:`SCHEMA` whose ``integer`` excludes bools and floats."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, x: isinstance(x, int) and not isinstance(x, bool))
    return validators.extend(Draft202012Validator, type_checker=checker)(SCHEMA)


def check_suite_data(data: Any, where: str) -> None:
    """InputError (one line, prefixed with ``where``) for the first schema violation of a parsed suite file.

    The shallowest violation is reported first (an unknown top-level key before a bad value
    inside an experiment), then in document order.
    """
    errors = list(validator().iter_errors(data))
    if not errors:
        return
    err = min(errors, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    raise InputError(f"{where}{location(data, list(err.absolute_path))}: {message(err, data)}")


def location(data: Any, path: list[Any]) -> str:
    """`` experiment 'NAME'`` / `` learner 'NAME'`` for a path into an experiment or the learner table."""
    if len(path) >= 2 and path[0] == "experiments" and isinstance(data["experiments"][path[1]], dict):
        name = data["experiments"][path[1]].get("name")
        return f" experiment {str(name or f'experiment-{path[1] + 1}')!r}"
    if len(path) >= 2 and path[0] == "learners":
        return f" learner {str(path[1])!r}"
    return ""


def message(err: Any, data: Any) -> str:
    """The violation in privbench's words: the key, the bad value (shortened) and what is allowed."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and err.schema.get("properties"):
        allowed = sorted(err.schema["properties"])
        extra = sorted(set(map(str, err.instance)) - set(allowed))
        return f"unknown key {extra[0]!r} (allowed: {', '.join(allowed)})"
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return f"{missing[0]!r} is missing"
    if not path:
        return f"the file must hold {SCHEMA['description']}, not {type(err.instance).__name__}"
    if len(path) == 2 and path[0] == "experiments" and not isinstance(err.instance, dict):
        return f"experiment {path[1] + 1} must be a mapping, not {type(err.instance).__name__}"
    while path and isinstance(path[-1], int) and len(path) > 2:  # an item of a list: show the list
        path.pop()
    value = data
    for p in path:
        value = value[p]
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return f"{path[-1]}={shown} must be {description(err)}"


def description(err: Any) -> str:
    """The ``description`` of the innermost schema node along the error's schema path that has one."""
    node: Any = SCHEMA
    found = str(SCHEMA["description"])
    for step in err.absolute_schema_path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict) and "description" in node:
            found = str(node["description"])
    return found

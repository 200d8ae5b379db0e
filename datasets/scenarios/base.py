"""The Scenario base class: a data model with a known (or, for labelled data, no known) distribution."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..samples import Samples
from ..tasks import Task
from .params import Param


class Scenario:
    """Base class of all scenarios (frozen dataclasses).

    A subclass declares ``name`` (its CLI name), ``kind`` (``finite``,
    ``gaussian``, ``mixture`` or ``labelled``: what evaluators and theory
    dispatch on), ``has_optimum``, ``summary``, ``PARAMS`` (its CLI
    parameters) and ``EXAMPLE`` (a small valid parameter set), and implements
    :attr:`id`, :meth:`sample` and :meth:`task`.  Registered with
    :func:`~privbench.datasets.scenarios.register_scenario`, it is built by
    name with :func:`~privbench.datasets.scenarios.make_scenario`.
    """

    name: ClassVar[str]
    kind: ClassVar[str]  # "finite", "gaussian", "mixture" or "labelled"
    has_optimum: ClassVar[bool] = True  # False: labelled data, no known model
    summary: ClassVar[str]
    PARAMS: ClassVar[tuple[Param, ...]]
    EXAMPLE: ClassVar[dict[str, Any]] = {}

    @property
    def id(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The constructor parameters as plain JSON-able values."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = json.loads(json.dumps(v))
            out[f.name] = v
        return out

    def sample(self, n: int, rng: np.random.Generator) -> Samples:  # pragma: no cover
        raise NotImplementedError

    def task(self, observation: str, privacy: str = "mi") -> Task:
        """The :class:`~privbench.datasets.tasks.Task` a learner gets (sizes, not the model)."""
        raise InputError(f"scenario={self!r} has no task description")

    @classmethod
    def from_params(cls, params: dict[str, Any] | None = None) -> "Scenario":
        """Build one from CLI parameters (strings are parsed; missing optional ones take their defaults).

        Raises :class:`InputError` for an unknown parameter, a missing required
        one, or an invalid value.
        """
        params = dict(params or {})
        declared = {p.name: p for p in cls.PARAMS}
        for key in params:
            if key not in declared:
                raise InputError(
                    f"parameter {key!r} is unknown for {cls.name} (allowed: {', '.join(declared)})"
                )
        values: dict[str, Any] = {}
        for p in cls.PARAMS:
            if p.name in params:
                raw = params[p.name]
                try:
                    values[p.name] = p.parse(raw) if isinstance(raw, str) else raw
                except InputError as exc:
                    raise InputError(f"{cls.name} parameter {p.name}: {exc}") from None
            elif not p.required and p.default is not None:
                values[p.name] = p.default
            elif p.required:
                raise InputError(f"{cls.name} needs parameter {p.name} ({p.help})")
        return cls.build(values)

    @classmethod
    def build(cls, values: dict[str, Any]) -> "Scenario":
        """The scenario from parsed parameter values (a subclass maps CLI names onto its fields here)."""
        return cls(**values)

    @classmethod
    def example(cls) -> "Scenario":
        """A small valid instance (``EXAMPLE``), for tests and documentation."""
        return cls.from_params(cls.EXAMPLE)

    @staticmethod
    def _check_n(n: int) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InputError(f"n={n!r} must be a non-negative integer")
        return int(n)

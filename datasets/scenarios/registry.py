"""The registry of scenarios by CLI name: :data:`SCENARIOS`, :func:`register_scenario`, :func:`make_scenario`."""

from __future__ import annotations

from typing import Any

from ..errors import InputError, check_name_free
from .base import Scenario

#: CLI name -> scenario class, in registration order (``privbench list scenarios`` shows this order).
SCENARIOS: dict[str, type[Scenario]] = {}


def register_scenario(cls: type[Scenario]) -> type[Scenario]:
    """Class decorator: make ``cls`` buildable by its ``name`` (a name can be registered once)."""
    check_name_free("scenario", cls.name, SCENARIOS.get(cls.name), cls)  # a plug-in never takes a built-in name
    SCENARIOS[cls.name] = cls
    return cls


def make_scenario(name: str, params: dict[str, Any] | None = None) -> Scenario:
    """Build a scenario from its CLI name and parameters (strings or values).

    Raises :class:`InputError` for an unknown scenario or parameter, a missing
    required parameter, or an invalid value.
    """
    if name not in SCENARIOS:
        raise InputError(f"scenario {name!r} is unknown (allowed: {', '.join(SCENARIOS)})")
    return SCENARIOS[name].from_params(params)

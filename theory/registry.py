"""The registry of optimum providers: what the theory layer knows, per scenario.

A *provider* knows the optimal tradeoff of some scenarios for some (privacy,
observation) pairs. Each theory module that knows one registers it here with
:func:`register`, keyed by a scenario ``name`` (``"symmetric-pair"``: a closed
form) or a scenario ``kind`` (``"finite"``: the convex programs, for any finite
scenario). For a scenario the name's provider comes first, then the kind's
(:func:`chain`); a pair is served by the first provider of the chain that lists
it (:func:`serving`), so closed forms take precedence over generic programs.

Provider modules are found by importing every module of ``privbench.theory``
once (:func:`load`): a new provider is one new file that registers itself.
Scenarios declare ``name``, ``kind`` and ``has_optimum`` as class attributes;
nothing here tests their classes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np

from privbench.datasets.errors import check_name_free

from .base import Optimum

Pair = tuple[str, "str | None"]
P = TypeVar("P", bound=type)

BY_NAME: dict[str, Provider] = {}
BY_KIND: dict[str, Provider] = {}
#: Providers of another distortion than the scenario's own, keyed by (scenario kind, distortion).
BY_DISTORTION: dict[tuple[str, str], Provider] = {}


class Provider:
    """Base class of an optimum provider (subclass it and decorate with :func:`register`).

    Attributes
    ----------
    pairs : tuple of (privacy, observation)
        The pairs served; override :meth:`supported` when they depend on the
        scenario's parameters.
    default_privacy : str or None
        The privacy metric used when none is given (None: no opinion, ``mi``
        unless another provider of the chain says otherwise).
    observation_free : bool or None
        True where S = U = W, so the observation model is ignored (None: no opinion).
    has_families : bool
        True where the optimum is over a named mechanism family; then
        :meth:`resolve_family` picks and checks it.
    """

    pairs: ClassVar[tuple[Pair, ...]] = ()
    default_privacy: ClassVar[str | None] = None
    observation_free: ClassVar[bool | None] = None
    has_families: ClassVar[bool] = False

    def supported(self, scenario: Any) -> list[Pair]:
        """(privacy, observation) pairs this provider serves for ``scenario``."""
        return list(self.pairs)

    def resolve_family(self, scenario: Any, observation: str | None, family: str | None,
                       privacy: str | None = None) -> str | None:
        """The mechanism family to use (only called where ``has_families``)."""
        return family  # pragma: no cover - overridden where has_families

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        """Optimal leakage at each of the validated budgets, shape (k,)."""
        raise NotImplementedError  # pragma: no cover

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        """The optimum at one validated budget, with method and mechanism."""
        raise NotImplementedError  # pragma: no cover


def register(*, name: str | None = None, kind: str | None = None,
             distortion: str | None = None) -> Callable[[P], P]:
    """Class decorator: register one instance of a :class:`Provider` subclass.

    Parameters
    ----------
    name : str, optional
        A scenario name (``Scenario.name``); precedence over the kind's provider.
    kind : str, optional
        A scenario kind (``Scenario.kind``): the fallback for every scenario of it.
    distortion : str, optional
        With ``kind``: the provider serves that kind under this distortion instead of the
        scenario's own (e.g. ``logloss``); it is the whole chain when that distortion is asked for.
    """
    if (name is None) == (kind is None) or (distortion is not None and kind is None):
        raise ValueError("register takes exactly one of name= or kind= (distortion= goes with kind=)")
    table: dict[Any, Provider]
    if distortion is not None:
        table, key = BY_DISTORTION, (kind, distortion)
    else:
        table, key = (BY_NAME, name) if name is not None else (BY_KIND, kind)

    def wrap(cls: P) -> P:
        check_name_free("provider", str(key), table.get(key), cls)  # type: ignore[arg-type]
        table[key] = cls()  # type: ignore[index]
        return cls

    return wrap


@cache
def load() -> None:
    """Import every module of ``privbench.theory`` once, so that all providers register."""
    package = importlib.import_module(__package__)  # type: ignore[arg-type]
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{__package__}."):
        importlib.import_module(info.name)


def chain(scenario: Any, distortion: str | None = None) -> list[Provider]:
    """The providers of ``scenario``: its name's first, then its kind's (empty without an optimum);
    for a ``distortion`` other than None, the provider registered for (its kind, that distortion)."""
    load()
    if not scenario.has_optimum:
        return []
    if distortion is not None:
        other = BY_DISTORTION.get((scenario.kind, distortion))
        return [other] if other is not None else []
    found = (BY_NAME.get(scenario.name), BY_KIND.get(scenario.kind))
    return [p for p in found if p is not None]


def serving(scenario: Any, privacy: str, observation: str | None,
            distortion: str | None = None) -> Provider | None:
    """The first provider of the chain that serves (privacy, observation), or None."""
    for provider in chain(scenario, distortion):
        if (privacy, observation) in provider.supported(scenario):
            return provider
    return None


def declared(scenario: Any, attribute: str, default: Any, distortion: str | None = None) -> Any:
    """The first value of a provider ``attribute`` along the chain that is not None."""
    for provider in chain(scenario, distortion):
        value = getattr(provider, attribute)
        if value is not None:
            return value
    return default

"""The registry of optimum providers: it covers every scenario with a known optimum,
closed forms take precedence over their kind's programs, and a new closed form
is one registered class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from privbench.datasets import FiniteScenario, InputError
from privbench.datasets.scenarios import SCENARIOS, make_scenario
from privbench.theory import curve, default_privacy, optimum, registry, resolve, supported
from privbench.theory.base import Optimum

# one example per scenario with a known optimum: its own declared EXAMPLE (Scenario.example())
EXAMPLES = {name: cls.EXAMPLE for name, cls in SCENARIOS.items() if cls.has_optimum}
BUDGET = {"finite": 0.1, "gaussian": 0.2, "mixture": 1.0}
WITH_OPTIMUM = [name for name, cls in SCENARIOS.items() if cls.has_optimum]
WITHOUT_OPTIMUM = [name for name, cls in SCENARIOS.items() if not cls.has_optimum]


def test_every_scenario_with_an_optimum_has_an_example():
    assert sorted(WITH_OPTIMUM) == sorted(EXAMPLES)
    for name in WITH_OPTIMUM:
        assert make_scenario(name, EXAMPLES[name]) == SCENARIOS[name].example()


def _cases():
    for name in WITH_OPTIMUM:
        sc = make_scenario(name, EXAMPLES.get(name))
        for privacy, observation in supported(sc):
            yield pytest.param(sc, privacy, observation, id=f"{name}-{privacy}-{observation}")


@pytest.mark.parametrize("name", WITH_OPTIMUM)
def test_registry_covers_every_scenario_with_an_optimum(name):
    sc = make_scenario(name, EXAMPLES[name])
    assert registry.chain(sc), f"no provider registered for {name} (name or kind {sc.kind!r})"
    assert supported(sc)
    assert default_privacy(sc) in {p for p, _ in supported(sc)}


@pytest.mark.parametrize("scenario,privacy,observation", list(_cases()))
def test_every_declared_pair_gives_a_finite_value(scenario, privacy, observation):
    b = BUDGET[scenario.kind]
    assert registry.serving(scenario, privacy, observation) is not None
    opt = optimum(scenario, b, privacy, observation)
    assert isinstance(opt, Optimum) and np.isfinite(opt.value) and opt.method
    values = curve(scenario, [b], privacy, observation)
    assert values.shape == (1,) and values[0] == pytest.approx(opt.value, abs=1e-6)


@pytest.mark.parametrize("name", WITHOUT_OPTIMUM)
def test_scenarios_without_an_optimum_have_no_provider(name):
    assert name not in registry.BY_NAME


def test_closed_forms_take_precedence_over_the_kind():
    sc = make_scenario("symmetric-pair", EXAMPLES["symmetric-pair"])
    assert type(registry.serving(sc, "mi", "full")).__name__ == "SymmetricPairClosedForm"
    assert type(registry.serving(sc, "map", "full")).__name__ == "FiniteProgram"
    assert optimum(sc, 0.1, "mi", "full").method.startswith("closed form")
    assert optimum(sc, 0.1, "map", "full").method.startswith("convex program")


def test_register_refuses_ambiguous_or_repeated_keys():
    with pytest.raises(ValueError, match="exactly one"):
        registry.register(name="a", kind="b")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(kind="finite")(registry.Provider)


@dataclass(frozen=True)
class Toy(FiniteScenario):
    """A finite scenario unknown to privbench: uniform independent bits."""

    name: ClassVar[str] = "toy-independent-bits"

    @property
    def id(self) -> str:
        return self.name

    def joint(self) -> np.ndarray:
        return np.full((2, 2), 0.25)


def test_a_new_closed_form_is_one_registered_class():
    class ToyClosedForm(registry.Provider):
        pairs = (("mi", "useful"),)

        def curve(self, scenario: Any, budgets: np.ndarray, *rest: Any) -> np.ndarray:
            return np.zeros(budgets.shape)

        def optimum(self, scenario: Any, budget: float, *rest: Any) -> Optimum:
            return Optimum(0.0, "closed form (independent S and U)")

    registry.register(name=Toy.name)(ToyClosedForm)
    try:
        sc = Toy()
        assert optimum(sc, 0.1, "mi", "useful").method == "closed form (independent S and U)"
        assert optimum(sc, 0.1, "map", "full").method.startswith("convex program")  # the kind's fallback
        assert supported(sc) == supported(make_scenario("finite", EXAMPLES["finite"]))
        assert resolve(sc, None, "full", None) == ("mi", "full", None)
    finally:
        del registry.BY_NAME[Toy.name]


def test_families_apply_to_providers_that_declare_them():
    sc = make_scenario("binary", EXAMPLES["binary"])
    with pytest.raises(InputError, match="does not apply to binary"):
        optimum(sc, 0.1, "mi", "useful", family="additive")

"""Every registered scenario: its example builds, round-trips by name, samples deterministically, has a task."""

import numpy as np
import pytest

from privbench.datasets import task_for
from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import SCENARIOS, Scenario, make_scenario, register_scenario
from privbench.datasets.vocabulary import TASK_KINDS


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_example_round_trips_and_samples_deterministically(name):
    cls = SCENARIOS[name]
    sc = cls.example()
    assert isinstance(sc, Scenario) and sc.name == name
    again = make_scenario(name, sc.params())
    assert again.id == sc.id and again == sc
    if name in ("mnist-subset", "digits"):
        return  # image sets draw rows through draw(), not sample(); tests/datasets/test_labelled.py covers them
    a, b = sc.sample(50, np.random.default_rng(3)), sc.sample(50, np.random.default_rng(3))
    assert np.array_equal(a.s, b.s) and np.array_equal(a.u, b.u) and len(a.s) == 50


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_describes_its_task(name):
    sc = SCENARIOS[name].example()
    task = task_for(sc, "useful", "map")
    assert task.kind in TASK_KINDS and task.privacy == "map"


def test_gaussian_source_always_observes_useful():
    assert task_for(SCENARIOS["gaussian-source"].example(), "full").observation == "useful"


def test_a_name_cannot_be_registered_twice():
    class Clash(Scenario):
        name = "symmetric-pair"

    with pytest.raises(InputError, match="already registered .*SymmetricPair.*Clash"):
        register_scenario(Clash)
    assert SCENARIOS["symmetric-pair"].__name__ == "SymmetricPair"


def test_unknown_names_and_parameters_are_input_errors():
    with pytest.raises(InputError, match="unknown"):
        make_scenario("no-such-scenario")
    with pytest.raises(InputError, match="parameter 'x' is unknown for binary"):
        make_scenario("binary", {"x": 1})

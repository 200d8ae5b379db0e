"""A worker loads the bundled data of its run's scenarios before it forks its evaluator (issue 14: cost)."""

from __future__ import annotations

import pytest

from privbench.bench.backends.common import warm_data, warm_scenarios
from privbench.bench.suites import make_case
from privbench.datasets.labelled import image_partition


def case(scenario, params, seed=0):
    return make_case("t", "warm", scenario, params, "useful", "map", None, "identity", {}, [0.1],
                     rep=seed, n_train=50, n_eval=50)


def test_warm_scenarios_lists_each_scenario_once_in_order():
    cases = [case("binary", {"p": 0.5, "q": 0.25}), case("mnist-subset", {"labeling": "digit"}),
             case("binary", {"p": 0.5, "q": 0.25}, seed=1), case("binary", {"p": 0.75, "q": 0.25})]
    assert warm_scenarios(cases) == (("binary", cases[0].params), ("mnist-subset", cases[1].params),
                                     ("binary", cases[3].params))


def test_warm_data_loads_fixed_partitions_only_and_skips_what_does_not_build():
    image_partition.cache_clear()
    warm_data((("binary", {"p": 0.5, "q": 0.25}), ("no-such-scenario", {}), ("mnist-subset", {"bad": 1})))
    assert image_partition.cache_info().currsize == 0  # nothing with a fixed partition built
    warm_data((("mnist-subset", {"labeling": "ge5-parity"}),))
    assert image_partition.cache_info().currsize == 1
    hits = image_partition.cache_info().hits
    train, _, _, _ = image_partition("mnist-subset", "ge5-parity")  # what a case then finds: the cached partition
    assert image_partition.cache_info().hits == hits + 1 and len(train) > 0


@pytest.mark.parametrize("bad", [("mnist-subset", {"labeling": "nope"})])
def test_warm_data_never_raises(bad):
    warm_data((bad,))

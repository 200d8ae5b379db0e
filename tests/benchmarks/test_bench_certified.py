"""Speed of the certified sandwich of the binary Gaussian mixture (pytest-benchmark).

Timings are reported, never asserted; skipped without --benchmark-enable (seconds per
point; its code paths are tested in tests/theory/test_mixture_certified.py).  Run with:
    python -m pytest tests/benchmarks/test_bench_certified.py --benchmark-enable
Target: one budget point within seconds at width <= 1e-3 (map, observation full); a live point
(off the committed table, under the cap ``LIVE``) within about 20 s, at the width it reaches.
"""

from __future__ import annotations

import pytest

from privbench.datasets import BinaryGMM
from privbench.theory.mixture.certified import LEVELS, LIVE, certified_sandwich

GAP_DATASET_4 = BinaryGMM(0.75, 3.0, 2.0, 1.0)  # GAP Table 5, the mismatch scenario


@pytest.fixture(autouse=True)
def _only_when_enabled(request):
    if not request.config.getoption("benchmark_enable", default=False):
        pytest.skip("certified sandwich benchmark: run with --benchmark-enable")


@pytest.mark.parametrize("observation", ["full", "useful"])
def test_certified_map_one_budget(benchmark, observation):
    got = benchmark.pedantic(certified_sandwich, args=(GAP_DATASET_4, 3.0, "map", observation),
                             kwargs={"levels": LEVELS[:1], "rounds": 0}, rounds=1, iterations=1)
    assert got["lower"] <= got["upper"]
    benchmark.extra_info.update(width=got["width"], lower=got["lower"], upper=got["upper"])


@pytest.mark.parametrize("privacy,observation", [("mi", "useful"), ("map", "full")])
def test_certified_live_point(benchmark, privacy, observation):
    # what optimum() does for a budget the committed table does not hold (binary-gmm's EXAMPLE, D = 1)
    sc = BinaryGMM.example()
    got = benchmark.pedantic(certified_sandwich, args=(sc, 1.0, privacy, observation), kwargs=dict(LIVE),
                             rounds=1, iterations=1)
    assert got["lower"] <= got["upper"]
    benchmark.extra_info.update(width=got["width"], lower=got["lower"], upper=got["upper"], stopped=got["stopped"],
                                level=str(got["level"]))

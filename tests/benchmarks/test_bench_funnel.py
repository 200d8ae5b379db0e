"""Time per curve of the certified privacy funnel (pytest-benchmark), by observation alphabet |W|.

Timings are reported, never asserted; skipped without --benchmark-enable.  Run with:
    python -m pytest tests/benchmarks/test_bench_funnel.py --benchmark-enable
A curve is 5 budgets D = (0, 0.2, 0.4, 0.6, 0.8) H(U), mi, target width 1e-4; for |W| >= 6 each
budget gets 12 s (60 s per curve) and ``extra_info`` records the widths reached.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets.scenarios import make_scenario
from privbench.theory.funnel import funnel_sandwich, split_model

CASES = {  # |W|: (model, observation)
    2: (make_scenario("binary", {"p": "0.3", "q": "0.2"}).joint(), "useful"),
    3: (make_scenario("symmetric-pair", {"m": "3", "p": "0.2"}).joint(), "useful"),
    4: (make_scenario("symmetric-pair", {"m": "4", "p": "0.2"}).joint(), "useful"),
    6: (np.array([[0.30, 0.10, 0.05], [0.05, 0.20, 0.30]]), "full"),
    9: (make_scenario("symmetric-pair", {"m": "3", "p": "0.2"}).joint(), "full"),
    16: (make_scenario("symmetric-pair", {"m": "4", "p": "0.2"}).joint(), "full"),
}


@pytest.fixture(autouse=True)
def _only_when_enabled(request):
    if not request.config.getoption("benchmark_enable", default=False):
        pytest.skip("funnel benchmark: run with --benchmark-enable")


def _curve(joint: np.ndarray, observation: str, time_limit: float) -> list[dict]:
    split = split_model(joint, observation)
    return [funnel_sandwich(split, joint, observation, f * split.h_u, "mi", time_limit=time_limit)
            for f in (0.0, 0.2, 0.4, 0.6, 0.8)]


@pytest.mark.parametrize("n_w", sorted(CASES))
def test_funnel_curve(benchmark, n_w):
    joint, observation = CASES[n_w]
    got = benchmark.pedantic(_curve, args=(joint, observation, 60.0 if n_w <= 4 else 12.0), rounds=1,
                             iterations=1)
    assert all(g["lower"] <= g["upper"] for g in got)
    benchmark.extra_info.update(widths=[g["width"] for g in got], seconds=[g["seconds"] for g in got],
                                cells=[g["cells"] for g in got])

"""Speed of the Gaussian closed forms (pytest-benchmark; timings reported, never asserted).

Run with: python -m pytest tests/benchmarks/test_bench_gaussian.py --benchmark-enable
Target (issue #2): closed-form curves >= 1e6 budget points per second.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import GaussianScalar, GaussianSource, GaussianVector
from privbench.theory.gaussian import gaussian_curve

N_POINTS = 1_000_000
RHO5 = [0.47, 0.24, 0.85, 0.07, 0.66]  # PPAN Fig 6


@pytest.mark.parametrize(
    "scenario, observation",
    [
        (GaussianScalar(0.85), "useful"),
        (GaussianScalar(0.85), "full"),
        (GaussianVector.from_rho(RHO5), "useful"),
        (GaussianSource(tuple(RHO5)), None),
    ],
    ids=["prop1", "prop3", "prop2-5d", "rate-distortion-5d"],
)
def test_gaussian_closed_form_curve_1e6_points(benchmark, scenario, observation):
    budgets = np.linspace(0.0, 2.0, N_POINTS)
    out = benchmark(gaussian_curve, scenario, budgets, observation)
    assert out.shape == (N_POINTS,) and np.all(np.diff(out[1:]) <= 1e-12)
    if benchmark.stats is not None:  # None when run with --benchmark-disable (the default)
        benchmark.extra_info["points_per_second"] = N_POINTS / benchmark.stats.stats.mean

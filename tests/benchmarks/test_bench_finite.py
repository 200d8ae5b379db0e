"""Solver speed (pytest-benchmark). Timings are reported, never asserted.

Run with: python -m pytest tests/benchmarks --benchmark-enable
Targets (issue #2): closed-form curves >= 1e6 budget points/s; the finite MI
program for symmetric-pair m=10 with full observation <= 0.3 s per budget.
"""

from __future__ import annotations

import numpy as np

from privbench.datasets import Binary, SymmetricPair
from privbench.theory.finite import binary_pdi_map, solve_finite, symmetric_pair_mi

N_POINTS = 1_000_000


def test_symmetric_pair_closed_form_curve_1e6_points(benchmark):
    budgets = np.linspace(0.0, 1.0, N_POINTS)
    out = benchmark(symmetric_pair_mi, budgets, 10, 0.4, "full")
    assert out.shape == (N_POINTS,)


def test_binary_pdi_closed_form_curve_1e6_points(benchmark):
    budgets = np.linspace(0.0, 1.0, N_POINTS)
    out = benchmark(binary_pdi_map, budgets, 0.75, 0.25)
    assert out.shape == (N_POINTS,)


def _solve_many(privacy, observation, scenario, budgets):
    return [solve_finite(scenario.joint(), scenario.distortion_matrix(), b, privacy, observation).value
            for b in budgets]


def test_mi_program_symmetric_pair_m10_full_per_budget(benchmark):
    """One solve per round at a fixed budget (program compiled once, then cached)."""
    sc = SymmetricPair(10, 0.4)
    solve_finite(sc.joint(), sc.distortion_matrix(), 0.2, "mi", "full")  # compile
    out = benchmark(_solve_many, "mi", "full", sc, [0.2])
    assert out[0] > 0


def test_mi_program_symmetric_pair_m10_full_20_budget_curve(benchmark):
    sc = SymmetricPair(10, 0.4)
    budgets = np.linspace(0, 0.6, 20)
    out = benchmark.pedantic(_solve_many, args=("mi", "full", sc, budgets), rounds=1, iterations=1)
    assert len(out) == 20


def test_map_lp_binary_full_per_budget(benchmark):
    sc = Binary(0.75, 0.25)
    out = benchmark(_solve_many, "map", "full", sc, [0.1])
    assert 0.5 <= out[0] <= 1


def test_chi2_program_symmetric_pair_m10_full_per_budget(benchmark):
    sc = SymmetricPair(10, 0.4)
    out = benchmark(_solve_many, "chi2", "full", sc, [0.2])
    assert out[0] > 0

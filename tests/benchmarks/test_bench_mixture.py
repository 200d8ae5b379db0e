"""Speed of the binary Gaussian mixture family optima (pytest-benchmark).

Timings are reported, never asserted.  Run with:
    python -m pytest tests/benchmarks/test_bench_mixture.py --benchmark-enable
Targets: ``general`` <= 0.5 s per budget at 1e-4 refinement (2 CPU cores); the
vectorised closed-form families over 1e5 budgets in well under a second.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import BinaryGMM
from privbench.theory.mixture import mixture_curve, mixture_optimum

N_BUDGETS = 100_000
GAP_DATASET_4 = BinaryGMM(0.75, 3.0, 2.0, 1.0)  # GAP Table 5: unequal variances
EQUAL_VARIANCES = BinaryGMM(0.75, 3.0, 1.0, 1.0)  # GAP Table 3


def test_general_family_one_budget(benchmark):
    opt = benchmark(mixture_optimum, GAP_DATASET_4, 3.0, "general")
    assert opt.certificate["final_step"] <= 1e-4
    assert abs(opt.value - 0.8481) <= 5e-4  # GAP Table 5, D = 3


@pytest.mark.parametrize(
    "family, scenario",
    [("additive", GAP_DATASET_4), ("shift", GAP_DATASET_4), ("shift-noise", EQUAL_VARIANCES)],
    ids=["additive", "shift", "shift-noise-closed-form"],
)
def test_closed_form_curve_1e5_budgets(benchmark, family, scenario):
    budgets = np.linspace(0.0, 10.0, N_BUDGETS)
    out = benchmark(mixture_curve, scenario, budgets, family)
    assert out.shape == (N_BUDGETS,) and np.all(np.diff(out) <= 1e-12)


def test_shift_noise_unequal_variances_curve_1e4_budgets(benchmark):
    """Not closed form: vectorised grid + golden-section search over the total shift."""
    budgets = np.linspace(0.0, 10.0, N_BUDGETS // 10)
    out = benchmark(mixture_curve, GAP_DATASET_4, budgets, "shift-noise")
    assert out.shape == (N_BUDGETS // 10,) and np.all(np.diff(out) <= 1e-12)

"""Speed of bundled repetitions: five repetitions of a paper-suite case trained with one
``Learner.fit_many`` against five separate ``fit`` calls (pytest-benchmark).

Timings are reported (CPU seconds in ``extra_info``), never asserted; skipped without
--benchmark-enable.  Equality of the mechanisms is tested in tests/learners/test_fit_many.py.
Run with::

    python -m pytest tests/benchmarks/test_bench_fit_many.py --benchmark-enable -s

Measured on the shared 2-core machine (load average 20+, CPU seconds, so the load matters
little): ppan-linear on PPAN's 5-d Gaussian vectors (n = 1,000, 3 budgets, 1,500 steps):
five fits 16.5 s, fit_many 5.6 s (0.34x).
ppan-seed on PPAN Fig. 6 (8 budgets, 600 steps; measured before fit_many existed as one fit of
the 8 budgets, 4.0 s, against one fit of the 8 budgets repeated five times on the same data, 9.9 s).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from privbench.datasets import GaussianVector, task_for
from privbench.learners import make_learner

RHO5 = [0.47, 0.24, 0.85, 0.07, 0.66]
REPS = 5


@pytest.fixture(autouse=True)
def _only_when_enabled(request):
    if not request.config.getoption("benchmark_enable", default=False):
        pytest.skip("fit_many benchmark: run with --benchmark-enable")


@pytest.mark.parametrize("learner,steps,budgets", [("ppan-linear", 1500, [0.5, 1.5, 3.0]),
                                                   ("ppan-seed", 600, [0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0])])
def test_fit_many_against_separate_fits(benchmark, learner, steps, budgets):
    sc = GaussianVector.from_rho(RHO5)
    task = task_for(sc, "useful", "mi", None)
    sets = [sc.sample(1000, np.random.default_rng(r)) for r in range(REPS)]
    lr = make_learner(learner, steps=steps)
    c0 = time.process_time()
    for r in range(REPS):
        lr.fit(sets[r], task, budgets, seed=r, device="cpu")
    separate = time.process_time() - c0
    c0 = time.process_time()
    many = benchmark.pedantic(lr.fit_many, args=(sets, task, budgets, list(range(REPS))), kwargs={"device": "cpu"},
                              rounds=1, iterations=1)
    bundled = time.process_time() - c0
    assert len(many) == REPS and all(len(m) == len(budgets) for m in many)
    benchmark.extra_info.update(separate_cpu_s=separate, fit_many_cpu_s=bundled, ratio=bundled / separate)
    print(f"\n{learner}: {REPS} fits {separate:.1f} cpu-s, fit_many {bundled:.1f} cpu-s ({bundled / separate:.2f}x)")


def test_sizes_in_one_network_against_one_network_per_size(benchmark):
    """A sample-complexity study's 6 sizes x 5 repetitions (ppan-linear, 3 budgets, 600 steps): one
    ``fit_many`` per size against one for all 30 sets (measured: 14.5 CPU-s against 8.1, 0.56x)."""
    sizes = [300, 1000, 3000, 10000, 30000, 100000]
    sc = GaussianVector.from_rho(RHO5)
    task = task_for(sc, "useful", "mi", None)
    sets = [sc.sample(n, np.random.default_rng(i)) for i, n in enumerate(sizes * REPS)]
    lr = make_learner("ppan-linear", steps=600)
    budgets = [0.5, 1.5, 3.0]
    c0 = time.process_time()
    for j in range(len(sizes)):
        lr.fit_many(sets[j::len(sizes)], task, budgets, list(range(j, len(sets), len(sizes))), device="cpu")
    per_size = time.process_time() - c0
    c0 = time.process_time()
    many = benchmark.pedantic(lr.fit_many, args=(sets, task, budgets, list(range(len(sets)))),
                              kwargs={"device": "cpu"}, rounds=1, iterations=1)
    together = time.process_time() - c0
    assert len(many) == len(sets)
    benchmark.extra_info.update(per_size_cpu_s=per_size, together_cpu_s=together, ratio=together / per_size)
    print(f"\n6 sizes x {REPS} reps: per size {per_size:.1f} cpu-s, together {together:.1f} cpu-s "
          f"({together / per_size:.2f}x)")

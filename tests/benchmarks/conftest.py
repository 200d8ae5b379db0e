"""Learner benchmarks train many models (minutes), and the finite programs at scale
(test_bench_finite_scale.py) solve programs with up to 1e6 unknowns beside plain
cvxpy references (minutes): they run only with --benchmark-enable.

The solver benchmarks are cheap and also run (once each, untimed) in the normal
test suite, which keeps their code paths tested; the learner benchmarks' code
paths are covered by tests/learners/.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    if config.getoption("benchmark_enable", default=False):
        return
    skip = pytest.mark.skip(reason="long benchmark: run with --benchmark-enable")
    for item in items:
        if item.path.name.startswith(("test_bench_learners_", "test_bench_finite_scale")):
            item.add_marker(skip)

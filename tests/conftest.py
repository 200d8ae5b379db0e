"""Test-wide settings.

Hypothesis: under CI (the environment variable CI is set, as `.ci/run` on a CI
runner does) the property tests are derandomized, so a CI run is reproducible:
the same commit draws the same examples.  Locally they stay random, which is how
the property tests keep finding new cases (each such find is pinned with
``@example``).

Workers: ``setup.cfg`` runs the suite on pytest-xdist workers (``-n auto --dist loadfile``: xdist's
own count, one per CPU, each test file on one worker).  A run with ``--benchmark-enable``
gets no workers (:func:`pytest_xdist_auto_num_workers`), since timings taken while other workers
share the cores would not be worth recording and pytest-benchmark disables itself under xdist.
"""

import os

import pytest

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: no workers (run in this process) for benchmarks; otherwise xdist's own count (None)."""
    if config.getoption("benchmark_enable", default=False):
        return 0
    return None

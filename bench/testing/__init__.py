"""privbench.testing: regression-test your own learner against the exact optima.

In your tests::

    from privbench.testing import assert_near_optimal
    from privbench.datasets import SymmetricPair

    def test_my_learner():
        assert_near_optimal(MyLearner(), SymmetricPair(6, 0.3), [0.1, 0.3], tol=0.02,
                            observation="full", privacy="mi")

The learner is trained on samples only (a :class:`~privbench.datasets.tasks.Task`,
never the scenario); its releases are evaluated by privbench's independent
evaluators against the true model, and its budget-respecting gap (leakage
minus the optimum at max(distortion achieved, budget): a learner that
under-uses its budget is not excused) must be <= ``tol`` at every budget, with
no verification failure of its description, no overshoot of
the budget beyond ``overshoot_tol`` and no point below the exact bound (which
would mean an evaluator bug).  Installed as a pytest plugin (entry point
``pytest11``: :mod:`privbench.testing.fixtures`), it also provides the fixture
``near_optimal`` (the same function).

Importing this module does not import pytest: ``assert_near_optimal`` works in a
script, a notebook or another test runner.  Only the fixture needs pytest.
"""

from __future__ import annotations

import sys
from typing import Any

from .assertion import NearOptimalReport, assert_near_optimal

__all__ = ["assert_near_optimal", "near_optimal", "NearOptimalReport"]


def __getattr__(name: str) -> Any:
    """``near_optimal`` (the pytest fixture) on demand: only it imports pytest."""
    if name == "near_optimal":
        from .fixtures import near_optimal

        return near_optimal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if sys.modules.get("pytest") is not None:  # loaded by pytest (an install whose pytest11 names this module)
    from .fixtures import near_optimal  # noqa: E402,F401

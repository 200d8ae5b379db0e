"""The pytest side of :mod:`privbench.testing`: the ``near_optimal`` fixture (entry point ``pytest11``).

The one module of privbench.testing that imports pytest.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from .assertion import assert_near_optimal


@pytest.fixture
def near_optimal() -> Callable[..., Any]:
    """Fixture form of :func:`privbench.testing.assert_near_optimal`."""
    return assert_near_optimal

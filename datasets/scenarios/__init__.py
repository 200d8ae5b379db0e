"""Data models with known distributions (scenarios), one kind per module.

Each scenario is a frozen dataclass, validated on construction, with a stable
string :attr:`Scenario.id`, a :meth:`Scenario.sample` method that returns
:class:`~privbench.datasets.samples.Samples`, the :meth:`Scenario.task` a
learner gets, and exact model facts: ``joint()`` / ``distortion_matrix()`` for
finite alphabets, ``cov()`` for Gaussians.  :data:`SCENARIOS` maps the CLI
names to the classes and :func:`make_scenario` builds one from ``NAME=VALUE``
strings.  The labelled scenarios (no known optimum) live in
:mod:`privbench.datasets.labelled` and register themselves the same way
(``import privbench.datasets`` loads them).

Conventions: ``joint()[s, u] = P(S=s, U=u)``; ``distortion_matrix()[u, z]`` is
d(u, z); Gaussian covariances are ordered (S, U).

Adding a scenario: one module here (or a class in an existing one) that
defines a frozen dataclass with ``name``, ``kind``, ``summary``, ``PARAMS``,
``EXAMPLE``, ``id``, ``sample`` and ``task`` (a finite model needs only
``joint()``: :class:`FiniteScenario` does the rest), decorated with
:func:`register_scenario`, and its import below.
"""

from .base import Scenario
from .finite import Binary, Finite, FiniteScenario, SymmetricPair
from .gaussian import GaussianScalar, GaussianScenario, GaussianSource, GaussianVector
from .mixture import BinaryGMM
from .params import REQUIRED, Param
from .registry import SCENARIOS, make_scenario, register_scenario

__all__ = ["Binary", "BinaryGMM", "Finite", "FiniteScenario", "GaussianScalar", "GaussianScenario",
           "GaussianSource", "GaussianVector", "Param", "REQUIRED", "SCENARIOS", "Scenario", "SymmetricPair",
           "make_scenario", "register_scenario"]

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

Adding a scenario: one module here that defines a frozen dataclass with
``name``, ``kind``, ``summary``, ``PARAMS``, ``EXAMPLE``, ``id``, ``sample``
and ``task`` (a finite model needs only ``joint()``: :class:`FiniteScenario`
does the rest), decorated with :func:`register_scenario`.  Every module of this
package is imported here, so the registry finds it (``z_channel.py`` is the
worked example).
"""

import importlib
import pkgutil

from .base import Scenario
from .finite import Binary, Finite, FiniteScenario, SymmetricPair
from .gaussian import GaussianScalar, GaussianScenario, GaussianSource, GaussianVector
from .mixture import BinaryGMM
from .params import REQUIRED, Param
from .registry import SCENARIOS, make_scenario, register_scenario

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):  # scenarios added as new files register
    importlib.import_module(f"{__name__}.{_module}")

__all__ = ["Binary", "BinaryGMM", "Finite", "FiniteScenario", "GaussianScalar", "GaussianScenario",
           "GaussianSource", "GaussianVector", "Param", "REQUIRED", "SCENARIOS", "Scenario", "SymmetricPair",
           "make_scenario", "register_scenario"]

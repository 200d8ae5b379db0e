"""privbench.datasets: scenarios with known models, samples, and data loaders.

Pure numpy: imports neither torch nor cvxpy.
"""

from .errors import InputError
from .samples import OBSERVATIONS, Samples, check_observation
from .tasks import TASK_KINDS, Task, task_for
from .scenarios import (
    SCENARIOS,
    Binary,
    BinaryGMM,
    Finite,
    FiniteScenario,
    GaussianScalar,
    GaussianScenario,
    GaussianSource,
    GaussianVector,
    Scenario,
    SymmetricPair,
    make_scenario,
)
from . import labelled  # noqa: F401 - registers the labelled scenarios (no known optimum) in SCENARIOS
from . import tabular  # noqa: F401 - registers the UCI tables (no known optimum) in SCENARIOS

__all__ = [
    "InputError", "OBSERVATIONS", "Samples", "check_observation", "SCENARIOS", "Binary",
    "BinaryGMM", "Finite", "FiniteScenario", "GaussianScalar", "GaussianScenario",
    "GaussianSource", "GaussianVector", "Scenario", "SymmetricPair", "make_scenario",
    "TASK_KINDS", "Task", "task_for",
]

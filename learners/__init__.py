"""privbench.learners: trainable privacy mechanisms (torch; never imports theory/).

A learner sees training samples and a :class:`~privbench.datasets.tasks.Task`
only.  See :mod:`privbench.learners.base` for the API and
:mod:`privbench.learners.registry` for registration and plug-ins.
"""

from .base import Learner, Mechanism, TrainingError, mechanism_type
from .registry import available, load_mechanism, make_learner, plugin_errors, register, resolve_learner

__all__ = [
    "Learner", "Mechanism", "TrainingError", "load_mechanism", "mechanism_type",
    "available", "make_learner", "plugin_errors", "register", "resolve_learner",
]

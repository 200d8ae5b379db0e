"""privbench.learners: trainable privacy mechanisms (torch; never imports theory/).

A learner sees training samples and a :class:`~privbench.datasets.tasks.Task`
only.  See :mod:`privbench.learners.base` for the API (``Learner.fit``,
``Learner.resolved``, ``Mechanism.release``/``save``) and
:mod:`privbench.learners.registry` for registration, plug-ins and
``load_mechanism``.

Layout: one learner per module (``ppan_finite``, ``gap_binary``,
``ppan_continuous``, ``gap_mixture``, ``ppan_image``, ``chi2_sanitizer``,
``latent_filter``; the baselines in ``baselines/``), the mechanism types they
release in ``mechanisms/``, ``ppan_net``, ``noise_sanitizer`` and
``latent_filter_mechanism``, and the shared torch building blocks (devices and
seeded generators, sweep-batched layers, networks, the adversarial games) in
``nn/``.  Nothing here imports ``privbench.theory`` or ``privbench.bench``.
"""

from .base import Learner, Mechanism, TrainingError, mechanism_type
from .registry import (available, load_builtin_mechanism, load_mechanism, make_learner, plugin_errors, register,
                       resolve_learner, saved_type)
from .serves import Serves

__all__ = [
    "Learner", "Mechanism", "TrainingError", "load_mechanism", "mechanism_type",
    "available", "load_builtin_mechanism", "saved_type", "make_learner", "plugin_errors", "register", "resolve_learner", "Serves",
]

"""privbench.theory: exact optimal privacy-utility tradeoffs and exact measures.

numpy / scipy / cvxpy only (never torch). Entry points: :func:`optimum` (one
budget, with method and mechanism) and :func:`curve` (vectorised values), which
dispatch through :mod:`privbench.theory.registry` to the provider modules of
``finite/``, ``gaussian/`` and ``mixture/``. ``measures.py`` holds the exact
measures of a finite channel; ``guarantees/`` turns f-divergence levels into
(eps, delta) guarantees.
"""

from .base import PRIVACIES, UNITS, Optimum
from .measures import (
    channel_measures,
    chi2_information,
    map_accuracy,
    mutual_information,
    release_joint,
    scenario_channel_measures,
)
from .optimum import curve, default_privacy, optimum, resolve, supported, units

PRIVACY_METRICS = PRIVACIES  # the vocabulary's PRIVACIES under its older theory name

__all__ = [
    "PRIVACIES", "PRIVACY_METRICS", "UNITS", "Optimum", "channel_measures", "chi2_information",
    "map_accuracy", "mutual_information", "release_joint", "scenario_channel_measures",
    "curve", "default_privacy", "optimum", "resolve", "supported", "units",
]

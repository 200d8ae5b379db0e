"""privbench's vocabulary: the one list of each kind of name, shared by every layer.

Imports nothing from privbench (the rule of bmi's ``interface.py``): any module
may import it without creating a cycle.  A name that appears in a task, a
suite, a stored row or on the command line is checked against these lists.
"""

from __future__ import annotations

#: What a mechanism observes: ``useful`` W = U; ``full`` W = (S, U).
OBSERVATIONS = ("useful", "full")
#: Privacy metrics: mutual information I(S;Z) (nats), MAP adversary accuracy, chi-square information.
PRIVACIES = ("mi", "map", "chi2")
#: Privacy metrics a scenario without a known model (labelled data) is measured by.
LABELLED_PRIVACIES = ("map", "mi")
#: Units of each privacy metric.
UNITS = {"mi": "nats", "map": "probability", "chi2": "dimensionless"}
#: Distortion functions: Hamming, a distortion matrix d[u][z], mean squared error, per-pixel cross-entropy,
#: log-loss H(U | Z) (nats; information as utility: the privacy funnel, budget D = H(U) - R for I(U; Z) >= R).
DISTORTIONS = ("hamming", "matrix", "mse", "xent", "logloss")
#: What kind of data a task is about (see :class:`privbench.datasets.Task`).
TASK_KINDS = ("finite", "gaussian", "mixture", "image")
#: GAP's noise-adding mechanism families for the binary Gaussian mixture (family bounds).
MIXTURE_FAMILIES = ("additive", "shift", "shift-noise", "general")
#: What an optimum is: over all mechanisms, over a named family, or none known.
BOUND_KINDS = ("exact", "family", "certified")
NO_BOUND = "none"
#: Extra evaluator sets a suite experiment may ask for.
EVALUATOR_SETS = ("mismatch",)
#: Non-standard experiment protocols.
PROTOCOLS = ("two-user",)
#: Status of a stored row: ``inconsistent`` is a scored row whose mechanism's account of itself
#: (e.g. its channel()) failed the bench's test against its own releases; its numbers come from
#: the sample-based evaluators only.
STATUSES = ("ok", "failed", "timeout", "inconsistent")
#: Kinds of evaluation: exact, a lower bound on the true value, a statistical estimate, an upper bound
#: (a fresh classifier's held-out cross-entropy, which bounds the log-loss H(U | Z) from above).
EVALUATION_KINDS = ("exact", "lower-bound", "estimate", "upper-bound")

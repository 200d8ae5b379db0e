"""The guarantee a stored row's measured leakage implies: the ``guarantee_*`` Record columns.

Each scored row carries the (eps, delta)-information privacy that its headline
leakage implies by Wang & Tay's Theorem 1
(:func:`privbench.theory.guarantees.leakage_guarantee`), at the fixed budget
:data:`GUARANTEE_EPS`:

* ``guarantee_eps`` (float): :data:`GUARANTEE_EPS`, NaN where no guarantee applies;
* ``guarantee_delta`` (float): the delta, NaN where none applies;
* ``guarantee_kind`` (string): ``ip-kl`` (privacy ``mi``), ``ip-chi2`` (``chi2``),
  ``ip-tv`` (``map`` with binary S, through TV <= 4 pi (acc - pi)); null where none
  applies (``map`` with |S| > 2 or unknown priors of S, a NaN or negative leakage).

The guarantee is as good as the headline evaluator: an estimate (or a lower bound
such as the Gaussian approximation) of the leakage gives an estimate of the delta,
not a certificate. Weak DP needs strong f-divergence privacy, which no stored
metric measures: rows carry IP only (``privbench optimum --guarantee`` gives DP
where the optimal mechanism's joint is known).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

__all__ = ["GUARANTEE_COLUMNS", "GUARANTEE_EPS", "guarantee_fields", "scenario_priors"]

#: The IP budget at which stored rows state their delta.
GUARANTEE_EPS = 1.0
#: The Record columns this module fills.
GUARANTEE_COLUMNS = ("guarantee_eps", "guarantee_delta", "guarantee_kind")


def scenario_priors(scenario: Any) -> np.ndarray | None:
    """P(S = s) of a scenario with a finite S and a known model (shape (n_s,)), else None."""
    joint = getattr(scenario, "joint", None)
    if callable(joint):
        try:
            return np.asarray(joint(), dtype=float).sum(axis=1)
        except Exception:  # noqa: BLE001 - no finite joint (e.g. labelled data)
            return None
    prior = getattr(scenario, "prior", None)  # binary-gmm: P(S = 1)
    if isinstance(prior, (int, float)) and 0 < float(prior) < 1:
        return np.array([1.0 - float(prior), float(prior)])
    return None


def guarantee_fields(scenario: Any, privacy: str, leakage: float, eps: float = GUARANTEE_EPS) -> dict[str, Any]:
    """The ``guarantee_*`` columns of a row whose headline ``privacy`` leakage is ``leakage``.

    NaN / null columns where the metric gives no guarantee (see the module notes).
    """
    from privbench.theory.guarantees import leakage_guarantee

    none = {"guarantee_eps": math.nan, "guarantee_delta": math.nan, "guarantee_kind": None}
    try:
        value = float(leakage)
    except (TypeError, ValueError):
        return none
    if not value >= 0:  # NaN, or a negative estimate: no level to bound
        return none
    priors = scenario_priors(scenario) if privacy == "map" else None
    if priors is not None and priors.size == 2:  # an estimate below the majority prior: no adversary does worse
        value = min(max(value, float(priors.max())), 1.0)
    try:
        g = leakage_guarantee(privacy, value, eps, priors)
    except InputError:
        return none
    return {"guarantee_eps": g["eps"], "guarantee_delta": g["delta"], "guarantee_kind": f"ip-{g['divergence']}"}

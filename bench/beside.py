"""Record columns beside a certified score: the sandwich's lower end, and the family bound labelled as such.

A row scored against a ``certified`` bound (``bound_kind="certified"``, e.g. a
``binary-gmm`` case with ``family: certified``) has its gap against the achievable
end (``optimum_at_distortion`` / ``optimum_at_budget``). This module adds

* ``optimum_lower_at_distortion``, ``optimum_lower_at_budget``: the certified lower
  end at the achieved distortion and at the budget (a point below it, beyond
  tolerance, is flagged ``below_bound`` as an evaluator failure);
* ``family_bound``, ``family_bound_at_distortion``, ``family_bound_at_budget``: the
  scenario's default mechanism-family bound (e.g. GAP's ``general`` family for
  ``binary-gmm`` with full observation) where the metric has one, NaN / null otherwise.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["BESIDE_COLUMNS", "beside_fields"]

BESIDE_COLUMNS = ("optimum_lower_at_distortion", "optimum_lower_at_budget", "family_bound",
                  "family_bound_at_distortion", "family_bound_at_budget")


def beside_fields(sc: Any, privacy: str, observation: str | None, budget: float, achieved: float,
                  opt: Any, lower_at: Any, distortion: str | None = None) -> dict[str, Any]:
    """The :data:`BESIDE_COLUMNS` of a row scored against ``opt`` (empty unless it is ``certified``);
    ``distortion`` is the case's (None: the scenario's own)."""
    from privbench.datasets.errors import InputError
    from privbench.theory.optimum import optimum

    from .optimum_memo import budget_optimum

    if opt.bound_kind != "certified":
        return {}
    nan = math.nan
    out: dict[str, Any] = {"optimum_lower_at_budget": nan if opt.lower is None else float(opt.lower),
                           "optimum_lower_at_distortion": float(lower_at(achieved)),
                           "family_bound": None, "family_bound_at_distortion": nan, "family_bound_at_budget": nan}
    try:
        # the default bound: a family where one exists
        fam = budget_optimum(sc, budget, privacy, observation, None, distortion)
    except InputError:
        return out
    if fam.bound_kind == "family":
        at_d = optimum(sc, max(float(achieved), 0.0), privacy, observation, fam.family, distortion=distortion)
        out.update(family_bound=fam.family, family_bound_at_budget=float(fam.value),
                   family_bound_at_distortion=float(at_d.value))
    return out

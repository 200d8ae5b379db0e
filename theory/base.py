"""Shared types of the theory layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets import validate
from privbench.datasets.validate import check_finite
from privbench.datasets.vocabulary import PRIVACIES, UNITS

__all__ = ["PRIVACIES", "UNITS", "BoundKind", "Optimum", "check_budget", "check_budgets"]

BoundKind = Literal["exact", "family", "certified"]


@dataclass(frozen=True)
class Optimum:
    """The optimal privacy leakage at one distortion budget.

    Attributes
    ----------
    value : float
        Optimal leakage (nats for ``mi``, probability for ``map``,
        chi-square information for ``chi2``).
    method : str
        How it was obtained, e.g. ``"closed form (PPAN Prop 1)"`` or
        ``"convex program (exponential cone, Clarabel)"``.
    bound_kind : {"exact", "family", "certified"}
        ``exact``: optimum over all mechanisms. ``family``: best mechanism of
        the family named in ``family``. ``certified``: the optimum over all
        mechanisms lies in [``lower``, ``value``]; ``value`` is achieved by
        ``mechanism`` (the achievable end), ``lower`` is a certified lower end.
    mechanism : dict or None
        A JSON-able description of an optimal mechanism where one is known.
    family : str or None
        The mechanism family for ``family`` bounds.
    certificate : dict or None
        Solver evidence (e.g. primal value, dual bound, duality gap).
    lower : float or None
        ``certified`` bounds only: the lower end of the sandwich.
    """

    value: float
    method: str
    bound_kind: BoundKind = "exact"
    mechanism: dict[str, Any] | None = None
    family: str | None = None
    certificate: dict[str, Any] | None = field(default=None)
    lower: float | None = None


def check_budgets(budgets: Any) -> np.ndarray:
    """Return budgets as a 1-d float array (empty allowed: a curve over no budgets is empty);
    raise InputError for NaN, inf or negatives (:func:`privbench.datasets.validate.check_budgets`)."""
    return validate.check_budgets(budgets, allow_empty=True)


def check_budget(budget: Any) -> float:
    """Validate one distortion budget (finite, >= 0)."""
    b = check_finite("budget", budget)
    if b < 0:
        raise InputError(f"budget={budget!r} must be a finite number >= 0")
    return b

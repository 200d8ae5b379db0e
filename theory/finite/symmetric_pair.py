"""The symmetric pair (PPAN eq (7), appendix G): closed-form optimal MI tradeoff.

S, U on {0..m-1} with P(S != U) = p. Registered under the scenario name
``symmetric-pair`` for privacy ``mi`` with either observation model; its other
pairs fall back to the convex programs of the ``finite`` kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import xlogy

from privbench.datasets.errors import InputError

from ..base import Optimum, check_budgets
from ..registry import Provider, register
from .size import check_program_size

__all__ = ["METHODS", "SymmetricPairClosedForm", "symmetric_pair_mechanism", "symmetric_pair_mi",
           "symmetric_pair_rate"]

METHODS = {
    "full": "closed form (PPAN appendix G, eq (30))",
    "useful": "closed form (PPAN appendix G, eq (31))",
}


def symmetric_pair_rate(m: int, p: np.ndarray) -> np.ndarray:
    """r_m(p) = log m - p log(m-1) - h2(p): I(S;U) of the symmetric pair, nats."""
    p = np.asarray(p, dtype=float)
    h2 = -xlogy(p, p) - xlogy(1.0 - p, 1.0 - p)
    return np.log(m) - p * np.log(m - 1) - h2


def symmetric_pair_mi(budgets: Any, m: int, p: float, observation: str) -> np.ndarray:
    """Optimal I(S;Z) vs Hamming budget for the symmetric pair (PPAN appendix G).

    ``full`` (eq (30)): r_m(p + delta) while delta <= 1 - 1/m - p, r_m(p - delta)
    while delta <= p - (1 - 1/m), else 0. ``useful`` (eq (31)):
    r_m(p + delta (1 - p m / (m-1))) while delta < 1 - 1/m, else 0.
    Both are checked against the convex program in the tests.

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    d = check_budgets(budgets)
    knee = 1.0 - 1.0 / m
    if observation == "full":
        if p <= knee:
            q = np.minimum(p + d, knee)
        else:
            q = np.maximum(p - d, knee)
    elif observation == "useful":
        q = np.where(d < knee, p + np.minimum(d, knee) * (1.0 - p * m / (m - 1)), knee)
    else:
        raise InputError(f"observation={observation!r} is unknown (allowed: useful, full)")
    return np.maximum(symmetric_pair_rate(m, q), 0.0)


def symmetric_pair_mechanism(m: int, p: float, budget: float, observation: str) -> np.ndarray:
    """A channel P(Z|W) attaining :func:`symmetric_pair_mi`.

    ``useful``: Z = U with probability 1 - delta, else uniform on the other
    m - 1 symbols (delta capped at 1 - 1/m). ``full`` (w = s m + u): when
    p < 1 - 1/m, a pair with U = S is moved to a uniformly chosen symbol != S
    with probability a = delta / (1 - p); when p > 1 - 1/m, a pair with U != S
    is released as S with probability a = delta / p. Either way (S, Z) is a
    symmetric pair with parameter p + delta (resp. p - delta).
    """
    knee = 1.0 - 1.0 / m
    off = (1.0 - np.eye(m)) / (m - 1)
    if observation == "useful":
        d = min(budget, knee)
        return (1.0 - d) * np.eye(m) + d * off
    ch = np.zeros((m * m, m))
    for s in range(m):
        for u in range(m):
            row = ch[s * m + u]
            if p <= knee:
                a = min(budget, knee - p) / (1.0 - p) if p < 1 else 0.0
                if u == s:
                    row[:] = a * off[s]
                    row[s] += 1.0 - a
                else:
                    row[u] = 1.0
            else:
                a = min(budget, p - knee) / p
                if u == s:
                    row[s] = 1.0
                else:
                    row[u] = 1.0 - a
                    row[s] += a
    return ch


@register(name="symmetric-pair")
class SymmetricPairClosedForm(Provider):
    """PPAN appendix G for ``SymmetricPair`` scenarios (``m``, ``p``)."""

    pairs = (("mi", "useful"), ("mi", "full"))

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        return symmetric_pair_mi(budgets, scenario.m, scenario.p, observation)  # type: ignore[arg-type]

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        value = self.curve(scenario, np.array([budget]), privacy, observation, family)
        m = scenario.m
        check_program_size(m, m, m * m if observation == "full" else m, m, "first-order",
                           f"{scenario.id} mechanism ({observation})")
        channel = symmetric_pair_mechanism(scenario.m, scenario.p, budget, observation)  # type: ignore[arg-type]
        mechanism = {"type": "finite-channel", "observation": observation, "channel": channel.tolist()}
        return Optimum(value=float(value[0]), method=METHODS[observation], mechanism=mechanism)  # type: ignore[index]

"""The committed table of certified sandwiches (``gmm_certified.csv`` beside this module).

Made by ``python -m privbench.theory.mixture.table`` (see there for its rows);
each row is a valid sandwich on its own, whatever level its refinement reached,
so :func:`~.certified.certified_optimum` serves a stored row instead of solving
again, and reports draw the band from it.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["TABLE_NAME", "row_key", "stored_curve", "stored_rows", "stored_sandwich"]

TABLE_NAME = "gmm_certified.csv"


def row_key(row: dict[str, Any]) -> tuple[str, str, str, float]:
    """The key of a table row: (scenario_id, observation, privacy, budget)."""
    return (row["scenario_id"], row["observation"], row["privacy"], float(row["budget"]))


@lru_cache(maxsize=1)
def stored_rows() -> dict[tuple[str, str, str, float], dict[str, Any]]:
    """Every stored row keyed by (scenario_id, observation, privacy, budget); empty without the file."""
    path = resources.files(__package__) / TABLE_NAME  # type: ignore[arg-type]
    if not path.is_file():
        return {}
    out: dict[tuple[str, str, str, float], dict[str, Any]] = {}
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            out[row_key(r)] = r
    return out


def stored_sandwich(scenario_id: str, budget: float, privacy: str, observation: str) -> dict[str, Any] | None:
    """The stored row as numbers (``lower``, ``upper``, ``width``, ``seconds``, ...), or None."""
    r = stored_rows().get((scenario_id, observation, privacy, float(budget)))
    if r is None:
        return None
    return {"lower": float(r["lower"]), "upper": float(r["upper"]), "width": float(r["width"]),
            "seconds": float(r["seconds"]), "converged": r["converged"] == "True",
            "upper_distortion": float(r["upper_distortion"]), "lower_program": r.get("lower_program", ""),
            "stored": True}


def stored_curve(scenario_id: str, privacy: str, observation: str) -> list[dict[str, Any]]:
    """Every stored sandwich of one (scenario, observation, privacy), sorted by budget (numbers)."""
    budgets = sorted(b for (sid, obs, pr, b) in stored_rows() if (sid, obs, pr) == (scenario_id, observation, privacy))
    return [{**stored_sandwich(scenario_id, b, privacy, observation), "budget": b} for b in budgets]  # type: ignore[dict-item]

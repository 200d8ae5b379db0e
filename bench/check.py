"""Regression-testing a learner against stored baselines (``privbench check``).

A baseline file (``results/baselines/<suite>.json``) holds, for every point of a
suite (experiment, scenario, observation, privacy, family, budget), the best mean
gap that a reference learner reached over the suite's repetitions and a
tolerance.  ``privbench check --learner X`` runs the suite with X in place of the
suite's learners (on every experiment X serves) and fails when X's mean gap at
any point exceeds the baseline gap by more than the tolerance, or a case fails.

Tolerance of a point: max(floor, 3 x the standard error of the reference's gap
over repetitions), with floor 0.01 (nats, accuracy or chi-square units):
learners that differ by less than that are not told apart by a small suite.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from privbench.datasets.errors import InputError

TOL_FLOOR = 0.01
BASELINE_FORMAT = "privbench-baselines/1"


def point_key(row: Any) -> str:
    """Key of a suite point: experiment | scenario_id | observation | privacy | family | budget."""
    fam = row["family"] if isinstance(row["family"], str) else ""
    obs = row["observation"] if isinstance(row["observation"], str) else ""
    return f"{row['experiment']}|{row['scenario_id']}|{obs}|{row['privacy']}|{fam}|{float(row['budget']):g}"


def default_baseline_file(suite: str) -> Path:
    return Path("results") / "baselines" / f"{suite}.json"


def make_baselines(df: pd.DataFrame, suite: str, command: str = "") -> dict[str, Any]:
    """Baselines from a results table: per point the best learner's mean gap and a tolerance."""
    ok = df[df["status"] == "ok"]
    if ok.empty:
        raise InputError("no successful cases to make baselines from")
    entries: dict[str, Any] = {}
    for (key, learner), g in ok.assign(_key=ok.apply(point_key, axis=1)).groupby(["_key", "learner"]):
        gaps = g["gap"].astype(float)
        se = float(gaps.std(ddof=1) / math.sqrt(len(gaps))) if len(gaps) > 1 else 0.0
        cand = {"gap": float(gaps.mean()), "tol": max(TOL_FLOOR, 3 * se), "learner": learner, "reps": len(gaps)}
        if key not in entries or cand["gap"] < entries[key]["gap"]:
            entries[key] = cand
    from privbench.bench.runner import provenance

    return {"format": BASELINE_FORMAT, "suite": suite, "command": command, "provenance": provenance(),
            "entries": dict(sorted(entries.items()))}


def write_baselines(data: dict[str, Any], path: str | os.PathLike) -> Path:
    from .report import _atomic_write

    path = Path(path)
    try:
        _atomic_write(path, json.dumps(data, indent=1, sort_keys=False) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write baselines {str(path)!r} ({exc.strerror or exc})") from None
    return path


def read_baselines(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"baseline file {str(path)!r} does not exist (make one with 'privbench check "
                         "--write-baselines')")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"baseline file {str(path)!r} is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT or not isinstance(data.get("entries"), dict):
        raise InputError(f"baseline file {str(path)!r} is not a privbench baseline file ({BASELINE_FORMAT})")
    return data


def check_against(df: pd.DataFrame, baselines: dict[str, Any]) -> tuple[list[str], list[str], int]:
    """Compare a results table with baselines.

    Returns
    -------
    (failures, notes, checked) : list of str, list of str, int
        ``failures``: points whose mean gap exceeds baseline + tolerance, and failed
        or timed-out cases; ``notes``: points with no baseline; ``checked``: points compared.
    """
    failures, notes, checked = [], [], 0
    for _, r in df[df["status"] != "ok"].iterrows():
        failures.append(f"{r['learner']} {point_key(r)} rep {r['rep']}: {r['status']} ({r['error']})")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        return failures, notes, checked
    for (key, learner), g in ok.assign(_key=ok.apply(point_key, axis=1)).groupby(["_key", "learner"]):
        base = baselines["entries"].get(key)
        if base is None:
            notes.append(f"{learner} {key}: no baseline for this point")
            continue
        checked += 1
        gap = float(g["gap"].mean())
        if gap > base["gap"] + base["tol"]:
            failures.append(f"{learner} {key}: gap {gap:.4g} exceeds baseline {base['gap']:.4g} "
                            f"({base['learner']}) + tolerance {base['tol']:.3g}")
    return failures, notes, checked

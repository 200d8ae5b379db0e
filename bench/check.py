"""Regression-testing a learner against stored baselines (``privbench check``).

What is compared is the *strict gap* of a point: leakage minus the optimum at
max(achieved distortion, budget), so unused budget is charged (the identity
release is on the optimal curve at distortion 0, but far from the optimum at its
budget); a point that overshoots its budget by more than its tolerance
(:func:`_overshoot_tol`: the measurement's and the learner's finite-sample error)
is a failure of its own and never a baseline.

A baseline file holds, for every point of a
suite (experiment, scenario, observation, privacy, family, budget), each suite
learner's mean strict gap over the repetitions with a tolerance (``by_learner``),
and the best of them as the reference.  ``privbench check --learner X`` runs the
suite with X in place of the suite's learners (on every experiment X serves) and
fails when X's mean strict gap at any point exceeds its baseline by more than the
tolerance -- X's own baseline when the file has one (regression-testing X), the
reference otherwise (is X as good as the best stored learner?) -- or when a
case fails or overshoots.

Tolerance: max(floor, 3 x the standard error of the baseline learner's gap over
repetitions), with floor 0.01 (nats, accuracy or chi-square units): learners
that differ by less than that are not told apart by a small suite.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privbench.datasets.errors import InputError

from .scores import overshoot_tolerance, strict_gap

TOL_FLOOR = 0.01
BASELINE_FORMAT = "privbench-baselines/1"


def point_key(row: Any) -> str:
    """Key of a suite point: experiment | scenario_id | observation | privacy | family | budget."""
    fam = row["family"] if isinstance(row["family"], str) else ""
    obs = row["observation"] if isinstance(row["observation"], str) else ""
    return f"{row['experiment']}|{row['scenario_id']}|{obs}|{row['privacy']}|{fam}|{float(row['budget']):g}"


def strict_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Successful rows with ``_key``, ``strict_gap`` and ``overshoots`` (beyond tolerance)."""
    ok = df[df["status"] == "ok"].copy()
    if ok.empty:
        return ok.assign(_key=[], strict_gap=[], overshoots=[])
    ok["_key"] = ok.apply(point_key, axis=1)
    ok["strict_gap"] = strict_gap(ok["leakage"].astype(float), ok["optimum_at_distortion"].astype(float),
                                  ok["optimum_at_budget"].astype(float))
    ok["overshoots"] = ok["overshoot"].astype(float) > ok.apply(overshoot_tolerance, axis=1)
    return ok


def _stats(g: pd.DataFrame) -> dict[str, Any]:
    gaps = g["strict_gap"].astype(float)
    se = float(gaps.std(ddof=1) / math.sqrt(len(gaps))) if len(gaps) > 1 else 0.0
    return {"gap": float(gaps.mean()), "tol": max(TOL_FLOOR, 3 * se), "reps": len(gaps)}


#: Where the shipped suites' baselines live: package data ``baselines/<suite>.json`` of this package.
BASELINES_PACKAGE, BASELINES_DIR = "privbench.bench.suites", "baselines"


def default_baseline_file(suite: str, shipped: bool | None = None) -> Path:
    """The baseline file of ``suite``: package data for a shipped suite that ships baselines (found from
    any working directory, :mod:`importlib.resources`), else ``results/baselines/<suite>.json`` under the
    working directory.  ``shipped``: whether ``suite`` is a shipped suite (default: whether its name is one's)."""
    from importlib import resources

    from .suites import packaged_suites

    if suite in packaged_suites() if shipped is None else shipped:
        packaged = Path(str(resources.files(BASELINES_PACKAGE) / BASELINES_DIR / f"{suite}.json"))
        if packaged.is_file():
            return packaged
    return Path("results") / "baselines" / f"{suite}.json"


def make_baselines(df: pd.DataFrame, suite: str, command: str = "") -> dict[str, Any]:
    """Baselines from a results table: per point each learner's mean strict gap, and the best."""
    ok = strict_rows(df)
    ok = ok[~ok["overshoots"]]
    if ok.empty:
        raise InputError("no successful, within-budget cases to make baselines from")
    entries: dict[str, Any] = {}
    for (key, learner), g in ok.groupby(["_key", "learner"]):
        if not np.all(np.isfinite(g["strict_gap"].astype(float))):
            continue  # e.g. the identity release of a continuous source: infinite leakage, no baseline
        cand = _stats(g)
        e = entries.setdefault(key, {"by_learner": {}})
        e["by_learner"][learner] = cand
        if "gap" not in e or cand["gap"] < e["gap"]:
            e.update(cand, learner=learner)
    from privbench.bench.run import provenance

    return {"format": BASELINE_FORMAT, "suite": suite, "command": command, "provenance": provenance(),
            "entries": dict(sorted(entries.items()))}


def write_baselines(data: dict[str, Any], path: str | os.PathLike) -> Path:
    from .store import atomic_write_text

    path = Path(path)
    try:
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=False, allow_nan=False) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write baselines {str(path)!r} ({exc.strerror or exc})") from None
    return path


def read_baselines(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"baseline file {str(path)!r} does not exist (to make it, 'privbench check "
                         "--write-baselines' runs the suite's own learners and blesses their results as the "
                         "baselines)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise InputError(f"baseline file {str(path)!r} is nested too deeply to be a baseline file") from None
    except (OSError, ValueError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"baseline file {str(path)!r} is not valid JSON ({msg})") from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT or not isinstance(data.get("entries"), dict):
        raise InputError(f"baseline file {str(path)!r} is not a privbench baseline file ({BASELINE_FORMAT})")
    problem = baseline_problem(data["entries"])
    if problem:
        raise InputError(f"baseline file {str(path)!r}: {problem} (see privbench.bench.check, the schema)")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a baseline may hold")


def baseline_problem(entries: dict[str, Any]) -> str:
    """The first way ``entries`` breaks the schema, or "".

    Schema: a non-empty mapping point key -> ``{"gap": finite, "tol": finite >= 0,
    "learner": str, "reps": int >= 1, "by_learner": {learner: {"gap", "tol", "reps"}}}``
    (``by_learner`` optional).
    """
    if not entries:
        return "'entries' is empty: there is nothing to check against"
    for key, e in entries.items():
        if not isinstance(e, dict):
            return f"entry {key[:80]!r} is {type(e).__name__}, not a mapping"
        if not isinstance(e.get("learner"), str):
            return f"entry {key[:80]!r} has learner={e.get('learner')!r} (a name is required)"
        if not isinstance(e.get("by_learner", {}), dict):
            return f"entry {key[:80]!r} has by_learner of type {type(e['by_learner']).__name__} (a mapping)"
        stats = [("", e)] + [(f" by_learner {n!r}", s) for n, s in (e.get("by_learner") or {}).items()]
        for where, s in stats:
            bad = stat_problem(s)
            if bad:
                return f"entry {key[:80]!r}{where}: {bad}"
    return ""


def stat_problem(s: Any) -> str:
    """What is wrong with one ``{"gap", "tol", "reps"}`` record, or ""."""
    if not isinstance(s, dict):
        return f"{type(s).__name__} is not a mapping"
    for name, low in (("gap", None), ("tol", 0.0)):
        v = s.get(name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (
                low is not None and v < low):
            return f"{name}={v!r} must be a finite number" + (" >= 0" if low is not None else "")
    reps = s.get("reps")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        return f"reps={reps!r} must be an integer >= 1"
    return ""


def check_against(df: pd.DataFrame, baselines: dict[str, Any]) -> tuple[list[str], list[str], int]:
    """Compare a results table with baselines.

    Returns
    -------
    (failures, notes, checked) : list of str, list of str, int
        ``failures``: points whose mean strict gap exceeds the baseline + tolerance,
        points that overshoot their budget, failed or timed-out cases; ``notes``:
        points with no baseline; ``checked``: points compared.
    """
    failures, notes, checked = [], [], 0
    for _, r in df[df["status"] != "ok"].iterrows():
        failures.append(f"{r['learner']} {point_key(r)} rep {r['rep']}: {r['status']} ({r['error']})")
    ok = strict_rows(df)
    for _, r in ok[ok["overshoots"]].iterrows():
        failures.append(f"{r['learner']} {r['_key']} rep {r['rep']}: distortion {r['distortion']:.4g} overshoots "
                        f"the budget by {r['overshoot']:.3g}")
    for (key, learner), g in ok.groupby(["_key", "learner"]):
        base = baselines["entries"].get(key)
        if base is None:
            notes.append(f"{learner} {key}: no baseline for this point")
            continue
        own = base.get("by_learner", {}).get(learner)
        ref, name = (own, "its own baseline") if own else (base, f"reference {base['learner']}")
        checked += 1
        gap = float(g["strict_gap"].mean())
        if gap > ref["gap"] + ref["tol"]:
            failures.append(f"{learner} {key}: strict gap {gap:.4g} exceeds {name} {ref['gap']:.4g} "
                            f"+ tolerance {ref['tol']:.3g}")
    return failures, notes, checked

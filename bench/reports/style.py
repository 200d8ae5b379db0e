"""How reports mark trust and tell learners apart: one marker per kind of leakage number (exact,
lower bound, estimate), one colour x line-style pair per learner (distinct past ten learners),
the flag symbols and their legend, and the axis labels naming quantity and unit."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

#: leakage_kind -> (matplotlib marker, filled?, legend text). A lower bound points up: the truth is higher.
KIND_MARKER: dict[str, tuple[str, bool, str]] = {
    "exact": ("o", True, "exact leakage (computed from the mechanism)"),
    "lower-bound": ("^", True, "lower bound on leakage (an attacker; the truth can be higher)"),
    "estimate": ("D", False, "estimated leakage (sample estimator, no guarantee)"),
}
#: leakage_kind -> the short mark tables and the heatmap put beside a number.
KIND_MARK = {"exact": "", "lower-bound": "≥", "estimate": "~"}
#: distortion_kind -> the mark beside a distortion number that is a bound (the log-loss of a continuous
#: release: a fresh classifier's held-out cross-entropy, an upper bound on H(U | Z)).
DISTORTION_MARK = {"upper-bound": "≤"}
#: bound_kind -> the mark of a number scored against less than the optimum over all mechanisms.
BOUND_MARK = {"exact": "", "family": "†", "certified": "‡", "none": ""}

#: The flags, their table / heatmap mark and what they mean.
FLAGS: list[tuple[str, str, str]] = [
    ("over budget", "✗", "distortion beyond the budget by more than its statistical tolerance: fails the budget"),
    ("below bound", "!", "leakage below the bound beyond tolerance: against an exact or certified bound an "
                            "evaluator failure or a bug, never a win; against a family bound (†) a mechanism "
                            "outside the family"),
    ("inconsistent", "?", "the mechanism's declared channel does not describe its releases"),
    ("evaluators disagree", "≠", "the headline leakage is corroborated by no other evaluator"),
    ("failed", "✖", "the case failed or timed out: no number"),
]
FLAG_MARK = {name: mark for name, mark, _ in FLAGS}
#: The mark of a gap below zero whose leakage is only a lower bound or an estimate (never a plain negative gap).
NEGATIVE_MARK = "⚠"


def negative_mark(gap: float, kind: str) -> str:
    """:data:`NEGATIVE_MARK` where ``gap`` < 0 and the leakage behind it (``kind``) is not exact, else ''."""
    return NEGATIVE_MARK if gap < 0 and kind != "exact" else ""

PRIVACY_LABEL = {"mi": "leakage I(S;Z) [nats]", "map": "leakage: MAP adversary accuracy Pr[Ŝ=S]",
                 "chi2": "leakage: χ²-information χ²(S;Z)"}
PRIVACY_UNIT = {"mi": "nats", "map": "probability", "chi2": "χ²"}
DISTORTION_LABEL = {"hamming": "distortion Pr[U≠Z]", "matrix": "distortion E[d(U,Z)]",
                    "mse": "distortion E‖U−Z‖²", "xent": "distortion: per-pixel cross-entropy [nats]",
                    "logloss": "distortion: log-loss H(U|Z) [nats]"}

# Okabe-Ito without its yellow and black (invisible on white; black is the optimum), plus Tol's indigo,
# wine, teal and olive: ten colours that stay apart for colour-blind readers too.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#332288", "#882255",
           "#44AA99", "#999933"]
LINESTYLES = ["-", "--", ":", "-."]


def learner_styles(learners: list[str]) -> dict[str, tuple[str, str]]:
    """learner -> (colour, line style): ten colourblind-safe colours, then the same colours dashed,
    dotted, dash-dotted (40 distinct pairs; sorted names, so a learner looks the same in every plot)."""
    out = {}
    for i, lr in enumerate(sorted(learners)):
        out[lr] = (COLOURS[i % len(COLOURS)], LINESTYLES[(i // len(COLOURS)) % len(LINESTYLES)])
    return out


def distortion_label(first: pd.Series) -> str:
    """The distortion axis of a scenario: the quantity its task measures (E‖U−Z‖², Pr[U≠Z], ...)."""
    from privbench.datasets import make_scenario
    from privbench.datasets.errors import InputError

    bound = ", an upper bound (≤)" if str(first.get("distortion_kind")) == "upper-bound" else ""
    other = first.get("distortion_name")
    if isinstance(other, str) and other:  # a case run under another distortion than the scenario's own
        return DISTORTION_LABEL.get(other, f"distortion ({other})") + bound
    try:
        sc = make_scenario(first["scenario"], json.loads(first["params"]))
        obs = first.get("observation")
        task = sc.task(obs if isinstance(obs, str) and obs else "useful", str(first["privacy"]))
        return DISTORTION_LABEL.get(task.distortion, f"distortion ({task.distortion})") + bound
    except (InputError, TypeError, ValueError, KeyError, NotImplementedError):
        return "distortion"


def privacy_label(privacy: Any) -> str:
    return PRIVACY_LABEL.get(str(privacy), f"leakage ({privacy})")


def legend_rows() -> pd.DataFrame:
    """The legend of every mark a report uses, as a table (mark, meaning)."""
    rows = [(KIND_MARK[k] or "(none)", f"number is {v[2]}") for k, v in KIND_MARKER.items()]
    rows.append((DISTORTION_MARK["upper-bound"], "distortion is an upper bound (a fresh classifier's held-out "
                                                 "cross-entropy of U: the true H(U | Z) can be lower)"))
    rows += [("†", "scored against a family bound (best of a mechanism family), not the optimum over all "
                   "mechanisms"),
             ("‡", "scored against the achievable end of a certified sandwich of the optimum")]
    rows += [(mark, f"{name}: {text}") for name, mark, text in FLAGS]
    rows.append((NEGATIVE_MARK, "a gap below zero measured by a lower bound or an estimate: the attacker or "
                                "estimator found less leakage than the bound allows; the true gap is larger, "
                                "never a win"))
    rows.append(("★", "best learner of the experiment: smallest mean strict gap within budget among exact numbers "
                      "(among all only where none is exact: a lower bound can hide a larger gap)"))
    return pd.DataFrame(rows, columns=["mark", "meaning"])

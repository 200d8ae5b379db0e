"""Reports of image funnel points: the log-loss distortion is marked as an upper bound, with S's accuracy beside it."""

from __future__ import annotations

import json

import pandas as pd

from privbench.bench.reports.points import points_table
from privbench.bench.reports.style import DISTORTION_MARK, distortion_label, legend_rows
from privbench.bench.reports.tables import no_optimum_table


def _row(budget: float, acc: float, kind: str = "upper-bound") -> dict:
    evals = [{"metric": "map", "value": acc, "evaluator": "fresh-classifier", "kind": "lower-bound", "stderr": 0.01,
              "detail": {}},
             {"metric": "utility", "value": 0.9, "evaluator": "fresh-classifier", "kind": "lower-bound", "stderr": 0.01,
              "detail": {"label": "circle", "accuracy": {"circle": 0.9, "digit": acc}}}]
    return {"status": "ok", "bound_kind": "none", "evaluations": json.dumps(evals), "scenario": "digits",
            "scenario_id": "digits-digit", "params": json.dumps({"labeling": "digit"}), "observation": "useful",
            "privacy": "mi", "learner": "ppan-logloss-image", "budget": budget, "leakage": 1.0, "distortion": 0.2,
            "overshoot": 0.0, "distortion_kind": kind, "distortion_name": "logloss"}


def test_no_optimum_table_says_the_distortion_is_an_upper_bound_and_gives_s_accuracy():
    df = pd.DataFrame([_row(0.1, 0.8), _row(0.1, 0.6), _row(0.5, 0.3)])
    t = no_optimum_table(df)
    assert list(t["distortion is"]) == ["upper bound", "upper bound"]
    assert list(t["S accuracy"].round(6)) == [0.7, 0.3]
    assert list(t["seeds"]) == [2, 1]
    plain = no_optimum_table(pd.DataFrame([_row(0.1, 0.8, kind="estimate")]))
    assert "distortion is" not in plain.columns and "S accuracy" not in plain.columns


def test_axis_label_and_legend_name_the_bound():
    first = pd.Series(_row(0.1, 0.8))
    assert distortion_label(first) == "distortion: log-loss H(U|Z) [nats], an upper bound (≤)"
    assert distortion_label(pd.Series({**_row(0.1, 0.8), "distortion_name": None, "distortion_kind": "estimate"})) \
        == "distortion: per-pixel cross-entropy [nats]"
    assert DISTORTION_MARK["upper-bound"] in set(legend_rows()["mark"])


def test_points_table_marks_a_bounded_distortion():
    pts = pd.DataFrame([{"learner": "x", "n_train": 10, "budget": 0.1, "n": 1, "distortion": 0.2, "distortion_lo": 0.2,
                         "distortion_hi": 0.2, "leakage": 1.0, "leakage_lo": 1.0, "leakage_hi": 1.0,
                         "strict_gap": float("nan"), "strict_gap_lo": float("nan"), "strict_gap_hi": float("nan"),
                         "trust": "lower-bound", "bound": "none", "optimum_at_budget": float("nan"), "over_budget": 0,
                         "below_bound": 0, "flags": "", "leakage_evaluator": "fresh-classifier",
                         "distortion_trust": "upper-bound"}])
    assert points_table(pts)["distortion"].iloc[0].endswith("≤")

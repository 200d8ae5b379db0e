"""The ``privacy-utility`` report section: S accuracy against utility accuracy per learner variant,
evaluator and budget, from hand-made records (expected values written here from the inputs)."""

from __future__ import annotations

import json

import pandas as pd

from privbench.bench.reports.sections import SECTIONS
from privbench.bench.reports.sections.privacy_utility import privacy_utility_blocks


def _evals(s_acc: float, u_acc: float, evaluator: str = "fresh-classifier") -> str:
    return json.dumps([
        {"metric": "map", "value": s_acc, "evaluator": evaluator, "kind": "lower-bound",
         "detail": {"majority": 0.5}},
        {"metric": "utility", "value": u_acc, "evaluator": evaluator, "kind": "lower-bound",
         "detail": {"label": "u", "accuracy": {"s": s_acc, "u": u_acc}, "majority": {"s": 0.5, "u": 0.52}}},
        {"metric": "distortion", "value": 3.0, "evaluator": "sample-distortion", "kind": "estimate", "detail": {}}])


def _row(learner: str, budget: float, rep: int, s_acc: float, u_acc: float, evaluator: str = "fresh-classifier"):
    return dict(status="ok", experiment="chi2-fig4/independent", scenario="hypothesis-testing",
                scenario_id="hypothesis-testing-a0.25-A0", learner=learner, budget=budget, rep=rep,
                distortion=3.0, evaluations=_evals(s_acc, u_acc, evaluator))


def test_points_are_seed_means_per_variant_and_budget_never_mixing_evaluators():
    rows = [_row("chi2-sanitizer (formulation=utility)", 0.01, 0, 0.52, 0.83),
            _row("chi2-sanitizer (formulation=utility)", 0.01, 1, 0.54, 0.81),
            _row("chi2-sanitizer (formulation=-)", 40.0, 0, 0.62, 0.70),
            _row("chi2-sanitizer (formulation=-)", 40.0, 1, 0.64, 0.66, evaluator="other-attacker")]
    blocks = privacy_utility_blocks("chi2-fig4/independent", pd.DataFrame(rows), {})
    (table,) = [b.table for b in blocks if b.kind == "table"]
    assert len(table) == 3  # the two evaluators of the distortion variant are two rows
    paper = table[table["learner"] == "chi2-sanitizer (formulation=utility)"].iloc[0]
    assert paper["seeds"] == 2 and paper["S accuracy"].startswith("0.530 ± ")
    assert paper["u accuracy"].startswith("0.820 ± ") and paper["leakage is"] == "lower bound"
    assert set(table.loc[table["learner"] == "chi2-sanitizer (formulation=-)", "evaluator"]) == {
        "fresh-classifier", "other-attacker"}
    figs = [b for b in blocks if b.kind == "fig"]
    assert len(figs) == 1 and figs[0].png[:8] == b"\x89PNG\r\n\x1a\n"
    assert figs[0].text == "chi2-fig4_independent-privacy-utility.png"


def test_the_section_is_registered_and_silent_without_utility_evaluations():
    assert SECTIONS["privacy-utility"].render is privacy_utility_blocks
    row = _row("x", 1.0, 0, 0.5, 0.5)
    row["evaluations"] = json.dumps([{"metric": "map", "value": 0.5, "evaluator": "e", "kind": "exact", "detail": {}}])
    assert privacy_utility_blocks("x", pd.DataFrame([row]), {}) == []


def test_a_nan_accuracy_is_left_out_not_averaged():
    rows = [_row("a", 1.0, 0, 0.6, 0.8), _row("a", 1.0, 1, float("nan"), 0.9)]
    (table,) = [b.table for b in privacy_utility_blocks("x", pd.DataFrame(rows), {}) if b.kind == "table"]
    assert table.iloc[0]["seeds"] == 1 and table.iloc[0]["u accuracy"].startswith("0.800")

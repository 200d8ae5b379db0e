"""The chi-square paper's privacy-preserving VAE experiment (``chi2-vae``): its report table from rows
made by hand, and its smoke miniature end to end (run, stored, reported)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from privbench.bench.cli import main
from privbench.bench.reports.paper import reference_values
from privbench.bench.reports.sections import SECTIONS


def _row(learner: str, params: dict, budget: float, rep: int, acc: float, mean_log_q: float, mse_sum: float,
         util: float) -> dict:
    evs = [{"metric": "map", "value": acc, "evaluator": "fresh-classifier", "kind": "lower-bound",
            "detail": {"majority": 0.51, "preview": {"shape": [28, 28]}}},
           {"metric": "mi", "value": 0.69 + mean_log_q, "evaluator": "fresh-classifier", "kind": "lower-bound",
            "detail": {"mean_log_q": mean_log_q}},
           {"metric": "utility", "value": util, "evaluator": "fresh-classifier", "kind": "lower-bound",
            "detail": {"label": "parity", "accuracy": {"parity": util, "ge5": acc}}}]
    return dict(status="ok", experiment="chi2-vae", learner=learner, learner_params=json.dumps(params), budget=budget,
                rep=rep, distortion=mse_sum, distortion_name="mse", evaluations=json.dumps(evs))


def test_rows_read_by_the_utility_classifier_keep_their_mse_and_report_the_larger_read():
    """Where the utility classifier's read of S is the headline (it keeps no preview), the table still
    finds the image shape for the per-pixel MSE, and shows the larger read and its loss."""
    from privbench.bench.reports.sections.chi2_vae import ACC, LOSS, MSE, chi2_vae_frame

    r = _row("private-vae", {"privacy": "gap"}, 80.0, 0, 0.74, -0.50, 784 * 0.025, 0.84)
    evs = json.loads(r["evaluations"])
    for e in evs:
        e["stderr"] = 0.01
    evs += [{"metric": "map", "value": 0.76, "evaluator": "fresh-classifier-shared", "kind": "lower-bound",
             "stderr": 0.01, "detail": {"majority": 0.51}},
            {"metric": "mi", "value": 0.69 - 0.45, "evaluator": "fresh-classifier-shared", "kind": "lower-bound",
             "stderr": 0.01, "detail": {"mean_log_q": -0.45}}]
    r["evaluations"] = json.dumps(evs)
    f = chi2_vae_frame(pd.DataFrame([r]))
    assert f[ACC].iloc[0] == 0.76 and f[LOSS].iloc[0] == pytest.approx(0.45)
    assert f[MSE].iloc[0] == pytest.approx(0.025) and f["evaluator"].iloc[0] == "fresh-classifier"


def test_table_shows_attack_accuracy_loss_per_pixel_mse_and_utility_beside_tables_1_and_2():
    g = pd.DataFrame([
        _row("private-vae", {"privacy": "none"}, 0.0, 0, 0.94, -0.20, 784 * 0.02, 0.95),
        _row("private-vae", {"privacy": "none"}, 0.0, 1, 0.96, -0.10, 784 * 0.02, 0.95),
        _row("private-vae (privacy=gap-a)", {"privacy": "gap-a"}, 20.0, 0, 0.80, -0.45, 784 * 0.03, 0.90),
        _row("vfae-image", {"release": "decoded"}, 10.0, 0, 0.70, -0.55, 784 * 0.05, 0.80),
        _row("identity", {}, 0.0, 0, 0.97, -0.08, 0.0, 0.97)])
    blocks = SECTIONS["chi2-vae-tables"].render("chi2-vae", g, reference_values())
    (t,) = [b.table for b in blocks if b.kind == "table"]
    t = t.set_index("model")
    vae = t.loc["ours: VAE"]
    assert vae["seeds"] == 2 and vae["attack acc (lower: private)"].startswith("0.950 ± ")
    assert vae["attack loss (higher: private)"].startswith("0.150 ± ")  # minus the mean log Q(S | Z)
    assert vae["MSE per pixel"].startswith("0.020")                     # the summed squared error / 784 pixels
    gap_a = t.loc["ours: GAP-A lambda=20"]
    assert (gap_a["attack acc (lower: private)"], gap_a["attack loss (higher: private)"],
            gap_a["MSE per pixel"], gap_a["utility acc"]) == ("0.800", "0.450", "0.0300", "0.900")
    assert t.loc["ours: VFAE beta=10", "attack acc (lower: private)"] == "0.700"
    assert t.loc["ours: raw data (identity)", "MSE per pixel"] == "0.0000"
    assert t.loc["paper Table I (UTKFace): GAP-A", "attack acc (lower: private)"] == "0.830"
    assert t.loc["paper Table I (UTKFace): chi-square", "attack loss (higher: private)"] == "0.580"
    assert t.loc["paper Table II (CelebA): VAE", "utility acc"] == "0.997 (gender)"
    assert t.loc["paper Table II (CelebA): VFAE", "MSE per pixel"] == "0.120"
    assert set(t["leakage is"]) == {"lower bound", "as printed"}


@pytest.mark.slow
def test_smoke_miniature_runs_and_reports(tmp_path, capsys):
    out = tmp_path / "chi2-vae-smoke"
    assert main(["run", "--suite", "paper", "--only", "chi2-vae", "--smoke", "--out", str(out), "--device", "cpu",
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert " 0 failed, 0 timeout" in printed, printed
    assert main(["report", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "## chi2-vae:" in md and "Beside the chi-square paper's Tables I-II" in md
    assert "| ours: VAE " in md and "| ours: VFAE beta=" in md and "| ours: raw data (identity) " in md

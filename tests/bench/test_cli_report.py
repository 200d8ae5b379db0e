"""privbench report / compare / check end to end, and privbench.testing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privbench.bench.cli import main
from privbench.datasets import SymmetricPair

SUITE = """
description: tiny check suite
reps: 2
n_train: 2000
n_eval: 2000
learners:
  plugin: {}
  identity: {}
experiments:
  - name: sp
    scenario: symmetric-pair
    params: {m: 4, p: 0.4}
    observation: full
    privacy: mi
    budgets: [0.2, 0.5]
"""


def _run(tmp_path, name, learner, n_train=2000, seeds=2):
    out = tmp_path / name
    rc = main(["run", "--scenario", "symmetric-pair", "--param", "m=4", "--param", "p=0.4", "--observation",
               "full", "--privacy", "mi", "--learner", learner, "--budget", "0.2", "--budget", "0.5",
               "--n-train", str(n_train), "--n-eval", "2000", "--seeds", str(seeds), "--out", str(out),
               "--quiet", "--jobs", "1"])
    assert rc == 0
    return out


def test_report_writes_html_and_markdown(tmp_path, capsys):
    out = _run(tmp_path, "a", "randomized-response")
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "randomized-response" in text and "strict gap (mean)" in text and "95% CI" in text
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "Report built" in html and "from commit(s)" in html
    assert (out / "report.md").is_file() and list((out / "report_figures").glob("*.png"))
    assert list((out / "report_figures").glob("*.csv"))
    assert main(["report", str(out), "--html", str(tmp_path / "only.html")]) == 0
    assert (tmp_path / "only.html").is_file()


def test_compare_same_cases(tmp_path, capsys):
    a = _run(tmp_path, "a", "randomized-response")
    b = _run(tmp_path, "b", "randomized-response")
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "tie" in text and "A better beyond noise: 0, B better beyond noise: 0" in text


def test_check_passes_for_the_baseline_learner_and_fails_for_worse_ones(tmp_path, capsys):
    suite = tmp_path / "tiny.yaml"
    suite.write_text(SUITE)
    base = tmp_path / "base.json"
    assert main(["check", "--suite", str(suite), "--write-baselines", "--baselines", str(base), "--jobs", "1"]) == 0
    data = json.loads(base.read_text())
    assert len(data["entries"]) == 2
    # identity is on the optimal curve at distortion 0 but far from the optimum at its budget:
    # the strict gap charges the unused budget, so the plug-in is the reference everywhere
    assert all(e["learner"] == "plugin" and set(e["by_learner"]) == {"plugin", "identity"}
               for e in data["entries"].values())
    capsys.readouterr()
    assert main(["check", "--learner", "plugin", "--suite", str(suite), "--baselines", str(base),
                 "--jobs", "1"]) == 0
    assert "0 regression(s)" in capsys.readouterr().out
    # randomized response leaks more than the plug-in's optimum at the same budget: regressions
    assert main(["check", "--learner", "randomized-response", "--suite", str(suite), "--baselines", str(base),
                 "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION:" in out and "exceeds reference plugin" in out
    assert "write-baselines" not in out  # a failed check never suggests blessing the run
    # the constant release has no leakage but overshoots every budget: a failure too
    assert main(["check", "--learner", "constant", "--suite", str(suite), "--baselines", str(base),
                 "--jobs", "1"]) == 1
    assert capsys.readouterr().out.count("overshoots the budget") == 4


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert main(["check", "--suite", "regression"]) == 2
    assert main(["check", "--learner", "constant", "--baselines", str(tmp_path / "none.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["check", "--learner", "constant", "--baselines", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("privbench: error:") for line in err)


def test_assert_near_optimal_passes_and_fails(near_optimal):
    from privbench.learners import make_learner
    from privbench.testing import assert_near_optimal

    sc = SymmetricPair(4, 0.4)
    rows = near_optimal(make_learner("plugin"), sc, [0.2, 0.5], tol=0.02, observation="full", n_train=20000,
                        n_eval=1000, overshoot_tol=0.02)
    assert len(rows) == 2 and all(r["leakage_evaluator"] == "exact-channel" for r in rows)
    with pytest.raises(AssertionError, match="gap .* > tol"):
        assert_near_optimal(make_learner("randomized-response"), sc, [0.2], tol=0.01, observation="full",
                            n_train=1000, n_eval=1000)


def test_assert_near_optimal_does_not_excuse_an_unused_budget():
    # the identity release sits on the curve at its own distortion 0, but the budget allows far less leakage:
    # the budget-respecting gap at 0.2 is I(S;U) - optimum(0.2) = 0.2738 - 0.0541
    from privbench.learners import make_learner
    from privbench.testing import assert_near_optimal

    with pytest.raises(AssertionError, match=r"budget 0.2: gap 0.2197 > tol .* at max\(distortion 0, budget 0.2\)"):
        assert_near_optimal(make_learner("identity"), SymmetricPair(4, 0.4), [0.2], tol=1e-6, observation="full",
                            n_train=1000, n_eval=1000)


BASELINES = Path(__file__).resolve().parents[2] / "bench" / "suites" / "baselines" / "regression.json"


def test_committed_regression_baselines_cover_the_regression_suite():
    from privbench.bench.check import read_baselines
    from privbench.bench.suites import load_suite
    from privbench.datasets import make_scenario

    entries = read_baselines(BASELINES)["entries"]
    keys = set()
    for c in load_suite("regression").cases:
        sid = make_scenario(c.scenario, c.params).id
        for b in c.budgets:
            keys.add(f"{c.experiment}|{sid}|{c.observation or ''}|{c.privacy}|{c.family or ''}|{b:g}")
    # every point has a baseline (points where only infinite-leakage learners ran excepted)
    assert keys - set(entries) <= {k for k in keys if k.startswith("gaussian-source|")}
    assert all(e["tol"] >= 0.01 and e["gap"] > -0.01 for e in entries.values())


def test_check_gap_learner_against_committed_baselines(capsys):
    """GAP reproduces its own stored baselines (same seeds, same numbers); where it has none
    (it trains for MAP/MI, the finite-chi2 points score chi-square) it meets the reference."""
    rc = main(["check", "--learner", "gap", "--baselines", str(BASELINES), "--jobs", "1"])
    out = capsys.readouterr().out
    regressions = [line for line in out.splitlines() if line.startswith("REGRESSION:")]
    assert "12 points checked" in out
    assert not any("its own baseline" in line or "binary-map" in line for line in regressions)
    assert rc == (1 if regressions else 0)

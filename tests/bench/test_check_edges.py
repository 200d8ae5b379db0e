"""``privbench check`` edges (issue 11): a resumed directory holding other learners' rows, a check that checks nothing."""

from __future__ import annotations

import json
import textwrap

from privbench.bench.cli import main

SUITE = textwrap.dedent("""
    reps: 1
    n_train: 300
    n_eval: 300
    learners: {identity: {}}
    experiments:
      - name: tiny
        scenario: symmetric-pair
        params: {m: 3, p: 0.3}
        observation: full
        privacy: mi
        budgets: [0.1]
""")
KEY = "tiny|symmetric-pair-m3-p0.3|full|mi||0.1"


def baselines(path, key):
    stat = {"gap": 10.0, "tol": 0.01, "reps": 1}  # a generous baseline: every learner passes it
    path.write_text(json.dumps({"format": "privbench-baselines/1",
                                "entries": {key: {**stat, "learner": "identity", "by_learner": {}}}}))
    return str(path)


def test_check_counts_only_its_learner_and_a_check_of_nothing_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.yaml").write_text(SUITE)
    good = baselines(tmp_path / "b.json", KEY)
    common = ["check", "--suite", "tiny.yaml", "--jobs", "1", "--out", "d"]
    assert main([*common, "--learner", "identity", "--baselines", good]) == 0
    assert "1 points checked" in capsys.readouterr().out
    # another learner resumed into the same directory: its one point, not the identity's as well
    assert main([*common, "--learner", "randomized-response", "--baselines", good, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "1 points checked" in out and "identity" not in out.split("points checked")[0].split("\n")[-1]
    # baselines for no point of this run: nothing is checked, and that does not pass
    foreign = baselines(tmp_path / "f.json", "other|symmetric-pair-m9-p0.1|full|mi||0.5")
    assert main([*common, "--learner", "identity", "--baselines", foreign, "--resume"]) == 1
    captured = capsys.readouterr()
    assert "0 points checked" in captured.out and "checked nothing" in captured.err

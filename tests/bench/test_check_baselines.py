"""``privbench check`` finds the shipped baselines from any directory and never blesses a failed run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from privbench.bench.check import default_baseline_file, read_baselines
from privbench.bench.cli import main
from privbench.bench.records import COLUMN_NAMES
from privbench.bench.run import RunSummary

REPO = Path(__file__).resolve().parents[2]


def test_the_regression_baselines_are_package_data_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = default_baseline_file("regression")
    assert path.is_absolute() and path.is_file()
    assert path.resolve() == (REPO / "bench" / "suites" / "baselines" / "regression.json").resolve()
    assert read_baselines(path)["suite"] == "regression"
    # a suite that is not shipped keeps the working directory's results/baselines/
    assert default_baseline_file("mine") == Path("results") / "baselines" / "mine.json"
    # a shipped suite without shipped baselines: made and read under the working directory, never in the package
    assert default_baseline_file("quick") == Path("results") / "baselines" / "quick.json"
    assert default_baseline_file("regression", shipped=False) == Path("results") / "baselines" / "regression.json"


def fake_run(monkeypatch):
    """run_cases and read_records stand-ins: a run that stores nothing (the run itself: test_check_edges.py)."""
    monkeypatch.setattr("privbench.bench.run.run_cases", lambda cases, out, **kw: RunSummary(out=Path(out), run_id="r"))
    monkeypatch.setattr("privbench.bench.store.read_records",
                        lambda out: pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMN_NAMES}))


def test_check_from_a_foreign_directory_reads_the_shipped_baselines(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no results/ here
    fake_run(monkeypatch)
    rc = main(["check", "--learner", "plugin", "--jobs", "1"])
    out, err = capsys.readouterr()
    assert rc == 1  # nothing stored, so nothing checked: that does not pass ...
    assert "does not exist" not in err  # ... but the baselines were found
    assert f"0 points checked against {default_baseline_file('regression')}" in out
    assert "write-baselines" not in out + err  # a failed check never suggests blessing the run


def test_a_missing_baseline_file_says_what_writing_one_means(tmp_path, capsys):
    rc = main(["check", "--learner", "plugin", "--baselines", str(tmp_path / "none.json")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "does not exist" in err and "--write-baselines" in err and "blesses" in err


def test_the_shipped_baselines_are_valid(tmp_path):
    data = json.loads(default_baseline_file("regression").read_text())
    assert data["format"] == "privbench-baselines/1" and data["entries"]

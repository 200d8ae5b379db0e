"""Suites and ``privbench check`` skip what a plug-in learner does not serve, and say so (issue 13)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from privbench.bench.cli import main
from privbench.bench.suites import load_suite
from privbench.datasets.errors import InputError

HERE = Path(__file__).parent


@pytest.fixture
def plugin_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))


def test_a_binary_only_plugin_skips_the_m6_and_2x3_cases_of_the_regression_suite(plugin_path):
    suite = load_suite("regression", learners={"binary_only_plugin:BinaryOnly": {}})
    scenarios = {c.scenario + c.params_json for c in suite.cases}
    assert {c.experiment for c in suite.cases} == {"binary-map"}
    assert all('"p": 0.5' in s for s in scenarios)
    skipped = {s.experiment: s.reason for s in suite.skipped}
    assert skipped["symmetric-pair-mi"] == "serves n_s = 2, not n_s=6"
    assert skipped["finite-chi2"] == "serves n_u = 2, not n_u=3"
    assert skipped["gaussian-scalar"] == "serves task kinds finite, not gaussian"
    assert suite.skipped_experiments() == 6  # every experiment but binary-map
    assert len(suite.skipped) == 2 + 1 + 2 + 1 + 1 + 2  # one per (scenario, observation, privacy) task


def test_an_overridden_supports_is_the_same_mechanism(plugin_path):
    suite = load_suite("regression", learners={"binary_only_plugin:UsefulOnly": {}})
    assert {c.observation for c in suite.cases} == {"useful"}
    full = [s for s in suite.skipped if s.experiment == "binary-map"]
    assert [s.observation for s in full] == ["full"]
    assert full[0].reason == "its supports() refuses this task"
    with pytest.raises(InputError, match=r"does not serve binary-p0\.5-q0\.25 .*supports\(\) refuses"):
        from privbench.bench.suites import make_case
        make_case("s", "e", "binary", {"p": 0.5, "q": 0.25}, "full", "mi", None,
                  "binary_only_plugin:UsefulOnly", {}, [0.1])


def test_a_plugin_with_the_older_tuple_declaration_still_loads(plugin_path):
    suite = load_suite("regression", learners={"binary_only_plugin:OldStyle": {}})
    assert {c.experiment for c in suite.cases} == {"symmetric-pair-mi", "binary-map", "finite-chi2"}


def test_check_lists_the_skipped_experiments_and_counts_none_as_regressions(plugin_path, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--learner", "binary_only_plugin:BinaryOnly", "--suite", "regression", "--jobs", "1"])
    out = capsys.readouterr().out
    skipped = [line for line in out.splitlines() if line.startswith("skipped: ")]
    assert any("'symmetric-pair-mi' (symmetric-pair-m6-p0.7; 2 tasks)" in line and "n_s = 2, not n_s=6" in line
               for line in skipped)
    assert any("'finite-chi2' (finite-2x3" in line and "n_u = 2, not n_u=3" in line for line in skipped)
    assert len(skipped) == 6
    # nothing of the skipped m = 6 scenario ran (a bare "m6" also matched the random temp-dir name of the run)
    assert "REGRESSION" not in out and "symmetric-pair-m6" not in out.split("skipped:")[-1].split("\n", 1)[1]
    assert "4 points checked" in out and "0 regression(s); 6 experiment(s) skipped (9 tasks" in out
    assert code == 0

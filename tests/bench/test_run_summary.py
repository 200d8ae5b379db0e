"""The end of a run: counts of statuses and flags, and the next command to run."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from privbench.bench.cli import build_parser, main
from privbench.bench.cli.run import next_commands
from privbench.bench.run import RunSummary
from privbench.bench.scores import overshoot_tolerance


class FakeCase:
    def label(self):
        return "fake case"


def ok_row(**kw):
    row = {"status": "ok", "budget": 0.2, "n_train": 10_000, "distortion_stderr": 0.0, "overshoot": 0.0,
           "below_bound": False, "evaluators_disagree": False, "error": None}
    row.update(kw)
    return row


def test_flags_are_counted_as_the_report_flags_them():
    s = RunSummary(out=Path("d"), run_id="r")
    tol = overshoot_tolerance(ok_row())
    s.add(FakeCase(), [ok_row(overshoot=2 * tol), ok_row(overshoot=0.5 * tol), ok_row(below_bound=True),
                       ok_row(evaluators_disagree=True, below_bound=True), ok_row(evaluators_disagree=float("nan")),
                       ok_row(overshoot=float("nan"), below_bound=None),
                       ok_row(below_bound=True, bound_kind="family")])  # an outside learner may beat a family
    s.add(FakeCase(), [{"status": "failed", "budget": 0.2, "error": "kaboom", "overshoot": 9.0}])
    assert s.flags == {"overshoot": 1, "below-bound": 2, "evaluators-disagree": 1}
    assert s.flag_line() == ("flags: 1 overshoot, 2 below-bound, 1 evaluators-disagree "
                             "(see 'privbench report d')")
    assert s.not_ok() == 1 and s.counts["ok"] == 7


def test_next_commands_point_to_the_report_and_rerun_only_when_something_failed():
    args = argparse.Namespace(out=None, argv=["run", "--suite", "quick", "--jobs", "2"])
    assert next_commands(args, "results/runs/quick", 0) == ["next: privbench report results/runs/quick"]
    lines = next_commands(args, "results/runs/quick", 3)
    assert lines[1] == ("rerun what failed: privbench run --suite quick --jobs 2 --out results/runs/quick "
                        "--resume --retry-failed")


def test_a_failed_run_prints_flags_and_suggests_a_rerun_that_parses(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out dir"

    def fake_run_cases(cases, out_dir, **kw):  # the run itself is tested in test_runner.py
        s = RunSummary(out=Path(out_dir), run_id="r")
        s.add(FakeCase(), [{"status": "failed", "budget": 0.1, "error": "kaboom"}])
        s.add(FakeCase(), [ok_row(below_bound=True)])
        return s

    monkeypatch.setattr("privbench.bench.run.run_cases", fake_run_cases)
    rc = main(["run", "--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
               "--learner", "identity", "--learner", "constant", "--budget", "0.1", "--jobs", "1", "--quiet",
               "--out", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 1
    assert lines[0] == "  failed: fake case budget 0.1: kaboom"
    assert "flags: 0 overshoot, 1 below-bound, 0 evaluators-disagree (see 'privbench report " in lines[2]
    assert lines[3] == f"next: privbench report {shlex.quote(str(out))}"
    rerun = lines[4]
    assert rerun.startswith("rerun what failed: ")
    argv = shlex.split(rerun.removeprefix("rerun what failed: "))
    assert argv[0] == "privbench"
    args = build_parser().parse_args(argv[1:])
    assert args.resume and args.retry_failed and args.out == str(out) and args.learner == ["identity", "constant"]


def test_the_report_marks_below_bound_only_where_it_is_an_evaluator_failure():
    import pandas as pd

    from privbench.bench.reports.ranking import FLAG_MARK, below_failure, flag_marks

    g = pd.DataFrame({"over_budget": [0, 0], "below_bound": [True, False], "bound_kind": ["family", "exact"]})
    assert below_failure(g).tolist() == [False, False] and flag_marks(g) == ""
    g["bound_kind"] = ["certified", "exact"]
    assert below_failure(g).tolist() == [True, False] and flag_marks(g) == FLAG_MARK["below bound"]

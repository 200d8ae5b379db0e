"""The privbench CLI: tables, JSON lines, and one-line errors with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from privbench.bench.cli import main
from privbench.theory.finite import symmetric_pair_mi

SYM = ["symmetric-pair", "--param", "m=10", "--param", "p=0.4"]


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_table_output(capsys):
    rc, out, err = run(capsys, "optimum", *SYM, "--observation", "full", "--budget", "0.1", "--budget", "0.3")
    assert rc == 0 and err == ""
    lines = out.strip().splitlines()
    assert lines[0].startswith("symmetric-pair-m10-p0.4")
    assert "budget" in lines[1] and "optimum" in lines[1]
    expected = symmetric_pair_mi([0.1, 0.3], 10, 0.4, "full")
    assert float(lines[2].split()[1]) == pytest.approx(expected[0], abs=1e-6)
    assert float(lines[3].split()[1]) == pytest.approx(expected[1], abs=1e-6)


def test_json_lines_have_the_documented_keys(capsys):
    rc, out, _ = run(capsys, "optimum", *SYM, "--observation", "useful", "--budget", "0", "--budget", "0.2", "--json")
    assert rc == 0
    rows = [json.loads(line) for line in out.strip().splitlines()]
    assert len(rows) == 2
    for row, b in zip(rows, (0.0, 0.2)):
        for key in ("scenario", "params", "observation", "privacy", "distortion", "budget",
                    "optimum", "units", "method", "bound_kind", "mechanism"):
            assert key in row
        assert row["scenario"] == "symmetric-pair" and row["params"] == {"m": 10, "p": 0.4}
        assert row["privacy"] == "mi" and row["units"] == "nats" and row["distortion"] == "hamming"
        assert row["budget"] == b and row["bound_kind"] == "exact"
        assert row["optimum"] == pytest.approx(symmetric_pair_mi([b], 10, 0.4, "useful")[0])
        assert np.array(row["mechanism"]["channel"]).shape == (10, 10)


def test_map_units_and_linear_program(capsys):
    rc, out, _ = run(capsys, "optimum", "binary", "--param", "p=0.5", "--param", "q=0.25",
                     "--privacy", "map", "--observation", "full", "--budget", "0.1", "--json")
    row = json.loads(out)
    assert rc == 0 and row["units"] == "probability"
    assert row["optimum"] == pytest.approx(0.65, abs=1e-6)
    assert "linear program" in row["method"]


def test_list_scenarios(capsys):
    rc, out, _ = run(capsys, "list", "scenarios")
    assert rc == 0
    for name in ("symmetric-pair", "binary", "finite", "gaussian-scalar", "gaussian-vector",
                 "gaussian-source", "binary-gmm"):
        assert f"\n{name}:" in "\n" + out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["optimum", "nope", "--budget", "1"], "scenario 'nope' is unknown"),
        (["optimum", "symmetric-pair", "--param", "m=1", "--param", "p=0.4", "--observation", "full", "--budget", "0.1"], "m=1"),
        (["optimum", *SYM, "--param", "x=1", "--observation", "full", "--budget", "0.1"], "parameter 'x' is unknown"),
        (["optimum", *SYM, "--observation", "full", "--budget", "nan"], "budget=nan"),
        (["optimum", *SYM, "--observation", "full", "--budget", "-1"], "budget=-1.0"),
        (["optimum", *SYM, "--observation", "full", "--budget", "x"], "--budget 'x' is not a number"),
        (["optimum", *SYM, "--budget", "0.1"], "needs an observation model"),
        (["optimum", *SYM, "--observation", "partial", "--budget", "0.1"], "invalid choice"),
        (["optimum", *SYM, "--observation", "full", "--family", "general", "--budget", "0.1"], "does not apply"),
        (["optimum", "gaussian-scalar", "--param", "rho=0.5", "--privacy", "map", "--observation", "full", "--budget", "0.1"], "no known optimum"),
        (["optimum", *SYM, "--param", "m=3", "--observation", "full", "--budget", "0.1"], "given more than once"),
        (["optimum", "symmetric-pair", "--param", "m", "--budget", "0.1"], "NAME=VALUE"),
        (["optimum", *SYM, "--observation", "full"], "--budget"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, match):
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert match in err
    assert "Traceback" not in err


def test_console_script_exit_code_and_no_traceback():
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "privbench.bench.cli", "optimum", "symmetric-pair", "--param", "m=1",
         "--param", "p=0.4", "--observation", "full", "--budget", "0.1"],
        capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == "privbench: error: m=1 must be an integer >= 2"


ADHOC = ["run", "--scenario", "symmetric-pair", "--param", "m=4", "--param", "p=0.3", "--observation", "full"]


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "--only", "x"], "--only applies to a --suite; it cannot be used in an ad-hoc run"),
        (["run", "--smoke"], "--smoke applies to a --suite; it cannot be used in an ad-hoc run"),
        (["run", "--suite", "quick", "--scenario", "binary"],
         "--scenario is for ad-hoc runs; it cannot be combined with --suite"),
        (["run"], "privbench run needs --suite NAME or an ad-hoc --scenario (see 'privbench run --help')"),
        ([*ADHOC, "--param", "m=5", "--learner", "identity", "--budget", "0.1"], "--param m is given more than once"),
        ([*ADHOC, "--learner", "identity", "--learner-param", "a=1", "--learner-param", "a=2", "--budget", "0.1"],
         "--learner-param a is given more than once"),
        ([*ADHOC, "--budget", "0.1"], "an ad-hoc run needs --learner (see 'privbench list learners')"),
        ([*ADHOC, "--learner", "identity"], "an ad-hoc run needs at least one --budget"),
        (["run", "--suite", "quick", "--retry-failed"], "--retry-failed needs --resume"),
        (["run", "--suite", "nosuch"],
         "suite 'nosuch' is unknown (available: funnel, paper, quick, regression, or a path to a .yaml file)"),
        (["check"], "privbench check needs --learner NAME or module:Class (or --write-baselines)"),
        (["check", "--write-baselines", "--learner", "identity"],
         "--write-baselines uses the suite's own learners; drop --learner"),
    ],
)
def test_run_and_check_refuse_bad_option_combinations_before_running(capsys, tmp_path, argv, message):
    rc, out, err = run(capsys, *argv, *(["--out", str(tmp_path / "out")] if argv[0] == "run" else []))
    assert rc == 2 and out == ""
    assert err == f"privbench: error: {message}\n"
    assert not (tmp_path / "out").exists()


def test_seeds_zero_is_refused_for_a_suite(capsys):
    # refused by the argument parser, before the suite is even read
    with pytest.raises(SystemExit) as exc:
        main(["run", "--suite", "quick", "--seeds", "0"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.endswith("--seeds=0 must be an integer >= 1 (see 'privbench run --help')\n")
    assert err.count("\n") == 1


def test_python_m_imports_without_running():
    # pkgutil.walk_packages (tests/test_packaging.py) imports __main__: it must not run the CLI
    proc = subprocess.run([sys.executable, "-c", "import privbench.bench.cli.__main__"], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_certified_sandwich_rows_show_both_ends(capsys):
    # mu = 0: S is independent of U, so I(S;Z) = 0 for every release; the sandwich must contain it
    gmm = ["binary-gmm", "--param", "prior=0.7", "--param", "mu=0", "--param", "sigma0=1", "--param", "sigma1=1"]
    rc, out, _ = run(capsys, "optimum", *gmm, "--privacy", "mi", "--observation", "full", "--budget", "0.5", "--json")
    assert rc == 0
    row = json.loads(out)
    assert row["bound_kind"] == "certified" and row["family"] == "certified"
    assert row["lower"] <= 1e-9 and 0.0 <= row["optimum"] <= 1e-6
    rc, _, err = run(capsys, "optimum", *gmm, "--privacy", "mi", "--observation", "full", "--budget", "0.5",
                     "--family", "general")
    assert rc == 2 and "family='general'" in err and len(err.strip().splitlines()) == 1


def test_smoke_with_seeds_runs_that_many_repetitions_of_the_miniature():
    from privbench.bench.cli import build_parser
    from privbench.bench.cli.run import chosen_suite

    one = chosen_suite(build_parser().parse_args(["run", "--suite", "quick", "--smoke"]))
    three = chosen_suite(build_parser().parse_args(["run", "--suite", "quick", "--smoke", "--seeds", "3"]))
    assert {c.rep for c in one.cases} == {0}
    assert len(three.cases) == 3 * len(one.cases) and {c.rep for c in three.cases} == {0, 1, 2}
    assert len({c.key for c in three.cases}) == len(three.cases)  # every repetition stored apart
    assert len({c.train_seed for c in three.cases if c.learner == "identity"}) > 1  # and drawn apart

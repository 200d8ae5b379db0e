"""The runner: scoring against theory, determinism, failures and timeouts, Dask, resume after kill -9.

The Dask backend's case processes (timeouts, reuse) and its numbers against local: test_dask_backend.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from privbench.bench.run import execute_case, run_cases
from privbench.bench.store import read_records
from privbench.bench.suites import load_suite, make_case
from privbench.datasets import make_scenario, task_for
from privbench.theory.guarantees import ip_delta_bound
from privbench.theory import curve
from privbench.theory.measures import scenario_channel_measures

LEARNERS = textwrap.dedent("""
    import os, time
    from privbench.learners.base import TrainingError
    from privbench.learners.baselines import Identity, RandomizedResponse

    class Sleepy(RandomizedResponse):
        name = "test-sleepy"
        def __init__(self, seconds=1.0):
            self.seconds = seconds
        def _fit(self, samples, task, budgets, seed, device):
            time.sleep(self.seconds)
            return super()._fit(samples, task, budgets, seed, device)

    class Boom(Identity):
        name = "test-boom"
        def _fit(self, samples, task, budgets, seed, device):
            raise RuntimeError("kaboom at step 3")

    class Diverge(Identity):
        name = "test-diverge"
        def _fit(self, samples, task, budgets, seed, device):
            raise TrainingError("training diverged: loss is not finite at step 7")

    class Die(Identity):
        name = "test-die"
        def _fit(self, samples, task, budgets, seed, device):
            os._exit(7)
""")
SYM = {"m": 4, "p": 0.3}


@pytest.fixture()
def plug(tmp_path, monkeypatch):
    """A module of misbehaving test learners, importable here and in child processes."""
    d = tmp_path / "plug"
    d.mkdir()
    (d / "pbt_learners.py").write_text(LEARNERS)
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")]))
    return d


def _case(learner="randomized-response", lp=None, rep=0, **kw):
    args = dict(observation="full", privacy="mi", family=None, budgets=[0.1, 0.3], n_train=2000, n_eval=1000)
    args.update(kw)
    return make_case("t", "e", "symmetric-pair", SYM, args.pop("observation"), args.pop("privacy"),
                     args.pop("family"), learner, lp or {}, args.pop("budgets"), rep=rep, **args)


NUMBERS = ["leakage", "distortion", "optimum_at_distortion", "optimum_at_budget", "gap", "overshoot", "seed"]


def test_execute_case_scores_against_theory_and_is_deterministic():
    from privbench.learners import make_learner

    case = _case()
    rows = execute_case(case, "cpu")
    assert [r["status"] for r in rows] == ["ok", "ok"] and [r["budget"] for r in rows] == [0.1, 0.3]
    sc = make_scenario("symmetric-pair", SYM)
    # an independent re-fit from the case's seeds, measured exactly by theory
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    mechs = make_learner("randomized-response").fit(samples, task_for(sc, "full"), [0.1, 0.3], seed=case.seed)
    for row, mech in zip(rows, mechs):
        exact = scenario_channel_measures(sc, mech.channel(), "full")
        assert row["leakage"] == pytest.approx(exact["mi"], abs=1e-9)
        assert row["leakage_evaluator"] == "exact-channel" and row["bound_kind"] == "exact"
        assert row["optimum_at_budget"] == pytest.approx(curve(sc, [row["budget"]], "mi", "full")[0], abs=1e-9)
        assert row["optimum_at_distortion"] == pytest.approx(curve(sc, [row["distortion"]], "mi", "full")[0],
                                                             abs=1e-9)
        assert row["gap"] == pytest.approx(row["leakage"] - row["optimum_at_distortion"], abs=1e-9)
        assert row["seed"] == case.seed and row["case_id"] == case.case_id(row["budget"])
        assert row["guarantee_kind"] == "ip-kl" and row["guarantee_eps"] == 1.0  # Theorem 1(b) of the leakage
        assert row["guarantee_delta"] == pytest.approx(ip_delta_bound(exact["mi"], 1.0, "kl"), abs=1e-9)
        for key in ("privbench_version", "git_commit", "torch_version", "numpy_version", "host", "device"):
            assert row[key]
    again = execute_case(case, "cpu")
    assert [[r[k] for k in NUMBERS] for r in again] == [[r[k] for k in NUMBERS] for r in rows]
    other = execute_case(_case(rep=1), "cpu")
    assert other[0]["seed"] != rows[0]["seed"]


def test_failures_timeouts_and_dead_workers_are_recorded_and_the_run_goes_on(plug, tmp_path):
    import psutil

    cases = [_case("pbt_learners:Sleepy", {"seconds": 120}), _case("pbt_learners:Boom"),
             _case("pbt_learners:Diverge"), _case("pbt_learners:Die"), _case()]
    t0 = time.perf_counter()
    summary = run_cases(cases, tmp_path / "res", jobs=2, device="cpu", timeout=3, progress="none")
    assert time.perf_counter() - t0 < 100  # the 120 s sleeper was stopped
    df = read_records(tmp_path / "res")
    assert len(df) == 10
    by = {lr: g for lr, g in df.groupby("learner")}
    assert set(by["pbt_learners:Sleepy"]["status"]) == {"timeout"}
    assert by["pbt_learners:Sleepy"]["error"].str.contains("timeout of 3 s").all()
    assert set(by["pbt_learners:Boom"]["status"]) == {"failed"}
    assert by["pbt_learners:Boom"]["error"].str.contains("RuntimeError: kaboom at step 3").all()
    assert by["pbt_learners:Diverge"]["error"].str.contains("TrainingError: training diverged").all()
    assert by["pbt_learners:Die"]["error"].str.contains("worker process died").all()
    assert set(by["randomized-response"]["status"]) == {"ok"}
    assert summary.counts == {"ok": 2, "failed": 6, "timeout": 2}
    # no worker survives the run (the sleeper was killed, the others stopped)
    kids = [p for p in psutil.Process().children(recursive=True) if "spawn_main" in " ".join(p.cmdline())]
    assert psutil.wait_procs(kids, timeout=10)[1] == []


def test_dask_backend_on_a_local_cluster(plug, tmp_path):
    from distributed import LocalCluster

    cases = [_case(), _case("identity"), _case("pbt_learners:Boom")]
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        summary = run_cases(cases, tmp_path / "res", backend="dask", scheduler=cluster.scheduler_address,
                            progress="none")
    assert summary.counts == {"ok": 4, "failed": 2, "timeout": 0}
    df = read_records(tmp_path / "res").set_index("case_id")
    for case in cases[:2]:
        for row in execute_case(case, "cpu"):
            assert df.loc[row["case_id"], "leakage"] == row["leakage"]
            assert df.loc[row["case_id"], "gap"] == row["gap"]


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "privbench.bench.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_resume_after_kill_9_with_two_concurrent_resumers(plug, tmp_path, capsys):
    import psutil

    suite = tmp_path / "slow.yaml"
    suite.write_text(textwrap.dedent("""
        reps: 5
        n_train: 500
        n_eval: 500
        learners: {"pbt_learners:Sleepy": {seconds: 0.8}}
        experiments:
          - scenario: symmetric-pair
            params: {m: 3, p: 0.3}
            observation: full
            privacy: mi
            budgets: [0.1, 0.3]
    """))
    out = tmp_path / "res"
    first = _cli("run", "--suite", str(suite), "--out", str(out), "--jobs", "1", "--quiet")
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "records").glob("part-*.parquet"))) < 2:
        time.sleep(0.1)
    workers = psutil.Process(first.pid).children(recursive=True)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    done_before = len(list((out / "records").glob("part-*.parquet")))
    assert 2 <= done_before < 5, "kill -9 must land mid-run"
    assert psutil.wait_procs(workers, timeout=15)[1] == []  # orphaned workers exit by themselves
    # without --resume the directory is refused, nothing is touched
    from privbench.bench.cli import main

    parts = sorted((out / "records").glob("part-*.parquet"))
    assert main(["run", "--suite", str(suite), "--out", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and len(err.strip().splitlines()) == 1
    assert sorted((out / "records").glob("part-*.parquet")) == parts
    # two resumers at once (another process and this one): every case once, none twice
    other = _cli("run", "--suite", str(suite), "--out", str(out), "--jobs", "1", "--resume")
    while not list((out / "runs").glob("*.json"))[1:] and other.poll() is None:
        time.sleep(0.05)  # let the other resumer start first
    here = run_cases(load_suite(str(suite)).cases, out, jobs=1, resume=True, progress="none")
    assert other.wait(timeout=180) == 0, other.communicate()
    assert here.skipped + here.cases + here.busy == 5 and here.skipped >= done_before
    every = read_records(out, all_attempts=True)
    assert len(every) == 10 and every["case_id"].is_unique and set(every["status"]) == {"ok"}
    assert len(list((out / "records").glob("part-*.parquet"))) == 5
    assert sorted(every["rep"].unique()) == list(range(5))
    assert every["leakage"].notna().all()


def test_cli_run_gives_the_numbers_of_an_in_process_run(tmp_path, capsys):
    from privbench.bench.cli import main

    out = tmp_path / "res"
    rc = main(["run", "--scenario", "symmetric-pair", "--param", "m=4", "--param", "p=0.3", "--observation", "full",
               "--privacy", "mi", "--learner", "randomized-response", "--budget", "0.1", "--budget", "0.3",
               "--n-train", "2000", "--n-eval", "1000", "--seeds", "2", "--jobs", "1", "--out", str(out),
               "--csv", "--quiet"])
    stdout = capsys.readouterr().out
    assert rc == 0 and "4 row(s): 4 ok" in stdout
    df = read_records(out).set_index("case_id")
    assert len(df) == 4 and (out / "results.csv").is_file()
    for rep in range(2):
        case = _case(rep=rep)
        assert case.suite != "adhoc"  # the suite name does not change the numbers
        for row in execute_case(case, "cpu"):
            assert [df.loc[row["case_id"], k] for k in NUMBERS] == [row[k] for k in NUMBERS]


ADHOC = ["run", "--scenario", "symmetric-pair", "--param", "m=4", "--param", "p=0.3", "--observation", "full",
         "--budget", "0.1"]


@pytest.mark.parametrize("argv,match", [
    (["run", "--suite", "nope"], "suite 'nope' is unknown"),
    (["run", "--scenario", "nope", "--learner", "identity", "--budget", "0.1"], "scenario 'nope' is unknown"),
    (ADHOC + ["--param", "x=1", "--learner", "identity"], "parameter 'x' is unknown"),
    (ADHOC + ["--learner", "nope"], "learner 'nope' is unknown"),
    (ADHOC + ["--learner", "no_such_module_xyz:Thing"], "cannot import module 'no_such_module_xyz'"),
    (ADHOC + ["--learner", "identity", "--learner-param", "speed=3"], "bad hyper-parameters"),
    (ADHOC + ["--learner", "gaussian-noise"], "does not serve"),
    (ADHOC + ["--learner", "identity", "--privacy", "map", "--family", "general"], "does not apply"),
    (ADHOC + ["--learner", "identity", "--suite", "quick"], "cannot be combined with --suite"),
    (ADHOC + ["--learner", "identity", "--jobs", "0"], "jobs=0"),
    (ADHOC + ["--learner", "identity", "--timeout", "-1"], "timeout=-1"),
    (ADHOC + ["--learner", "identity", "--scheduler", "tcp://127.0.0.1:1"], "needs --backend dask"),
    (ADHOC + ["--learner", "identity", "--retry-failed"], "needs --resume"),
    (["run"], "needs --suite"),
    (["run", "--suite", "quick", "--jobs", "x"], "invalid int value"),
])
def test_bad_input_is_one_line_and_exit_2(argv, match, tmp_path, capsys):
    from privbench.bench.cli import main

    try:
        rc = main(argv + ["--out", str(tmp_path / "res")])
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(match, err), err
    assert not (tmp_path / "res").exists()  # nothing was created


def test_bad_suite_file_and_bad_directories_exit_2_and_lose_nothing(tmp_path, capsys):
    from privbench.bench.cli import main
    from privbench.bench.store import ResultsDir

    def run(*argv):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse errors
            rc = exc.code
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return rc, err

    bad = tmp_path / "bad.yaml"
    bad.write_text("experiments:\n  - {scenario: binary\n")
    assert run("run", "--suite", str(bad), "--out", str(tmp_path / "x"))[0] == 2
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    rc, err = run(*ADHOC, "--learner", "identity", "--out", str(foreign))
    assert rc == 2 and "not a privbench results directory" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    rc, err = run(*ADHOC, "--learner", "identity", "--out", str(foreign / "notes.txt" / "sub"))
    assert rc == 2 and "cannot write to results directory" in err
    # a corrupted part: named, exit 2, and still there (never silently dropped)
    res = tmp_path / "res"
    store = ResultsDir(res)
    case = _case("identity")
    good = store.write([{"case_id": case.case_id(0.1), "status": "ok", "budget": 0.1}], case.key, "r0")
    corrupt = res / "records" / "part-0000-r1.parquet"
    corrupt.write_bytes(b"PAR1 this is not parquet")
    rc, err = run(*ADHOC, "--learner", "identity", "--out", str(res), "--resume")
    assert rc == 2 and "part-0000-r1.parquet' is corrupted" in err
    assert corrupt.read_bytes() == b"PAR1 this is not parquet" and good.is_file()


def test_a_learner_trains_its_own_objective_and_is_scored_on_the_case_metric():
    case = make_case("t", "e", "binary", {"p": 0.5, "q": 0.25}, "full", "map", None, "ppan", {"steps": 50},
                     [0.1], n_train=2000, n_eval=1000)
    (row,) = execute_case(case, "cpu")
    assert row["status"] == "ok", row["error"]
    assert (row["privacy"], row["objective"]) == ("map", "mi")
    assert row["leakage_evaluator"] == "exact-channel" and 0.5 <= row["leakage"] <= 1.0  # a MAP accuracy
    sc = make_scenario("binary", {"p": 0.5, "q": 0.25})
    assert row["optimum_at_budget"] == pytest.approx(curve(sc, [0.1], "map", "full")[0], abs=1e-9)

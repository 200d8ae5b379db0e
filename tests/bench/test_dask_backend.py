"""The Dask backend: case processes reused across cases and replaced on timeout, the same numbers as the
local backend, and a bounded one-line error for a scheduler with no workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from privbench.bench.backends.isolated import CASE_PROCESSES, close_case_processes, run_isolated
from privbench.bench.run import run_cases
from privbench.bench.store import read_records
from privbench.bench.suites import make_case

LEARNERS = textwrap.dedent("""
    import os, sys, time
    from privbench.learners.baselines import Identity, RandomizedResponse

    class Sleepy(RandomizedResponse):
        name = "test-sleepy"
        def __init__(self, seconds=1.0):
            self.seconds = seconds
        def _fit(self, samples, task, budgets, seed, device):
            time.sleep(self.seconds)
            return super()._fit(samples, task, budgets, seed, device)

    class Chatty(RandomizedResponse):
        name = "test-chatty"
        def _fit(self, samples, task, budgets, seed, device):
            print("x" * 300_000)  # more than a pipe holds, on stdout ...
            print("y" * 300_000, file=sys.stderr)  # ... and on stderr
            return super()._fit(samples, task, budgets, seed, device)

    class Die(Identity):
        name = "test-die"
        def _fit(self, samples, task, budgets, seed, device):
            os._exit(7)
""")

#: What may differ between two runs of the same cases: timing, where, when, which run.
VOLATILE = {"started_at", "finished_at", "wall_time_s", "train_time_s", "eval_time_s", "host", "run_id",
            "mechanism_file"}


@pytest.fixture()
def plug(tmp_path, monkeypatch):
    """A module of test learners, importable here and in child processes."""
    d = tmp_path / "plug"
    d.mkdir()
    (d / "pbt_dask_learners.py").write_text(LEARNERS)
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")]))
    yield d
    close_case_processes()


def _case(learner="randomized-response", lp=None, rep=0, scenario="symmetric-pair", params=None,
          budgets=(0.1, 0.3), n_train=2000):
    return make_case("t", "e", scenario, params or {"m": 4, "p": 0.3}, "full", "mi", None, learner, lp or {},
                     list(budgets), rep=rep, n_train=n_train, n_eval=1000)


def _untimed(info):
    """A JSON text without the keys that hold timings (seconds, ..._time_s), at any depth."""
    def drop(x):
        if isinstance(x, dict):
            return {k: drop(v) for k, v in x.items() if not ("seconds" in k or "time" in k)}
        return [drop(v) for v in x] if isinstance(x, list) else x
    return info if not isinstance(info, str) else json.dumps(drop(json.loads(info)), sort_keys=True)


def _idle_pids() -> list[int]:
    return [p.pid for p in CASE_PROCESSES.idle]


def test_case_process_is_reused_and_replaced_only_after_a_timeout_or_a_death(plug):
    close_case_processes()
    first = run_isolated(_case(), "cpu", timeout=60)
    assert [r["status"] for r in first] == ["ok", "ok"]
    (pid,) = _idle_pids()
    again = run_isolated(_case("pbt_dask_learners:Chatty", rep=1), "cpu", timeout=60)
    assert [r["status"] for r in again] == ["ok", "ok"], again[0]["error"]
    assert _idle_pids() == [pid]  # the same interpreter ran the second case
    t0 = time.perf_counter()
    slow = run_isolated(_case("pbt_dask_learners:Sleepy", {"seconds": 120}), "cpu", timeout=1.0)
    assert [r["status"] for r in slow] == ["timeout", "timeout"]
    assert "timeout of 1 s (worker killed)" in slow[0]["error"]
    assert time.perf_counter() - t0 < 60  # a bound against hanging, not a timing goal
    assert _idle_pids() == []  # killed, not given back
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    dead = run_isolated(_case("pbt_dask_learners:Die"), "cpu", timeout=60)
    assert [r["status"] for r in dead] == ["failed", "failed"]
    assert "worker process died (exit code 7" in dead[0]["error"]
    assert _idle_pids() == []  # (it ran in a fresh process: the pool was empty)


def test_dask_numbers_are_bit_identical_to_the_local_backend(tmp_path):
    cases = [_case(), _case("ppan", {"steps": 200}, n_train=1000),
             _case("gaussian-noise", scenario="gaussian-scalar", params={"rho": 0.85}, budgets=(0.2, 0.5))]
    local = run_cases(cases, tmp_path / "local", jobs=1, device="cpu", timeout=120, progress="none")
    dask = run_cases(cases, tmp_path / "dask", jobs=1, device="cpu", timeout=120, backend="dask",
                     progress="none")
    assert local.counts == dask.counts == {"ok": 6, "failed": 0, "timeout": 0}
    a, b = (read_records(tmp_path / d).sort_values("case_id").reset_index(drop=True) for d in ("local", "dask"))
    keep = [c for c in a.columns if c not in VOLATILE]
    for df in (a, b):  # a learner's own timings inside its info
        df["mechanism_info"] = df["mechanism_info"].map(_untimed)
    assert a["leakage"].notna().all()
    differ = [c for c in keep if not a[c].equals(b[c])]
    assert differ == [], a[differ].compare(b[differ])


def test_a_scheduler_with_no_workers_is_one_line_within_the_configured_wait(tmp_path, capsys):
    import dask
    from distributed import LocalCluster

    from privbench.bench.cli import main

    argv = ["run", "--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
            "--privacy", "mi", "--learner", "identity", "--budget", "0.1", "--backend", "dask", "--quiet"]
    with LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None) as cluster:
        with dask.config.set({"privbench.worker-wait": 2}):
            t0 = time.perf_counter()
            rc = main([*argv, "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "res")])
            took = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "has no workers (waited 2 s)" in err and "dask worker" in err
    assert took < 30  # waited about 2 s, not forever (a bound, not a timing goal)
    assert not (tmp_path / "res").exists()  # refused before the results directory is touched


def test_worker_wait_must_be_a_positive_number():
    import dask

    from privbench.bench.backends.dask_backend import worker_wait
    from privbench.datasets.errors import InputError

    assert worker_wait() == 30.0
    with dask.config.set({"privbench.worker-wait": "45"}):
        assert worker_wait() == 45.0
    for bad in (0, -1, "soon"):
        with dask.config.set({"privbench.worker-wait": bad}), pytest.raises(InputError, match="worker-wait"):
            worker_wait()


def test_a_run_whose_workers_all_left_stops_with_one_line_after_the_wait(monkeypatch):
    from collections import deque

    import distributed

    from privbench.bench.backends.common import Job
    from privbench.bench.backends.dask_backend import loop
    from privbench.datasets.errors import InputError

    class Pending:  # a task the scheduler holds, with no worker to run it
        status = "pending"

    class Gone:  # a client whose scheduler has no worker left
        submitted = 0

        def nthreads(self):
            return {}

        def submit(self, *args, **kw):
            self.submitted += 1
            return Pending()

    def wait(futures, timeout, return_when):  # distributed.wait: nothing finishes
        time.sleep(timeout)
        raise TimeoutError()

    monkeypatch.setattr(distributed, "wait", wait)
    client, finished, todo = Gone(), [], deque([_case(), _case(rep=1)])
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"every Dask worker left .* within 0.5 s \(2 case\(s\) not run"):
        loop(client, todo, {}, ("cpu", None, 1), 0.5, lambda c: Job(c, None), lambda job, rows: finished.append(rows))
    assert time.perf_counter() - t0 < 30 and finished == [] and client.submitted == 1


def test_a_case_process_does_not_inherit_what_a_dask_nanny_sets(monkeypatch):
    import dask
    import distributed  # noqa: F401 - registers the nanny's settings, as in a Dask worker

    from privbench.bench.backends.isolated import nanny_environ

    env = dask.config.get("distributed.nanny.pre-spawn-environ")
    assert nanny_environ() == env and "MALLOC_TRIM_THRESHOLD_" in env
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.setenv("PRIVBENCH_TEST_KEEP", "1")
    seen = {}
    real = subprocess.Popen

    def popen(argv, env=None, **kw):  # a stand-in child; what it would have been given
        seen.update(env, argv=argv)
        return real(["sleep", "30"], **kw)

    monkeypatch.setattr(subprocess, "Popen", popen)
    from privbench.bench.backends.isolated import CaseProcess

    proc = CaseProcess(1)
    proc.kill()
    assert seen["argv"] == [sys.executable, "-m", "privbench.bench.backends.isolated"]
    assert seen["PRIVBENCH_TEST_KEEP"] == "1" and not set(env) & set(seen)


def test_a_worker_with_another_privbench_version_is_refused():
    from privbench.bench.backends.dask_backend import check_workers, worker_version
    from privbench.datasets.errors import InputError

    class Cluster:  # a scheduler whose second worker has another privbench
        def __init__(self, versions):
            self.versions = versions

        def wait_for_workers(self, n, timeout):
            pass

        def run(self, func):
            assert func is worker_version
            return self.versions

    mine = worker_version()
    check_workers(Cluster({"tcp://a:1": mine, "tcp://b:2": mine}), 1.0)
    with pytest.raises(InputError, match=rf"Dask worker tcp://b:2 has privbench 0\.0\.1, this process {mine}"):
        check_workers(Cluster({"tcp://a:1": mine, "tcp://b:2": "0.0.1"}), 1.0)

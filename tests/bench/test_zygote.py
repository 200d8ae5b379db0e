"""Release servers forked by the run's zygote (bench/zygote.py, learners/zygote.py) release exactly what a
fresh server releases, hold no bench module, and are seen to exit; a local worker sees the run's environment
even when the forkserver that forked it started earlier (issue 14, cost of the checks)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from privbench.bench import zygote as zy
from privbench.bench.remote_release import ReleaseServer
from privbench.datasets import SymmetricPair, task_for
from privbench.learners.mechanisms import FiniteChannel


@pytest.fixture
def saved(tmp_path):
    task = task_for(SymmetricPair(3, 0.2), "useful", "mi")
    ch = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]])
    return str(FiniteChannel(task, 0.1, ch).save(tmp_path / "m.pt"))


def releases(server, path, seed):
    mech = FiniteChannel.__new__(FiniteChannel)
    server.attach(mech, "k", path, [])
    rng = np.random.default_rng(seed)
    z = mech.release(np.arange(3).repeat(400), rng)
    return z, rng.bit_generator.state


def test_a_zygote_server_releases_what_a_fresh_server_releases_and_exits_when_closed(saved):
    z = zy.Zygote()
    try:
        zy.use_zygote(z.address)
        forked = ReleaseServer(1)
        assert isinstance(forked.proc, zy.ZygoteChild)  # it came from the zygote, not a fresh interpreter
        zy.use_zygote(None)
        fresh = ReleaseServer(1)
        assert not isinstance(fresh.proc, zy.ZygoteChild)
        (z1, s1), (z2, s2) = releases(forked, saved, 5), releases(fresh, saved, 5)
        assert np.array_equal(z1, z2) and s1 == s2  # same labels, generator left in the same state
        assert set(np.unique(z1)) == {0, 1, 2}
        assert forked.alive()
        forked.close()
        assert forked.proc.wait(timeout=10) == -1 and not forked.alive()
        fresh.close()
    finally:
        zy.use_zygote(None)
        z.close()


def test_the_zygote_refuses_a_bad_request_and_goes_on():
    z = zy.Zygote()
    try:
        zy.use_zygote(z.address)
        sock = zy.connect(z.address)
        assert sock is not None
        with sock:
            sock.sendall(json.dumps({"parent": os.getpid()}).encode())  # no threads, no descriptors: refused
            assert sock.recv(100) == b""  # closed without forking
        child = zy.fork_server(1)  # and it goes on serving
        assert child is not None and child.pid != os.getpid()
        assert child.stdout.readline() == b'{"ok": true, "ready": true, "array": false}\n'
        child.stdin.close()  # end of its requests: it exits
        assert child.wait(timeout=10) == -1
    finally:
        zy.use_zygote(None)
        z.close()


def test_a_worker_sees_the_environment_of_its_run_not_that_of_an_earlier_one(tmp_path, monkeypatch):
    """Workers come from a forkserver that outlives a run (bench/backends/local.worker_context): each run's
    workers must still see that run's environment (e.g. its shared VAE directory), as spawned ones would."""
    from pathlib import Path

    from privbench.bench.run import run_cases
    from privbench.bench.store import read_records
    from privbench.bench.suites import make_case

    here = str(Path(__file__).parent)
    monkeypatch.syspath_prepend(here)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    case = make_case("t", "env", "binary", {"p": 0.5, "q": 0.25}, "useful", "mi", None,
                     "binary_only_plugin:EnvReporter", {}, [0.1], n_train=50, n_eval=50)
    seen = []
    for value in ("first", "second"):
        monkeypatch.setenv("PRIVBENCH_TEST_ENV", value)
        run_cases([case], tmp_path / value, jobs=1, progress="none")
        seen.append(read_records(tmp_path / value)["error"].iloc[0].split("PRIVBENCH_TEST_ENV=")[1].split()[0])
    assert seen == ["first", "second"]

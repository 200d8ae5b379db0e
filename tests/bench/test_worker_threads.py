"""Local workers train with one torch thread unless ``--threads`` says otherwise (issue 13)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from privbench.bench.run import run_cases
from privbench.bench.store import read_records
from privbench.bench.suites import make_case
from privbench.datasets.errors import InputError

HERE = Path(__file__).parent


def reported_threads(tmp_path, name, **options):
    case = make_case("t", "threads", "binary", {"p": 0.5, "q": 0.25}, "useful", "mi", None,
                     "binary_only_plugin:ThreadReporter", {}, [0.1], n_train=50, n_eval=50)
    run_cases([case], tmp_path / name, jobs=1, progress="none", **options)
    error = read_records(tmp_path / name)["error"].iloc[0]
    return int(error.split("torch threads=")[1].split()[0].strip("()"))


def test_a_worker_process_trains_with_one_thread_by_default(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    assert reported_threads(tmp_path, "default") == 1  # was cores/jobs: 2 or more on a 2-core machine


class Started(Exception):
    pass


@pytest.mark.parametrize("options, expected", [({}, 1), ({"threads": 3}, 3)])
def test_threads_reach_the_worker_processes(tmp_path, monkeypatch, options, expected):
    """``run_cases(threads=)`` -> backend -> each worker's start-up (a stand-in worker: nothing is spawned)."""
    from privbench.bench.backends import local

    seen = []

    def fake_worker(ctx, threads, warm=(), zygote=None):
        seen.append(threads)
        raise Started

    monkeypatch.setattr(local, "_Worker", fake_worker)
    case = make_case("t", "threads", "binary", {"p": 0.5, "q": 0.25}, "useful", "mi", None, "identity", {}, [0.1],
                     n_train=50, n_eval=50)
    with pytest.raises(Started):
        run_cases([case], tmp_path / "run", jobs=1, progress="none", **options)
    assert seen == [expected]


@pytest.mark.parametrize("options, match", [
    ({"threads": 0}, "threads=0"),
    ({"threads": 2, "backend": "dask"}, "--threads applies to the local backend"),
])
def test_bad_threads_are_refused(tmp_path, options, match):
    with pytest.raises(InputError, match=match):
        run_cases([], tmp_path / "x", progress="none", **options)

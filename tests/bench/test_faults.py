"""Faults lose nothing: a full disk, kill -9 then --resume (bit-identical numbers), an unreachable scheduler.

(Two concurrent runs into one directory: tests/bench/test_runner.py, with kill -9 and two resumers.)
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from privbench.bench.cli import main
from privbench.bench.store import read_records

NUMBERS = ["case_id", "leakage", "distortion", "optimum_at_distortion", "optimum_at_budget", "gap", "overshoot",
           "seed", "status"]
ADHOC = ["run", "--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "full",
         "--learner", "randomized-response", "--n-train", "300", "--n-eval", "300", "--jobs", "1", "--quiet"]


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "claims" not in p.parts}


def adhoc_cases(budgets):
    from privbench.bench.suites import adhoc_suite

    return adhoc_suite("symmetric-pair", {"m": "3", "p": "0.3"}, "full", None, None, ["randomized-response"], {},
                       budgets, n_train=300, n_eval=300).cases


def assert_same_as_uninterrupted(out: Path, cases) -> None:
    """Every case stored exactly once, ok, with the numbers of a fresh uninterrupted in-process execution."""
    from privbench.bench.run import execute_case

    every = read_records(out, all_attempts=True).set_index("case_id")
    fresh = [row for case in cases for row in execute_case(case, "cpu")]
    assert every.index.is_unique and sorted(every.index) == sorted(r["case_id"] for r in fresh)
    for row in fresh:
        for col in NUMBERS[1:]:
            assert every.loc[row["case_id"], col] == row[col], (col, row["case_id"])  # bit-identical


def test_full_disk_is_one_line_exit_74_and_loses_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "res"
    assert main([*ADHOC, "--budget", "0.1", "--out", str(out)]) == 0
    stored = {k: v for k, v in files(out).items() if k.startswith("records/")}
    capsys.readouterr()

    real_fsync = os.fsync

    def full(fd):  # the disk fills up: flushing a results part fails (as fsync does: no file name)
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".parquet"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    rc = main([*ADHOC, "--budget", "0.1", "--budget", "0.3", "--out", str(out), "--resume"])
    monkeypatch.setattr(os, "fsync", real_fsync)
    err = capsys.readouterr().err
    assert rc == 74
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and str(out) in lines[0], err
    assert "Traceback" not in err
    after = files(out)
    assert {k: after.get(k) for k in stored} == stored  # nothing stored changed
    assert not [k for k in after if "/.tmp-" in k or k.startswith(".tmp-")]  # no half-written file left
    # space again: --resume completes, and the numbers equal an uninterrupted run's
    assert main([*ADHOC, "--budget", "0.1", "--budget", "0.3", "--out", str(out), "--resume"]) == 0
    assert_same_as_uninterrupted(out, adhoc_cases([0.1, 0.3]))


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs (root only; skipped where mounting is not allowed)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("a real small filesystem needs root and mount")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_really_full_filesystem_is_exit_74_and_loses_nothing(small_disk, capsys):
    out = small_disk / "res"
    assert main([*ADHOC, "--budget", "0.1", "--out", str(out)]) == 0
    stored = files(out)
    with open(small_disk / "filler", "wb") as fh:  # fill the disk to the last byte
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    capsys.readouterr()
    rc = main([*ADHOC, "--budget", "0.1", "--budget", "0.3", "--out", str(out), "--resume"])
    err = capsys.readouterr().err
    assert rc == 74 and len(err.strip().splitlines()) == 1 and "No space left on device" in err
    assert str(out) in err and "Traceback" not in err
    after = files(out)
    assert {k: after.get(k) for k in stored} == stored
    (small_disk / "filler").unlink()
    assert main([*ADHOC, "--budget", "0.1", "--budget", "0.3", "--out", str(out), "--resume"]) == 0
    assert len(read_records(out)) == 2


def test_a_refused_output_file_is_never_replaced(tmp_path, capsys):
    out = tmp_path / "res"
    assert main([*ADHOC, "--budget", "0.1", "--out", str(out)]) == 0
    if os.geteuid() == 0:  # a device node (the atomic rename once removed one)
        dev = tmp_path / "null"
        os.mknod(dev, 0o020666, os.makedev(1, 3))
    else:
        dev = tmp_path / "fifo"
        os.mkfifo(dev)
    capsys.readouterr()
    for flag in ("--html", "--markdown"):
        assert main(["report", str(out), flag, str(dev)]) == 2
        err = capsys.readouterr().err
        assert "not a regular file" in err and len(err.strip().splitlines()) == 1
        assert dev.exists() and not dev.is_file()
    assert main(["report", str(out), "--markdown", ""]) == 2
    assert not (out / "report.md").exists()


LEARNER = textwrap.dedent("""
    import time
    from privbench.learners.baselines import RandomizedResponse

    class Slow(RandomizedResponse):
        name = "fault-slow"
        def __init__(self, seconds=0.6):
            self.seconds = seconds
        def _fit(self, samples, task, budgets, seed, device):
            time.sleep(self.seconds)
            return super()._fit(samples, task, budgets, seed, device)
""")
SUITE = textwrap.dedent("""
    reps: 4
    n_train: 300
    n_eval: 300
    learners: {"fault_learners:Slow": {}}
    experiments:
      - scenario: symmetric-pair
        params: {m: 3, p: 0.3}
        observation: full
        privacy: mi
        budgets: [0.1, 0.3]
""")


def parts(out: Path) -> int:
    return len(list((out / "records").glob("part-*"))) if (out / "records").is_dir() else 0


@pytest.mark.slow
def test_kill_9_at_a_random_moment_then_resume_is_bit_identical(tmp_path, monkeypatch):
    import random

    (tmp_path / "fault_learners.py").write_text(LEARNER)
    (tmp_path / "suite.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "privbench.bench.cli", "run", "--suite", "suite.yaml", "--jobs", "1", "--quiet"]
    rng = random.Random(11)  # fixed: the same "random" moments on every run
    out = tmp_path / "res"
    proc = subprocess.Popen([*cmd, "--out", "res"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and parts(out) < 1:  # the first case finished ...
        time.sleep(0.05)
    time.sleep(rng.uniform(0.0, 0.6))  # ... and somewhere inside the next one
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 1 <= parts(out) < 4, "the kill must land mid-run"
    assert subprocess.run([*cmd, "--out", "res", "--resume"], capture_output=True).returncode == 0
    from privbench.bench.suites import load_suite

    assert_same_as_uninterrupted(out, load_suite("suite.yaml").cases)


def test_unreachable_dask_scheduler_is_one_line_within_bounded_time(tmp_path, capsys):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    t0 = time.perf_counter()
    rc = main([*ADHOC, "--budget", "0.1", "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
               "--out", str(tmp_path / "res")])
    took = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert rc == 2 and "unreachable" in err and len(err.strip().splitlines()) == 1
    assert took < 60  # a bound against hanging, not a timing goal
    assert not (tmp_path / "res").exists()  # refused before the results directory is touched

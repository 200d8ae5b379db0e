"""Files privbench writes get the mode a plain open() would: 0644 under umask 022, 0600 under 077."""

from __future__ import annotations

import os
import stat

import pytest

from privbench.bench.store import ResultsDir, atomic_write_text
from privbench.datasets.files import current_umask


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


EXPECTED = {0o022: 0o644, 0o077: 0o600, 0o002: 0o664}


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_umask_is_read_without_being_changed(umask):
    assert current_umask() == umask
    assert current_umask() == umask


def test_reports_manifests_and_csv_follow_the_umask(tmp_path, umask):
    # atomic_write_text writes reports, manifests, CSV exports and baseline files
    atomic_write_text(tmp_path / "report.html", "<html></html>")
    assert mode(tmp_path / "report.html") == EXPECTED[umask]
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what the rest of the system does with this umask
    assert mode(tmp_path / "report.html") == mode(plain)


def test_parts_and_manifests_of_a_results_directory_follow_the_umask(tmp_path, umask):
    from privbench.bench.records import Record

    store = ResultsDir(tmp_path / "out")
    store.write_manifest("run1", {"run_id": "run1"})
    manifest = next((tmp_path / "out" / "runs").glob("*.json"))
    assert mode(manifest) == EXPECTED[umask]
    part = store.write([Record(case_id="c", status="ok", learner="x", budget=0.1, seed=1, rep=0, n_train=2,
                               n_eval=2)], "key", "run1")
    assert mode(part) == EXPECTED[umask]


def test_saved_mechanism_files_follow_the_umask(tmp_path, umask):
    import numpy as np

    from privbench.datasets import task_for
    from privbench.datasets.scenarios import SymmetricPair
    from privbench.learners import available

    sc = SymmetricPair(3, 0.3)
    mech = available()["randomized-response"]().fit(sc.sample(64, np.random.default_rng(0)),
                                                    task_for(sc, "full", "mi"), 0.3, seed=3, device="cpu")
    path = mech.save(tmp_path / "m.pt")
    assert mode(path) == EXPECTED[umask]

"""Bundles: a case's repetitions and training-set sizes handed to one worker and trained with one fit_many.

The rows of a bundled run are checked against each case run alone (execute_case: one fit per
case), and a bundle whose worker dies records every one of its cases as failed.
"""

from __future__ import annotations

import os
import textwrap

import numpy as np

from privbench.bench.bundles import bundle_cases
from privbench.bench.run import execute_case, run_cases
from privbench.bench.store import read_records
from privbench.bench.suites import make_case

LINEAR = {"steps": 30, "batch_size": 64, "max_restarts": 0}


def _case(learner="ppan-linear", lp=None, rep=0, budgets=(0.1, 0.4), n_train=500):
    return make_case("t", "e", "gaussian-scalar", {"rho": 0.8}, "full", "mi", None, learner,
                     LINEAR if lp is None else lp, list(budgets), rep=rep, n_train=n_train, n_eval=1000)


def test_bundles_are_the_repetitions_and_sizes_of_a_batching_learner():
    reps = [_case(rep=0), _case(rep=1, n_train=2000), _case(rep=2)]
    other = [_case("gaussian-noise", {}, rep=r) for r in range(2)]
    fewer = _case(rep=3, budgets=(0.1,))  # budgets left to run differ: not the same bundle
    got = bundle_cases([reps[0], other[0], reps[1], fewer, other[1], reps[2]])
    assert [[c.key for c in b] for b in got] == [[c.key for c in reps], [other[0].key], [fewer.key], [other[1].key]]
    assert [len(b) for b in bundle_cases(reps, max_size=2)] == [2, 1]


def test_a_bundled_run_gives_each_case_the_rows_of_its_own_run(tmp_path):
    cases = [_case(rep=0), _case(rep=1), _case(rep=0, n_train=800)]  # two sizes: one bundle, one network
    summary = run_cases(cases, tmp_path / "out", jobs=1, device="cpu", progress="none")
    assert summary.counts["ok"] == 6
    stored = read_records(tmp_path / "out").set_index("case_id")
    for case in cases:
        for row in execute_case(case, "cpu"):
            got = stored.loc[row["case_id"]]
            assert got["status"] == row["status"] == "ok"
            for col in ("leakage", "distortion", "gap"):
                np.testing.assert_allclose(got[col], row[col], rtol=1e-4, atol=1e-6, err_msg=col)
    assert len(set(stored["leakage"].round(6))) == 6  # every case and budget its own numbers


DIE = textwrap.dedent("""
    import os
    from privbench.learners.baselines import Identity

    class DieBundled(Identity):
        name = "test-die-bundled"
        batches_fits = True
        def _fit(self, samples, task, budgets, seed, device):
            os._exit(7)
""")


def test_a_bundle_whose_worker_dies_fails_every_case(tmp_path, monkeypatch):
    d = tmp_path / "plug"
    d.mkdir()
    (d / "pbt_bundled.py").write_text(DIE)
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")]))
    cases = [_case("pbt_bundled:DieBundled", {}, rep=r, budgets=(0.1,)) for r in range(2)]
    assert [len(b) for b in bundle_cases(cases)] == [2]
    summary = run_cases(cases, tmp_path / "out", jobs=1, device="cpu", progress="none")
    assert summary.counts["failed"] == 2
    stored = read_records(tmp_path / "out")
    assert set(stored["status"]) == {"failed"}
    assert all("exit code 7" in e for e in stored["error"])


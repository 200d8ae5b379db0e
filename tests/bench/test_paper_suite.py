"""The paper suite: every experiment the issue names, --only, and a miniature of each run end to end."""

from __future__ import annotations

import pytest

from privbench.bench.cli import main
from privbench.bench.suites import load_suite, select_experiments, smoke_suite
from privbench.datasets.errors import InputError

# the experiments of the paper-reproduction issue (section 1) and its two studies (section 2)
REQUIRED = [
    "ppan-fig3/useful", "ppan-fig3/full", "ppan-fig4", "ppan-fig5/useful", "ppan-fig5/full", "ppan-fig6",
    "ppan-images", "gap-fig5/p0.5", "gap-fig5/p0.75", "gap-tables", "chi2-fig4/independent",
    "chi2-fig4/correlated", "chi2-vae", "filter-mnist/digit", "filter-mnist/ge5-parity", "filter-two-user",
    "filter-adult", "filter-abalone",
    "mismatch/binary-gmm", "mismatch/gaussian-scalar", "sample-complexity/symmetric-pair",
    "sample-complexity/binary", "sample-complexity/gaussian-scalar", "sample-complexity/gaussian-vector",
]


@pytest.fixture(scope="module")
def paper():
    return load_suite("paper")


def test_every_experiment_is_declared_with_its_claim_and_five_seeds(paper):
    from privbench.bench.reports import suite_metadata
    import pandas as pd

    names = {c.experiment for c in paper.cases}
    assert set(REQUIRED) <= names, sorted(set(REQUIRED) - names)
    _, meta, order = suite_metadata(pd.DataFrame({"suite": ["paper"]}))
    for name in names:
        assert meta[name].get("figure") and meta[name].get("claim"), name
        assert meta[name].get("differs"), f"{name}: the report's 'where we differ' sentence is missing"
    for c in paper.cases:
        assert {r.rep for r in paper.cases if r.key == c.key} == {c.rep}  # distinct cases
    reps = {}
    for c in paper.cases:
        reps.setdefault((c.experiment, c.learner, c.scenario, c.params_json, c.observation, c.privacy,
                         c.n_train), set()).add(c.rep)
    assert min(len(v) for v in reps.values()) >= 5
    # the studies: sample complexity spans 300 ... 100,000 training samples with the plug-in beside each learner
    sc = [c for c in paper.cases if c.experiment.startswith("sample-complexity/")]
    assert {c.n_train for c in sc} == {300, 1000, 3000, 10000, 30000, 100000}
    for exp in {c.experiment for c in sc}:
        assert "plugin" in {c.learner for c in sc if c.experiment == exp}, exp
    assert all(c.evaluators == "mismatch" for c in paper.cases if c.experiment.startswith("mismatch/"))
    assert {c.protocol for c in paper.cases if c.experiment == "filter-two-user"} == {"two-user"}


def test_only_selects_an_experiment_and_its_children(paper):
    fig5 = select_experiments(paper, ["ppan-fig5"])
    assert {c.experiment for c in fig5.cases} == {"ppan-fig5/useful", "ppan-fig5/full"}
    one = select_experiments(paper, ["gap-tables", "ppan-fig4"])
    assert {c.experiment for c in one.cases} == {"gap-tables", "ppan-fig4"}
    with pytest.raises(InputError, match="--only 'ppan-fig' matches no experiment .*ppan-fig3/useful"):
        select_experiments(paper, ["ppan-fig"])


def test_only_and_smoke_errors_from_the_cli(capsys, tmp_path):
    assert main(["run", "--suite", "paper", "--only", "nope", "--out", str(tmp_path / "r")]) == 2
    assert "--only 'nope' matches no experiment" in capsys.readouterr().err
    assert main(["run", "--scenario", "binary", "--param", "p=0.5", "--param", "q=0.25", "--learner",
                 "identity", "--budget", "0.1", "--only", "x", "--out", str(tmp_path / "r")]) == 2
    assert "--only applies to a --suite" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_smoke_suite_is_one_small_case_per_experiment_and_learner(paper):
    smoke = smoke_suite(paper)
    assert {c.experiment for c in smoke.cases} == {c.experiment for c in paper.cases}
    assert all(c.rep == 0 and c.n_train <= 300 and len(c.budgets) <= 2 for c in smoke.cases)
    pairs = {(c.experiment, c.learner) for c in paper.cases}
    assert {(c.experiment, c.learner) for c in smoke.cases} == pairs
    # distinct cases stay distinct (the runner claims, and the store keeps rows, by key and case id)
    assert len({c.key for c in smoke.cases}) == len(smoke.cases)
    ids = [i for c in smoke.cases for i in c.case_ids()]
    assert len(set(ids)) == len(ids)


@pytest.mark.slow
def test_miniature_of_every_experiment_runs_and_reports(tmp_path, capsys):
    """CI's miniature of the paper suite: every experiment's code path, stored, then the paper report."""
    out = tmp_path / "paper-smoke"
    assert main(["run", "--suite", "paper", "--smoke", "--out", str(out), "--device", "cpu", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert " 0 failed, 0 timeout" in printed, printed
    assert main(["report", str(out)]) == 0
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for name in REQUIRED:
        assert f"## {name}:" in md, name
    assert "At a glance: strict gap per learner and experiment" in md and "<img" in html
    assert "Best learner within budget per experiment" in md and "Legend of marks" in md and "## Contents" in md
    assert "Learned parameters vs GAP Tables 2-5" in md
    assert "Gap vs training-set size" in md
    assert "Attacker mismatch" in md
    assert "Beside the chi-square paper's Tables I-II" in md


def test_paper_reference_holds_gap_tables_2_to_5():
    from privbench.bench.reports import reference_values

    tables = reference_values()["gap_tables"]
    assert sorted(tables) == ["prior=0.5,sigma0=1", "prior=0.5,sigma0=2", "prior=0.75,sigma0=1",
                              "prior=0.75,sigma0=2"]
    assert all(sorted(t) == list(range(1, 10)) for t in tables.values())
    assert tables["prior=0.75,sigma0=2"][6] == {"beta0": 3.3079, "beta1": 1.1027, "gamma0": 0.0094,
                                               "gamma1": 1.7707, "p_detect": 0.7606, "theory": 0.75}


def test_sample_complexity_split_pairs_learner_and_plugin_by_size_budget_and_seed():
    import pandas as pd

    from privbench.bench.reports import sample_complexity_frame

    rows = []
    for lr, base in (("ppan", 0.05), ("plugin", 0.03)):
        for n in (300, 1000):
            for b in (0.1, 0.3):
                for rep in (0, 1):
                    rows.append({"status": "ok", "learner": lr, "n_train": n, "budget": b, "rep": rep,
                                 "gap": base / n * 1000 + rep * 0.001 + b})
    f = sample_complexity_frame(pd.DataFrame(rows))
    assert len(f) == 8 and set(f["learner"]) == {"ppan"}
    r = f[(f.n_train == 300) & (f.budget == 0.3) & (f.rep == 1)].iloc[0]
    assert r.total == pytest.approx(0.05 / 300 * 1000 + 0.001 + 0.3)
    assert r.finite_sample == pytest.approx(0.03 / 300 * 1000 + 0.001 + 0.3)
    assert r.optimisation == pytest.approx((0.05 - 0.03) / 300 * 1000)

"""Scenarios with no known optimum through the bench: fresh-classifier evaluators, NaN gaps, reports."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from privbench.bench.cli import main
from privbench.bench.evaluators import evaluate, headline
from privbench.bench.evaluators import FreshClassifier, utility_accuracies, utility_accuracy
from privbench.bench.suites import make_case, parse_suite
from privbench.datasets import InputError, make_scenario, task_for
from privbench.datasets.labelled import image_partition
from privbench.datasets.real import load_digits
from privbench.learners import make_learner


def _fit(learner, sc, obs="useful", budgets=(0.5,), n=600, **params):
    task = task_for(sc, obs, "map")
    return make_learner(learner, **params).fit(sc.sample(n, np.random.default_rng(0)), task, list(budgets), seed=1)


def _by_metric(evals):
    """The first evaluation of each metric (the privacy classifier's map and mi)."""
    out = {}
    for e in evals:
        out.setdefault(e.metric, e)
    return out


@pytest.fixture(scope="module")
def digits():
    return make_scenario("digits", {"labeling": "digit"})


@pytest.fixture(scope="module")
def identity_evals(digits):
    return evaluate(_fit("identity", digits)[0], digits, "useful", "map", n_eval=5000, seed=3)


def test_identity_release_reveals_the_digit(identity_evals, digits):
    ev = _by_metric(identity_evals)
    assert set(ev) == {"map", "mi", "utility", "distortion"}
    n_held = len(image_partition("digits", "digit")[3])
    assert ev["map"].detail["n_test"] == n_held == 359  # n_eval is capped by the held-out partition
    assert ev["map"].detail["n_train"] == 1438  # the attacker trains on every train row
    assert ev["map"].value > 0.8 and ev["map"].kind == "lower-bound"
    p = ev["map"].value
    assert ev["map"].stderr == pytest.approx(math.sqrt(p * (1 - p) / 359))
    acc = ev["utility"].detail["accuracy"]
    assert set(acc) == {"digit", "circle", "ge5", "parity"} and acc["digit"] > 0.8
    assert ev["utility"].detail["label"] == "circle" and ev["utility"].value == acc["circle"]
    assert all(acc[k] > ev["utility"].detail["majority"][k] + 0.2 for k in acc)
    # MI bound: positive, below H(S) = log 10 (almost: uniform digits)
    assert 1.0 < ev["mi"].value < math.log(10) + 3 * ev["mi"].stderr
    best = max((e for e in identity_evals if e.metric == "map"), key=lambda e: e.value)
    assert headline(identity_evals, "map").value == best.value


def test_utility_classifier_reads_s_as_a_second_attacker(identity_evals):
    """S is read twice, by the privacy classifier (S alone) and by the utility classifier (every
    label, one shared hidden layer); the headline may be neither lower than the other."""
    by = {(e.metric, e.evaluator): e for e in identity_evals}
    shared_map, shared_mi = by[("map", "fresh-classifier-shared")], by[("mi", "fresh-classifier-shared")]
    util = by[("utility", "fresh-classifier")]
    assert shared_map.kind == shared_mi.kind == "lower-bound" and shared_map.detail["label"] == "digit"
    assert shared_map.value == util.detail["accuracy"]["digit"]  # the same network's reading
    assert shared_map.detail["input"] == util.detail["inputs"]["digit"]
    assert shared_map.detail["n_test"] == 359
    assert shared_map.stderr == pytest.approx(math.sqrt(shared_map.value * (1 - shared_map.value) / 359))
    assert 1.0 < shared_mi.value < math.log(10) + 3 * shared_mi.stderr
    assert shared_mi.detail["h_s"] == by[("mi", "fresh-classifier")].detail["h_s"]
    assert by[("mi", "fresh-classifier")].detail["note"].startswith("H(S) + mean log Q(S|Z)")
    assert by[("map", "fresh-classifier")].detail["note"].startswith("held-out accuracy")
    for metric in ("map", "mi"):
        top = headline(identity_evals, metric).value
        assert top >= by[(metric, "fresh-classifier")].value and top >= by[(metric, "fresh-classifier-shared")].value


def test_identity_distortion_is_the_pixel_entropy(identity_evals):
    held = image_partition("digits", "digit")[1].flat
    u = held
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where((u > 0) & (u < 1), -(u * np.log(u) + (1 - u) * np.log(1 - u)), 0.0)
    d = _by_metric(identity_evals)["distortion"]
    assert d.value == pytest.approx(h.mean(axis=1).mean(), rel=1e-12)
    assert d.evaluator == "sample-distortion" and d.detail["n"] == 359


def test_preview_holds_held_out_releases_spread_over_the_partition(identity_evals):
    prev = _by_metric(identity_evals)["map"].detail["preview"]
    rows = image_partition("digits", "digit")[3]
    pick = np.linspace(0, len(rows) - 1, 8).round().astype(int)
    assert prev["dataset_rows"] == rows[pick].tolist() and prev["heldout_rows"] == pick.tolist()
    assert prev["shape"] == [8, 8]
    # the identity releases the originals themselves
    np.testing.assert_allclose(prev["images"], np.round(load_digits().flat[rows[pick]], 2))
    json.dumps(identity_evals[0].to_dict())  # JSON-able


def test_constant_release_is_at_the_majority(digits):
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    evals = evaluate(_fit("constant", sc)[0], sc, "useful", "mi", n_eval=5000, seed=4)
    ev = _by_metric(evals)
    test_s = image_partition("digits", "ge5-parity")[1].s
    majority = np.bincount(test_s).max() / len(test_s)
    assert ev["map"].detail["majority"] == pytest.approx(majority)
    assert abs(ev["map"].value - majority) <= 3 * math.sqrt(majority * (1 - majority) / len(test_s))
    for label in ("circle", "ge5", "parity"):
        m = ev["utility"].detail["majority"][label]
        assert abs(ev["utility"].detail["accuracy"][label] - m) <= 3 * math.sqrt(m * (1 - m) / len(test_s))
    assert abs(ev["mi"].value) < 0.05  # nothing to learn from a constant
    # deterministic: the same seed gives the same numbers
    again = evaluate(_fit("constant", sc)[0], sc, "useful", "mi", n_eval=5000, seed=4)
    assert [e.value for e in again] == [e.value for e in evals]


def test_gaussian_noise_on_images_spends_its_budget(digits):
    mech = _fit("gaussian-noise", digits, budgets=(0.4,), n=1438)[0]
    assert mech.info["train_distortion"] == pytest.approx(0.4, abs=1e-3)
    ev = _by_metric(evaluate(mech, digits, "useful", "map", n_eval=400, seed=5))
    assert abs(ev["distortion"].value - 0.4) < 0.03
    # below the identity's own cost the noise is off (and the case overshoots)
    low = _fit("gaussian-noise", digits, budgets=(0.05,))[0]
    assert low.sigma == 0.0


def test_additive_noise_mechanism_saves_and_loads(tmp_path, digits):
    from privbench.learners import load_mechanism

    sc = make_scenario("hypothesis-testing")
    for scenario, obs in ((digits, "full"), (sc, "useful")):
        mech = _fit("gaussian-noise", scenario, obs, budgets=(0.4,), n=300)[0]
        back = load_mechanism(mech.save(tmp_path / f"{scenario.name}.pt"))
        assert back.params() == mech.params() and back.sigma > 0
        w = task_for(scenario, obs, "map").observe(scenario.sample(20, np.random.default_rng(1)))
        np.testing.assert_array_equal(back.release(w, np.random.default_rng(2)),
                                      mech.release(w, np.random.default_rng(2)))
    assert mech.params()["lo"] is None  # hypothesis-testing: no clipping


def test_hypothesis_testing_evaluators():
    sc = make_scenario("hypothesis-testing", {"correlation": "correlated"})
    ident = _by_metric(evaluate(_fit("identity", sc, n=2000)[0], sc, "useful", "map", n_eval=3000, seed=6))
    assert ident["map"].detail["n_train"] == ident["map"].detail["n_test"] == 3000
    assert ident["map"].value > 0.75 and ident["utility"].detail["label"] == "u"
    assert set(ident["utility"].detail["accuracy"]) == {"s", "u"}
    assert ident["distortion"].value == 0.0
    const = _by_metric(evaluate(_fit("constant", sc, "full", n=2000)[0], sc, "full", "mi", n_eval=3000, seed=6))
    assert abs(const["map"].value - 0.5) < 3 * math.sqrt(0.25 / 3000) + 0.01
    assert abs(const["mi"].value) < 0.02
    noise = _by_metric(evaluate(_fit("gaussian-noise", sc, budgets=(2.0,), n=2000)[0], sc, "useful", "map",
                                n_eval=3000, seed=6))
    assert abs(noise["distortion"].value - 2.0) < 4 * noise["distortion"].stderr
    assert const["map"].value < noise["map"].value <= ident["map"].value + 3 * ident["map"].stderr


def test_chi2_sanitizer_serves_hypothesis_testing():
    sc = make_scenario("hypothesis-testing", {"correlation": "independent"})
    task = task_for(sc, "useful", "chi2")
    mech = make_learner("chi2-sanitizer", steps=20, batch_size=64, hidden=8).fit(
        sc.sample(500, np.random.default_rng(0)), task, [1.0], seed=0)[0]
    ev = _by_metric(evaluate(mech, sc, "useful", "map", n_eval=500, seed=1))
    assert ev["distortion"].value == pytest.approx(1.0, rel=0.3)


def test_bad_evaluation_requests(digits):
    mech = _fit("constant", digits)[0]
    with pytest.raises(InputError, match="privacy='chi2' has no evaluator for digits"):
        evaluate(mech, digits, "useful", "chi2")
    with pytest.raises(InputError, match="evaluators='mismatch' is not available for digits"):
        evaluate(mech, digits, "useful", "map", evaluators="mismatch")
    with pytest.raises(InputError, match="n_eval=10 must be an integer >= 200"):
        evaluate(mech, digits, "useful", "map", n_eval=10)
    other = make_scenario("digits", {"labeling": "ge5-parity"})
    with pytest.raises(InputError, match="differs in: n_s"):
        evaluate(mech, other, "useful", "map")


def test_utility_accuracy_readers(identity_evals):
    text = json.dumps([e.to_dict() for e in identity_evals])
    acc = utility_accuracies(text)
    assert acc == _by_metric(identity_evals)["utility"].detail["accuracy"]
    assert utility_accuracy(text, "parity") == acc["parity"] and utility_accuracy(identity_evals) == acc["circle"]
    assert math.isnan(utility_accuracy([])) and utility_accuracies("[]") == {}
    with pytest.raises(InputError, match="label='u' has no utility accuracy"):
        utility_accuracy(identity_evals, "u")


def test_classifier_learns_a_separable_problem():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 3))
    y = (x[:, 0] + x[:, 1] > 0).astype(int)
    clf = FreshClassifier({"y": 2}, seed=0).fit(x[:1500], {"y": y[:1500]})
    acc = np.mean(clf.log_proba(x[1500:])["y"].argmax(1) == y[1500:])
    assert acc > 0.95
    again = FreshClassifier({"y": 2}, seed=0).fit(x[:1500], {"y": y[:1500]})
    np.testing.assert_array_equal(again.log_proba(x[1500:])["y"], clf.log_proba(x[1500:])["y"])


# --------------------------------------------------------------------------
# cases, suites, the CLI
# --------------------------------------------------------------------------


def test_cases_without_an_optimum():
    c = make_case("s", "e", "digits", {"labeling": "ge5-parity"}, "useful", None, None, "identity", {}, [0.3],
                  n_train=None)
    assert c.privacy == "map" and c.n_train == 1438  # the train partition caps the default
    with pytest.raises(InputError, match="maximum 1438"):
        make_case("s", "e", "digits", {}, "useful", "map", None, "identity", {}, [0.3], n_train=1500)
    with pytest.raises(InputError, match="privacy='chi2' has no evaluator for digits"):
        make_case("s", "e", "digits", {}, "useful", "chi2", None, "identity", {}, [0.3], n_train=100)
    with pytest.raises(InputError, match="digits needs an observation model"):
        make_case("s", "e", "digits", {}, None, "map", None, "identity", {}, [0.3], n_train=100)
    with pytest.raises(InputError, match="does not serve"):
        make_case("s", "e", "digits", {}, "useful", "map", None, "randomized-response", {}, [0.3], n_train=100)
    suite = parse_suite({"n_eval": 400, "learners": {"identity": {}, "constant": {}, "gaussian-noise": {},
                                                     "randomized-response": {}},
                         "experiments": [{"name": "img", "scenario": "digits", "params": {"labeling": "digit"},
                                          "observation": "useful", "privacy": ["map", "mi"], "budgets": [0.3]},
                                         {"name": "ht", "scenario": "hypothesis-testing",
                                          "params": {"correlation": "correlated"}, "observation": "full",
                                          "privacy": "map", "budgets": [1.0], "n_train": 1000}]}, name="t")
    got = {(c.experiment, c.learner, c.privacy, c.n_train) for c in suite.cases}
    assert got == {("img", l, p, 1438) for l in ("identity", "constant", "gaussian-noise") for p in ("map", "mi")} | {
        ("ht", l, "map", 1000) for l in ("identity", "constant", "gaussian-noise")}


def test_optimum_cli_refuses(capsys):
    assert main(["optimum", "mnist-subset", "--budget", "0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "mnist-subset has no known optimum" in err
    assert main(["optimum", "hypothesis-testing", "--budget", "1", "--observation", "useful"]) == 2
    assert main(["list", "scenarios"]) == 0
    out = capsys.readouterr().out
    assert "digits:" in out and "hypothesis-testing:" in out and "labeling" in out and "matrix_seed" in out


def test_run_and_report_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["run", "--scenario", "digits", "--param", "labeling=ge5-parity", "--learner", "identity",
               "--learner", "constant", "--learner", "gaussian-noise", "--budget", "0.3", "--observation", "useful",
               "--privacy", "map", "--n-eval", "200", "--out", str(out), "--jobs", "1", "--quiet"])
    assert rc == 0
    from privbench.bench.store import read_records

    df = read_records(out)
    assert len(df) == 3 and set(df["status"]) == {"ok"}
    assert df["gap"].isna().all() and df["optimum_at_budget"].isna().all()
    assert set(df["bound_kind"]) == {"none"} and not df["below_bound"].any()
    assert (df["n_train"] == 1438).all()
    r = df.set_index("learner")
    assert r.loc["constant", "overshoot"] == pytest.approx(r.loc["constant", "distortion"] - 0.3)
    assert r.loc["identity", "overshoot"] == 0.0  # 0.21 nats per pixel < 0.3
    assert r.loc["identity", "leakage"] > 0.9 and r.loc["identity", "leakage_evaluator"] == "fresh-classifier"
    assert utility_accuracy(r.loc["identity", "evaluations"], "parity") > 0.9
    assert main(["report", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "Learned points without a known optimum" in md and "utility parity" in md
    assert (out / "report.html").is_file() and list((out / "report_figures").glob("*.png"))
    # compare and check take NaN gaps
    assert main(["compare", str(out), str(out)]) == 0
    assert "n/a (no optimum)" in capsys.readouterr().out
    from privbench.bench.check import check_against, make_baselines
    from privbench.bench.reports import no_optimum_table
    from privbench.bench.reports.ranking import ranking_frame

    assert ranking_frame(df).empty and len(no_optimum_table(df)) == 3  # nothing to rank: no optimum
    failures, notes, checked = check_against(df, make_baselines(df, "t"))
    assert checked == 0 and len(failures) == 1 and "overshoots" in failures[0]  # the constant's overshoot
    assert isinstance(pd.DataFrame(no_optimum_table(df)), pd.DataFrame)


def test_hypothesis_testing_case_with_a_trained_learner():
    """chi2-sanitizer trains for chi2 (its only objective) and is scored by the fresh classifier's MAP."""
    from privbench.bench.run import execute_case

    case = make_case("s", "e", "hypothesis-testing", {"correlation": "correlated"}, "useful", "map", None,
                     "chi2-sanitizer", {"steps": 20, "batch_size": 64, "hidden": 8}, [0.5, 2.0], n_train=500,
                     n_eval=400)
    assert case.objective == "chi2" and case.training_privacy == "chi2"
    rows = execute_case(case, device="cpu")
    assert [r["status"] for r in rows] == ["ok", "ok"], [r.get("error") for r in rows]
    for r in rows:
        assert r["bound_kind"] == "none" and math.isnan(r["gap"]) and math.isnan(r["optimum_at_distortion"])
        assert r["leakage_evaluator"] in ("fresh-classifier", "fresh-classifier-shared") and 0.4 < r["leakage"] <= 1.0
        assert r["overshoot"] == max(0.0, r["distortion"] - r["budget"])
    # more noise, more distortion
    assert rows[1]["distortion"] > rows[0]["distortion"]


class _Writer:
    """A randomised release that also writes into the array it is given (as a cheater might)."""

    def release(self, w, rng):
        z = w + rng.normal(size=w.shape)
        w[:] = 0.0
        return z


def test_a_randomised_mechanism_is_released_again_for_its_classifiers(digits):
    from privbench.bench.evaluators import labelled

    task = task_for(digits, "useful", "map")
    w = np.random.default_rng(1).uniform(size=(50, 64))
    z = w + 1.0
    keep = w.copy()
    x, groups = labelled.fitting_releases(_Writer(), task, w, z, [3, 4])
    assert np.array_equal(w, keep)  # every release is made from a copy
    assert x.shape == (50 * labelled.RELEASES_PER_ROW, 64) and np.array_equal(x[:50], z)
    assert np.array_equal(groups, np.tile(np.arange(50), labelled.RELEASES_PER_ROW))
    assert not np.array_equal(x[50:100], x[100:150])  # fresh noise in each release


def test_a_deterministic_mechanism_is_released_once(digits):
    from privbench.bench.evaluators import labelled

    mech = _fit("identity", digits)[0]
    task = task_for(digits, "useful", "map")
    w = np.random.default_rng(1).uniform(size=(50, 64))
    x, groups = labelled.fitting_releases(mech, task, w, mech.release(w.copy(), np.random.default_rng(0)), [3, 4])
    assert groups is None and x.shape == (50, 64)


def test_noisy_releases_are_read_better_with_several_releases_per_training_row(digits, monkeypatch):
    """One release per row: the classifier learns that draw's noise (digits, gaussian-noise at budget 0.4,
    whose accuracy read 0.891 with one release per training row and 0.930 with four, at this seed)."""
    from privbench.bench.evaluators import labelled

    mech = _fit("gaussian-noise", digits, budgets=(0.4,))[0]
    reads, default = {}, labelled.RELEASES_PER_ROW
    for k in (1, default):
        monkeypatch.setattr(labelled, "RELEASES_PER_ROW", k)
        reads[k] = _by_metric(evaluate(mech, digits, "useful", "map", n_eval=5000, seed=3))["map"].value
    assert default == 4
    assert reads[4] >= reads[1] + 0.02

"""The attacker-mismatch study's fresh attackers (bench/evaluators/mismatch.py) and their hook in evaluate/runner.

Reference values come from the model, not from the code under test: the exact
MAP accuracy of a binary Gaussian mixture (theory.mixture, a closed form), its
mutual information by numerical quadrature here, the prior for a constant
release, and -1/2 log(1 - rho^2) for a scalar Gaussian pair.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from privbench.bench.evaluators.mismatch import ATTACKER_FAMILIES as FAMILIES, mismatch_evaluations
from privbench.bench.evaluators import Evaluation, evaluate, headline
from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners.mechanisms import LinearGaussian, MixtureShift
from privbench.theory.mixture import mechanism_accuracy

N = 20000


def _gmm_mi(p: float, mu: float, s0: float, s1: float) -> float:
    """I(S;U) of the mixture by quadrature: H(S) - E H(S|U)."""
    def cond_entropy_density(u: float) -> float:
        a, b = (1 - p) * stats.norm.pdf(u, -mu, s0), p * stats.norm.pdf(u, mu, s1)
        tot = a + b
        return -sum(x * math.log(x / tot) for x in (a, b) if x > 0)

    h = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    return h - integrate.quad(cond_entropy_density, -40, 40, limit=400)[0]


def _gmm_attack(params: dict, z_of: str, seed: int = 11):
    sc = make_scenario("binary-gmm", params)
    smp = sc.sample(N, np.random.default_rng(7))
    z = smp.u.reshape(-1, 1) if z_of == "identity" else np.full((N, 1), 0.3)
    prior = np.array([1 - sc.prior, sc.prior])
    evs = mismatch_evaluations(z, smp.s, True, np.log(prior)[smp.s], float(-(prior * np.log(prior)).sum()), seed)
    return sc, {(e.evaluator, e.metric): e for e in evs}


EQUAL = {"prior": 0.3, "mu": 1.0, "sigma0": 1.0, "sigma1": 1.0}
UNEQUAL = {"prior": 0.4, "mu": 0.5, "sigma0": 0.5, "sigma1": 2.0}  # quadratic MAP boundary: two crossings


def test_identity_release_attackers_reach_map_accuracy():
    """Equal variances: the MAP rule is a threshold, which every family can represent."""
    sc, ev = _gmm_attack(EQUAL, "identity")
    exact_acc = float(mechanism_accuracy(sc, 0.0, 0.0, 0.0, 0.0))
    exact_mi = _gmm_mi(0.3, 1.0, 1.0, 1.0)
    assert {k[0] for k in ev} == {f"attacker-{f}" for f in FAMILIES}
    for fam in FAMILIES:
        acc, mi = ev[(f"attacker-{fam}", "map")], ev[(f"attacker-{fam}", "mi")]
        assert acc.kind == mi.kind == "lower-bound" and acc.detail["study"] == mi.detail["study"] == "mismatch"
        assert acc.detail["n_train"] == N // 2 and acc.detail["n_test"] == N // 2
        assert acc.value <= exact_acc + 3 * acc.stderr, fam
        assert abs(acc.value - exact_acc) <= 4 * acc.stderr + 0.003, fam
        assert mi.value <= exact_mi + 3 * mi.stderr, fam
        assert mi.value >= exact_mi - 4 * mi.stderr - 0.01, fam


def test_nonlinear_posterior_separates_the_families():
    """Unequal variances: nonlinear attackers reach MAP, the linear one cannot; none exceeds MAP."""
    sc, ev = _gmm_attack(UNEQUAL, "identity")
    exact_acc = float(mechanism_accuracy(sc, 0.0, 0.0, 0.0, 0.0))
    for fam in FAMILIES:
        acc = ev[(f"attacker-{fam}", "map")]
        assert acc.value <= exact_acc + 3 * acc.stderr, fam
        if fam != "linear":
            assert abs(acc.value - exact_acc) <= 4 * acc.stderr + 0.005, fam
    lin = ev[("attacker-linear", "map")]
    assert lin.value < exact_acc - 5 * lin.stderr  # a threshold misses the second crossing


def test_constant_release_gives_the_prior():
    for params in (EQUAL, UNEQUAL):
        sc, ev = _gmm_attack(params, "constant")
        best = max(sc.prior, 1 - sc.prior)
        for fam in FAMILIES:
            acc, mi = ev[(f"attacker-{fam}", "map")], ev[(f"attacker-{fam}", "mi")]
            assert abs(acc.value - best) <= 3 * acc.stderr + 1e-9, fam
            assert mi.value <= 3 * mi.stderr + 1e-9, fam  # I(S;Z) = 0
            assert mi.value >= -0.005, fam  # the smoothing/floor costs little


def test_continuous_s_gaussian_head():
    rho = 0.8
    sc = make_scenario("gaussian-scalar", {"rho": rho})
    smp = sc.sample(N, np.random.default_rng(3))
    log_p = stats.norm.logpdf(smp.s.reshape(-1))
    evs = mismatch_evaluations(smp.u, smp.s, False, log_p, 0.5 * math.log(2 * math.pi * math.e), 5)
    exact = -0.5 * math.log(1 - rho**2)
    assert [e.evaluator for e in evs] == ["attacker-linear", "attacker-mlp-wide", "attacker-knn"]  # no gbt
    for e in evs:
        assert e.metric == "mi" and e.detail["study"] == "mismatch"
        assert e.value <= exact + 3 * e.stderr, e.evaluator
        assert e.value >= exact - 4 * e.stderr - 0.03, e.evaluator


def test_bad_input_is_refused():
    z, s = np.zeros((100, 1)), np.zeros(100, dtype=int)
    with pytest.raises(InputError, match="families"):
        mismatch_evaluations(z, s, True, np.zeros(100), 0.0, 0, families=("svm",))
    with pytest.raises(InputError, match="rows"):
        mismatch_evaluations(z, s[:50], True, np.zeros(100), 0.0, 0)
    with pytest.raises(InputError, match="seed"):
        mismatch_evaluations(z, s, True, np.zeros(100), 0.0, -1)
    with pytest.raises(InputError, match="NaN or inf"):
        mismatch_evaluations(np.full((100, 1), np.nan), s, True, np.zeros(100), 0.0, 0)
    sc = make_scenario("binary-gmm", EQUAL)
    mech = MixtureShift(task_for(sc, "useful", "map"), 1.0, 0.0, 0.0, 1.0, 1.0)
    with pytest.raises(InputError, match="evaluators='all'"):
        evaluate(mech, sc, "useful", "map", n_eval=400, evaluators="all")


def test_headline_ignores_the_study():
    """Same standard evaluations and the same headline with or without the study."""
    sc = make_scenario("binary-gmm", EQUAL)
    mech = MixtureShift(task_for(sc, "useful", "mi"), 1.0, 0.2, -0.2, 0.5, 0.5)  # no exact MI: sample headline
    plain = evaluate(mech, sc, "useful", "mi", n_eval=4000, seed=3)
    study = evaluate(mech, sc, "useful", "mi", n_eval=4000, seed=3, evaluators="mismatch")
    assert [e for e in study if not e.detail.get("study")] == plain
    assert {e.evaluator for e in study} - {e.evaluator for e in plain} == {f"attacker-{f}" for f in FAMILIES}
    for metric in ("mi", "map", "distortion"):
        assert headline(study, metric) == headline(plain, metric)
    # even an attacker with a larger value is never the headline
    top = Evaluation("mi", 9.0, "attacker-knn", "lower-bound", 0.01, {"study": "mismatch"})
    assert headline(plain + [top], "mi") == headline(plain, "mi")
    # Gaussian: the study comes before the distortion evaluations
    g = make_scenario("gaussian-scalar", {"rho": 0.6})
    lin = LinearGaussian(task_for(g, "useful", "mi"), 0.5, [[0.7]], [[0.0]], [[0.2]])
    evs = evaluate(lin, g, "useful", "mi", n_eval=2000, seed=1, evaluators="mismatch")
    kinds = [e.metric for e in evs]
    assert kinds.index("distortion") > max(i for i, e in enumerate(evs) if e.detail.get("study"))
    assert headline(evs, "mi").evaluator == "exact-linear-gaussian"


def test_runner_stores_study_and_mechanism_info(tmp_path):
    from privbench.bench.run import run_cases
    from privbench.bench.store import read_records
    from privbench.bench.suites import parse_suite

    suite = parse_suite({
        "n_train": 300, "n_eval": 1000,
        "learners": {"gap-mixture": {"epochs": 2, "batch_size": 64, "hidden": [8]}, "identity": {}},
        "experiments": [
            {"name": "study", "scenario": "binary-gmm", "params": EQUAL, "observation": "useful",
             "privacy": "map", "budgets": [1.0], "evaluators": "mismatch"},
            {"name": "plain", "scenario": "binary-gmm", "params": EQUAL, "observation": "useful",
             "privacy": "map", "budgets": [1.0]},
        ]}, "mismatch-test")
    assert {c.evaluators for c in suite.cases} == {"mismatch", None}
    summary = run_cases(suite.cases, tmp_path / "res", jobs=1, device="cpu", progress="none")
    assert summary.counts["ok"] == len(suite.cases) == 4
    rows = read_records(tmp_path / "res")
    for _, row in rows.iterrows():
        evs = json.loads(row["evaluations"])
        study = [e for e in evs if e["detail"].get("study") == "mismatch"]
        info = json.loads(row["mechanism_info"])
        assert isinstance(info, dict)
        if row["experiment"] == "study":
            assert row["evaluators"] == "mismatch"
            assert {e["evaluator"] for e in study} == {f"attacker-{f}" for f in FAMILIES}
        else:
            assert study == []
            assert row["evaluators"] is None or row["evaluators"] != row["evaluators"]  # None or NaN
        assert not row["leakage_evaluator"].startswith("attacker-")
        if row["learner"] == "gap-mixture":
            ta = info["training_adversary"]
            assert math.isfinite(ta["mi"]) and 0.0 <= ta["accuracy"] <= 1.0


def test_generic_hook_with_the_standard_mlp_and_many_classes():
    """The (z, s) hook other evaluators call: a 3-class label, 4-dim release, include_mlp."""
    rng = np.random.default_rng(0)
    n = 3000
    s = rng.integers(0, 3, n)
    z = rng.standard_normal((n, 4)) + 3.0 * np.eye(3, 4)[s]  # well separated: accuracy near 1
    log_p = np.log(np.full(n, 1 / 3))
    evs = mismatch_evaluations(z, s, True, log_p, math.log(3), 2, families=("linear", "knn"), include_mlp=True)
    names = {e.evaluator for e in evs}
    assert names == {"attacker-mlp", "attacker-linear", "attacker-knn"}
    for e in evs:
        assert e.detail["study"] == "mismatch"
        if e.metric == "map":
            assert e.value > 0.95
        else:
            assert e.value <= math.log(3) + 3 * e.stderr and e.value > 0.8
    again = mismatch_evaluations(z, s, True, log_p, math.log(3), 2, families=("linear", "knn"), include_mlp=True)
    assert again == evs  # deterministic

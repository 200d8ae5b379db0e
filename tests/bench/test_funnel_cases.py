"""Per-case distortion (``distortion: logloss`` in a suite): identity, validation, and one funnel case run end to end.

The stored H(U | Z) and I(S; Z) are checked against a direct numpy computation from the
fitted channel and the scenario's joint (not the bench's evaluators).
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.execute import execute_case
from privbench.bench.suites import make_case
from privbench.bench.suites.loading import parse_suite
from privbench.datasets import make_scenario, task_for
from privbench.datasets.errors import InputError
from privbench.learners import make_learner
from privbench.theory import optimum

JOINT = [[0.0176, 0.0625, 0.2243], [0.3527, 0.0551, 0.0413], [0.0697, 0.0164, 0.1604]]


def _case(distortion="logloss", learner="greedy-merge", budgets=(0.2, 0.5), **kw):
    return make_case("t", "e", "finite", {"joint": JOINT}, "useful", "mi", None, learner, {}, budgets,
                     n_train=2000, n_eval=500, distortion=distortion, **kw)


def test_own_distortion_keeps_the_case_identity():
    plain = make_case("t", "e", "symmetric-pair", {"m": 4, "p": 0.3}, "useful", "mi", None, "identity", {}, [0.1])
    named = make_case("t", "e", "symmetric-pair", {"m": 4, "p": 0.3}, "useful", "mi", None, "identity", {}, [0.1],
                      distortion="hamming")
    assert named.distortion is None and "distortion" not in plain.identity()
    assert (named.key, named.case_ids(), named.seed, named.train_seed) == \
        (plain.key, plain.case_ids(), plain.seed, plain.train_seed)
    funnel = _case(learner="plugin")
    assert funnel.distortion == "logloss" and funnel.identity()["distortion"] == "logloss"
    assert funnel.key != _case(distortion=None, learner="plugin").key


@pytest.mark.parametrize("scenario, params, distortion, phrase", [
    ("finite", {"joint": JOINT}, "nonsense", "nonsense"),
    ("gaussian-scalar", {"rho": 0.5}, "logloss", "logloss"),
])
def test_bad_distortion_is_one_line_input_error(scenario, params, distortion, phrase):
    with pytest.raises(InputError) as err:
        make_case("t", "e", scenario, params, "useful", "mi", None, "plugin", {}, [0.2], distortion=distortion)
    assert phrase in str(err.value) and "\n" not in str(err.value)


def test_a_learner_without_logloss_is_skipped_in_a_suite_and_refused_by_name():
    data = {"learners": {"identity": {}, "greedy-merge": {}},
            "experiments": [{"name": "f", "scenario": "finite", "params": {"joint": JOINT}, "observation": "useful",
                             "privacy": "mi", "distortion": "logloss", "budgets": [0.3]}]}
    suite = parse_suite(data, "tiny")
    assert [c.learner for c in suite.cases] == ["greedy-merge"]
    assert [s.learner for s in suite.skipped] == ["identity"] and "logloss" in suite.skipped[0].reason
    with pytest.raises(InputError, match="logloss"):
        _case(learner="identity")
    with pytest.raises(InputError, match="distortion"):
        parse_suite({**data, "experiments": [{**data["experiments"][0], "distortion": ["logloss"]}]}, "bad")


def _entropy_terms(p_sz: np.ndarray, p_uz: np.ndarray) -> tuple[float, float]:
    """(I(S; Z), H(U | Z)) in nats from joints P(S, Z) and P(U, Z)."""
    pz = p_uz.sum(axis=0)
    ps = p_sz.sum(axis=1)
    nz = p_sz > 0
    mi = float((p_sz[nz] * np.log(p_sz[nz] / np.outer(ps, pz)[nz])).sum())
    nz = p_uz > 0
    h = float(-(p_uz[nz] * np.log(p_uz[nz] / np.broadcast_to(pz, p_uz.shape)[nz])).sum())
    return mi, h


def test_funnel_case_scored_against_the_certified_bound(tmp_path):
    case = _case()
    rows = execute_case(case, "cpu", artifacts=tmp_path)
    sc = make_scenario("finite", {"joint": JOINT})
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    task = task_for(sc, "useful", "mi", "logloss")
    mechs = make_learner("greedy-merge").fit(samples, task, list(case.budgets), seed=case.seed, device="cpu")
    joint = np.asarray(JOINT)
    for row, mech in zip(rows, mechs):
        assert row["status"] == "ok", row["error"]
        assert row["distortion_name"] == "logloss" and row["bound_kind"] == "certified"
        ch = mech.channel()  # P(z | u), shape (n_u, n_z)
        mi, h = _entropy_terms(joint @ ch, joint.sum(axis=0)[:, None] * ch)
        assert row["leakage"] == pytest.approx(mi, abs=1e-9)
        assert row["distortion"] == pytest.approx(h, abs=1e-9)
        assert row["distortion"] <= row["budget"] + 1e-9  # greedy-merge never exceeds its budget
        opt = optimum(sc, h, "mi", "useful", distortion="logloss")
        assert row["optimum_at_distortion"] == pytest.approx(opt.value, abs=1e-9)
        assert row["optimum_lower_at_distortion"] <= row["optimum_at_distortion"]
        assert row["gap"] == pytest.approx(mi - opt.value, abs=1e-9)
        assert row["leakage"] >= opt.lower - 1e-6 and not row["below_bound"]

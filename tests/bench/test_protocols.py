"""The two-user protocol (generative-filter paper §6.7.5) on the digits set with tiny learner params."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from privbench.bench.protocols import check_two_user, run_protocol, train_classifier
from privbench.bench.run import execute_case
from privbench.bench.store import COLUMN_NAMES
from privbench.bench.suites import Case, make_case
from privbench.datasets.errors import InputError
from privbench.learners import load_mechanism
from privbench.learners.latent_filter import LatentFilter
from privbench.learners.latent_filter_mechanism import LatentFilterMechanism

BUDGETS = (0.5, 3.0)


def _case(**over) -> Case:
    case = make_case("t", "two-user", "digits", {"labeling": "ge5-parity"}, "full", "map", None, "latent-filter",
                     LatentFilter.test_params, BUDGETS, n_train=1438, n_eval=359, protocol="two-user")
    return replace(case, **over)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    return tmp_path_factory.mktemp("two-user-mechanisms")


@pytest.fixture(scope="module")
def rows(kept):
    # The trained filters' own release is broken in this process: every release must come from
    # the saved files, through the release server (a process of its own).
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(LatentFilterMechanism, "release", broken_release)
        return execute_case(_case(), "cpu", artifacts=kept)  # the runner's dispatch to run_protocol


def broken_release(self, w, rng):
    raise AssertionError("released in the training process")


def test_the_saved_filters_are_released_and_kept(rows, kept):
    for i, r in enumerate(rows):
        assert r["status"] == "ok", r.get("error")
        d = kept / f"budget-{i}"
        assert r["mechanism_file"] == str(d)
        for user in ("user-a", "user-b"):
            mech = load_mechanism(d / f"{user}.pt")
            assert isinstance(mech, LatentFilterMechanism) and mech.budget == r["budget"]


def test_one_ok_row_per_budget_in_the_runner_format(rows):
    assert [r["budget"] for r in rows] == list(BUDGETS)
    for r in rows:
        assert r["status"] == "ok", r.get("error")
        assert set(r) <= set(COLUMN_NAMES)
        for key in ("leakage", "leakage_evaluator", "leakage_kind", "leakage_stderr", "distortion",
                    "distortion_evaluator", "distortion_kind", "distortion_stderr", "optimum_at_budget",
                    "bound_kind", "gap", "overshoot", "below_bound", "evaluations", "train_time_s",
                    "wall_time_s", "device", "started_at", "finished_at", "protocol", "case_id"):
            assert key in r, key
        assert r["protocol"] == "two-user" and r["device"] == "cpu"
        assert math.isnan(r["optimum_at_budget"]) and math.isnan(r["gap"]) and r["bound_kind"] == "none"
        assert r["below_bound"] is False and r["overshoot"] == 0.0
        assert r["train_time_s"] > 0 and r["wall_time_s"] > 0
        info = json.loads(r["mechanism_info"])
        assert info["user_a"]["train_divergence"] <= r["budget"] * (1 + 1e-4)
        assert info["user_b"]["train_divergence"] <= r["budget"] * (1 + 1e-4)


def test_evaluations_hold_both_users_private_utility_and_raw_accuracies(rows):
    for r in rows:
        evs = json.loads(r["evaluations"])
        got = {(e["metric"], e["detail"].get("user"), e["detail"].get("label")) for e in evs}
        for prefix in ("", "raw-"):
            assert (prefix + "map", "user-a", "ge5") in got
            assert (prefix + "map", "user-b", "parity") in got
            assert (prefix + "utility", "user-a", "parity") in got
            assert (prefix + "utility", "user-b", "ge5") in got
        private = [e["value"] for e in evs if e["metric"] == "map"]
        assert len(private) == 2 and r["leakage"] == max(private)
        assert r["leakage_evaluator"] == "two-user-attacker" and r["leakage_kind"] == "estimate"
        for e in evs:
            if "map" in e["metric"] or "utility" in e["metric"]:
                assert 0.0 <= e["value"] <= 1.0 and e["stderr"] > 0
        # the held-out partition (359 images) is split in two halves, one per user
        assert sorted(e["detail"]["n_test"] for e in evs if e["metric"] == "map") == [179, 180]
        dist = [e for e in evs if e["metric"] == "distortion"]
        assert len(dist) == 1 and dist[0]["value"] == r["distortion"] > 0
        assert r["distortion_evaluator"] == "two-user-xent"
    raw = [[e["value"] for e in json.loads(r["evaluations"]) if e["metric"].startswith("raw-")] for r in rows]
    assert raw[0] == raw[1]  # the raw reference does not depend on the budget
    assert min(raw[0]) > 0.7  # raw 8x8 digits: >= 5 and parity are learnable


def test_same_case_same_numbers(rows):
    again = run_protocol(_case(), "cpu")
    for a, r in zip(again, rows):
        assert a["status"] == "ok"
        assert (a["leakage"], a["distortion"], a["evaluations"]) == (r["leakage"], r["distortion"], r["evaluations"])


@pytest.mark.parametrize("over, needle", [
    ({"params_json": json.dumps({"labeling": "digit"})}, "labeling='digit'"),
    ({"scenario": "binary-gmm"}, "scenario='binary-gmm'"),
    ({"learner": "ppan-image", "learner_params_json": "{}"}, "learner='ppan-image'"),
    ({"privacy": "mi"}, "privacy='mi'"),
    ({"observation": "useful"}, "observation='useful'"),
])
def test_a_case_outside_the_protocol_is_an_input_error(over, needle):
    with pytest.raises(InputError, match="two-user: " + needle.replace("(", r"\(")):
        check_two_user(_case(**over))


def test_a_bad_case_becomes_failed_rows_not_an_exception():
    out = run_protocol(_case(params_json=json.dumps({"labeling": "digit"})), "cpu")
    assert [r["status"] for r in out] == ["failed", "failed"]
    assert "InputError" in out[0]["error"] and "labeling='digit'" in out[0]["error"]
    assert "ge5-parity" in out[0]["error"]
    unknown = run_protocol(replace(_case(), protocol="three-user"), "cpu")
    assert unknown[0]["status"] == "failed" and "protocol='three-user' is unknown" in unknown[0]["error"]


def test_classifier_learns_and_rejects_mismatched_labels():
    rng = np.random.default_rng(0)
    x = 2 * rng.standard_normal((400, 5))
    y = (x[:, 0] > 0).astype(int)
    pred = train_classifier(x[:300], y[:300], 2, seed=1)
    assert np.mean(pred(x[300:]) == y[300:]) > 0.9
    assert np.array_equal(pred(x[300:]), train_classifier(x[:300], y[:300], 2, seed=1)(x[300:]))
    with pytest.raises(InputError, match="as many labels as rows"):
        train_classifier(x, y[:10], 2, seed=0)


class _Noisy:
    def release(self, w, rng):
        return w[:, 1:] + rng.normal(size=(len(w), w.shape[1] - 1))


class _Plain:
    def release(self, w, rng):
        return w[:, 1:].copy()


def test_the_attackers_train_on_four_releases_of_a_randomised_filter_and_one_of_a_deterministic_one():
    from privbench.bench.protocols.two_user import pooled_releases
    from privbench.datasets import make_scenario, task_for

    task = task_for(make_scenario("digits", {"labeling": "ge5-parity"}), "full", "map")
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(30, 64))
    public, a, b = np.arange(10), np.arange(10, 20), np.arange(20, 30)
    w_a, w_b = np.column_stack([np.zeros(10), x[a]]), np.column_stack([np.ones(10), x[b]])
    users = ((_Noisy(), w_a, _Noisy().release(w_a, rng), a), (_Plain(), w_b, x[b].copy(), b))
    rows, idx, groups = pooled_releases(x, public, users, task, [1, 2])
    assert rows.shape == (10 + 4 * 10 + 10, 64)
    assert np.array_equal(idx, np.concatenate([public, np.tile(a, 4), b]))  # each row's labels
    assert np.array_equal(rows[:10], x[public]) and np.array_equal(rows[-10:], x[b])
    for k in range(10):  # all releases of one input share a group, and no other row does
        same = np.flatnonzero(groups == groups[10 + k])
        assert np.array_equal(same, 10 + k + 10 * np.arange(4))
    assert np.unique(groups).size == 10 + 10 + 10

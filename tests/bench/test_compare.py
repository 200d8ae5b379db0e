"""``privbench compare``: pairing by learner parameters, Benjamini-Hochberg over Welch tests, exit status."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privbench.bench.cli import main
from privbench.bench.reports import compare
from privbench.bench.stats import bh_adjust, t_half_width, t_interval, welch_p


def records(points, learner_params='{"steps": 100}'):
    """Rows of ok cases: ``points`` maps a budget to the gaps of its seeds."""
    rows = []
    for budget, gaps in points.items():
        for rep, gap in enumerate(gaps):
            rows.append({"status": "ok", "scenario": "symmetric-pair", "scenario_id": "symmetric-pair-m4-p0.3",
                         "observation": "full", "privacy": "mi", "family": None, "learner": "ppan",
                         "budget": budget, "n_train": 1000, "rep": rep, "gap": gap, "leakage_stderr": 0.0,
                         "learner_params": learner_params})
    return pd.DataFrame(rows)


def test_t_interval_is_the_textbook_interval():
    mean, lo, hi = t_interval([1.0, 2.0, 3.0])
    t975 = 0.95 / math.sqrt(2 * 0.975 * 0.025)  # Student t quantile, 2 degrees of freedom: (2p-1)/sqrt(2p(1-p))
    assert t975 == pytest.approx(4.3027, abs=1e-4)  # the printed tables' value
    half = t975 / math.sqrt(3)  # s = 1
    assert (mean, lo, hi) == pytest.approx((2.0, 2.0 - half, 2.0 + half), rel=1e-12)
    assert t_half_width([1.0, 2.0, 3.0]) == pytest.approx(half, rel=1e-12)
    assert t_interval([5.0, 5.0]) == (5.0, 5.0, 5.0)
    assert math.isnan(t_half_width([1.0])) and math.isnan(t_interval([])[0])


def test_bh_adjust_matches_the_step_up_rule_and_skips_nan():
    p = [0.01, float("nan"), 0.5, 0.03, 0.02]
    q = bh_adjust(p)
    # m = 4 hypotheses; sorted p 0.01, 0.02, 0.03, 0.5 -> min_{j >= i} p_(j) m / j = 0.04, 0.04, 0.04, 0.5
    assert math.isnan(q[1])
    assert q[[0, 4, 3, 2]] == pytest.approx([0.04, 0.04, 0.04, 0.5])


def test_one_small_p_among_many_is_not_beyond_noise_after_correction():
    rng = np.random.default_rng(0)
    base = {0.1 * (i + 1): list(rng.normal(0.1, 0.01, 3)) for i in range(10)}
    b_points = {k: list(np.asarray(v) + rng.normal(0, 0.01, 3)) for k, v in base.items()}
    b_points[0.1] = [0.1 + 0.02, 0.1 + 0.035, 0.1 + 0.028]
    base[0.1] = [0.1, 0.101, 0.099]
    res = compare(records(base), records(b_points))
    p = np.array([welch_p(base[k], b_points[k]) for k in sorted(base)])
    assert p[0] < 0.05 and np.sum(p < 0.05) == 1  # uncorrected, the first point would count as worse
    order = np.argsort(p)
    q_by_hand = np.minimum.accumulate((p[order] * len(p) / np.arange(1, len(p) + 1))[::-1])[::-1]
    q = np.empty_like(p)
    q[order] = np.minimum(q_by_hand, 1.0)
    res = res.sort_values("budget")
    assert res["q_value"].to_numpy() == pytest.approx(q)
    assert q[0] > 0.05 and not res["beyond_noise"].any()


def run_compare(monkeypatch, capsys, a, b, *flags):
    tables = {"A": a, "B": b}
    monkeypatch.setattr("privbench.bench.store.read_records", lambda d: tables[d])
    rc = main(["compare", "A", "B", *flags])
    out, err = capsys.readouterr()
    return rc, out, err


A = {0.1: [0.10, 0.11, 0.09], 0.3: [0.05, 0.06, 0.04]}
WORSE = {0.1: [0.30, 0.31, 0.29], 0.3: [0.05, 0.06, 0.04]}  # B worse at budget 0.1, the same at 0.3
BETTER = {0.1: [0.00, 0.01, 0.005], 0.3: [0.05, 0.06, 0.04]}


def test_b_worse_beyond_noise_exits_1_unless_fail_on_none(monkeypatch, capsys):
    rc, out, err = run_compare(monkeypatch, capsys, records(A), records(WORSE))
    assert rc == 1 and "A better beyond noise: 1" in out
    assert err == "FAILED: B is worse than A beyond noise on 1 point(s) (--fail-on none to exit 0)\n"
    rc, out, err = run_compare(monkeypatch, capsys, records(A), records(WORSE), "--fail-on", "none")
    assert rc == 0 and err == ""


def test_b_better_or_the_same_exits_0(monkeypatch, capsys):
    rc, out, _ = run_compare(monkeypatch, capsys, records(A), records(BETTER))
    assert rc == 0 and "B better beyond noise: 1" in out
    rc, out, _ = run_compare(monkeypatch, capsys, records(A), records(A))
    assert rc == 0 and "ties: 2" in out


def test_points_with_different_learner_parameters_are_not_paired_unless_asked(monkeypatch, capsys):
    other = records(WORSE, learner_params='{"steps": 200}')
    rc, out, _ = run_compare(monkeypatch, capsys, records(A), other)
    assert rc == 0  # nothing compared, so nothing worse
    assert "compared: 0" in out and "not paired (parameters differ): 2" in out
    assert out.count("learner parameters differ: ppan symmetric-pair-m4-p0.3 budget") == 2
    assert 'A {"steps": 100}, B {"steps": 200}; not paired (--allow-param-mismatch compares them)' in out
    rc, out, _ = run_compare(monkeypatch, capsys, records(A), other, "--allow-param-mismatch")
    assert rc == 1 and "compared: 2" in out
    assert out.count("compared anyway (--allow-param-mismatch)") == 2

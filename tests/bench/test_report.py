"""Reports and comparison on records built from real mechanisms scored exactly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from privbench.bench.reports import aggregate_points, compare, flags_table, gap_table, write_html, write_markdown
from privbench.datasets import SymmetricPair, task_for
from privbench.learners import make_learner
from privbench.theory import curve, scenario_channel_measures


def _records(learner: str, seeds: int, budgets=(0.1, 0.3), jitter: float = 0.0) -> pd.DataFrame:
    sc = SymmetricPair(4, 0.3)
    task = task_for(sc, "full", "mi")
    rows = []
    for rep in range(seeds):
        samples = sc.sample(400, np.random.default_rng(rep))
        for b in budgets:
            mech = make_learner(learner).fit(samples, task, b, seed=rep)
            m = scenario_channel_measures(sc, mech.channel(), "full")
            leak, dist = m["mi"] + jitter * rep, m["distortion"]
            opt = float(curve(sc, [dist], "mi", "full")[0])
            rows.append(dict(
                case_id=f"{learner}-{b}-{rep}", suite="t", experiment="", scenario=sc.name, scenario_id=sc.id,
                params=json.dumps(sc.params()), observation="full", privacy="mi", family=None, learner=learner,
                learner_params="{}", budget=b, seed=rep, rep=rep, n_train=400, n_eval=0, status="ok", error="",
                leakage=leak, leakage_evaluator="exact-channel", leakage_kind="exact", leakage_stderr=0.0,
                distortion=dist, distortion_evaluator="exact-distortion", optimum_at_distortion=opt,
                optimum_at_budget=float(curve(sc, [b], "mi", "full")[0]), bound_kind="exact", gap=leak - opt,
                overshoot=max(0.0, dist - b), below_bound=bool(leak < opt - 1e-6), below_bound_reason=None,
                evaluations="[]", train_time_s=0.01, wall_time_s=0.02, device="cpu", host="h",
            ))
    return pd.DataFrame(rows)


def test_gap_table_and_points_match_records():
    df = _records("randomized-response", seeds=3)
    pts = aggregate_points(df)
    assert len(pts) == 2 and set(pts["n"]) == {3}
    table = gap_table(df)
    assert len(table) == 1
    assert table["median_gap"].iloc[0] == pytest.approx(df["gap"].median())
    assert table["worst_gap"].iloc[0] == pytest.approx(df["gap"].max())
    # randomized response is not optimal on this model: a strictly positive gap
    assert table["median_gap"].iloc[0] > 0.01


def test_flags_list_failures_and_below_bound():
    df = _records("randomized-response", seeds=1)
    df.loc[0, "below_bound"] = True
    df.loc[0, "below_bound_reason"] = "evaluator or bug: below the exact optimum"
    df.loc[1, "status"] = "failed"
    df.loc[1, "error"] = "boom"
    flags = flags_table(df)
    assert len(flags) == 2 and set(flags["status"]) == {"ok", "failed"}


def test_html_is_self_contained_and_markdown_writes_figures(tmp_path):
    df = pd.concat([_records("randomized-response", 2), _records("constant", 2)])
    html = write_html(df, tmp_path / "r.html").read_text()
    assert html.count("data:image/png;base64,") == 1 and "randomized-response" in html
    assert "http://" not in html and "https://" not in html  # opens offline
    md = write_markdown(df, tmp_path / "r.md")
    figs = list((tmp_path / "r_figures").glob("*.png"))
    assert len(figs) == 1 and figs[0].name in md.read_text()


def test_compare_says_which_side_is_better_and_if_beyond_noise():
    a = _records("randomized-response", 3)
    b = _records("constant", 3)
    b["learner"] = "randomized-response"  # same cases, different mechanisms
    res = compare(a, b)
    assert len(res) == 2
    # the constant release has zero leakage: its gap is smaller wherever RR leaks more than the optimum
    for _, r in res.iterrows():
        assert r["better"] in ("A", "B")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # identical reruns are a tie without scipy's precision warning
        same = compare(a, a)
    assert not same["beyond_noise"].any() and set(same["better"]) == {"tie"}
    assert (same["p_value"] == 1.0).all()
    noisy = _records("randomized-response", 3, jitter=1e-3)
    res2 = compare(a, noisy)
    assert set(res2["better"]) == {"A"}


def test_optimum_curve_is_drawn_for_rows_read_back_from_parquet():
    from privbench.bench.reports import optimum_curve as _optimum_curve

    df = _records("randomized-response", 1)
    df["family"] = np.nan  # what a stored row without a family reads back as
    curve_ = _optimum_curve(df.iloc[0], 0.5)
    assert curve_ is not None and len(curve_[0]) > 10 and curve_[1][0] > curve_[1][-1]


def test_flags_list_overshoots_beyond_their_statistical_tolerance_only():
    import pandas as pd

    from privbench.bench.reports import flags_table
    from privbench.bench.scores import overshoot_tolerance

    base = {"status": "ok", "learner": "x", "scenario_id": "s", "observation": "full", "privacy": "mi", "rep": 0,
            "gap": 0.0, "below_bound": False, "below_bound_reason": None, "error": None, "budget": 0.5,
            "n_train": 10000, "distortion_stderr": 0.002}
    noise, real = dict(base, overshoot=0.01), dict(base, overshoot=0.2)
    tol = overshoot_tolerance(pd.Series(noise))
    assert 0.01 < tol < 0.2  # 0.005 + 3 * 0.002 + 3 * sqrt(1 / 10000) = 0.041
    flagged = flags_table(pd.DataFrame([noise, real, dict(base, overshoot=0.0, status="inconsistent",
                                                          error="channel() does not describe release()")]))
    assert sorted(flagged["overshoot"]) == [0.0, 0.2] and "inconsistent" in set(flagged["status"])

"""Reports and comparison on records built from real mechanisms scored exactly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from privbench.bench.reports import compare, flags_table, write_html, write_markdown
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


def _mi(joint: np.ndarray) -> float:
    """I(S;U) in nats of a joint pmf, written out here (not theory's)."""
    ps, pu = joint.sum(1, keepdims=True), joint.sum(0, keepdims=True)
    nz = joint > 0
    return float((joint[nz] * np.log(joint[nz] / (ps @ pu)[nz])).sum())


def test_ranking_charges_unused_budget_and_fails_overshoot():
    """identity (d = 0, on the curve at its own distortion) and constant (zero leakage, far past the budget)
    no longer look optimal: identity pays I(S;U) - optimum(budget), constant fails the budget."""
    from privbench.bench.reports import heatmap_frame, ranking_frame, ranking_table

    df = pd.concat([_records("plugin", 1), _records("identity", 1), _records("constant", 1)], ignore_index=True)
    assert (df.loc[df["learner"] != "plugin", "gap"].abs() < 1e-6).all()  # the old gap rated both optimal
    rank = ranking_frame(df)
    assert len(rank) == 3 and rank["panel"].nunique() == 1
    by = rank.set_index("learner")
    sc = SymmetricPair(4, 0.3)
    want = np.mean([_mi(sc.joint()) - float(curve(sc, [b], "mi", "full")[0]) for b in (0.1, 0.3)])
    assert by.loc["identity", "mean_strict_gap"] == pytest.approx(want, rel=1e-6)
    assert by.loc["identity", "rank"] == 2 and by.loc["plugin", "rank"] == 1 and by.loc["plugin", "best"]
    assert np.isnan(by.loc["constant", "rank"]) and by.loc["constant", "over_budget"] == 2
    assert list(rank["learner"]) == ["plugin", "identity", "constant"]  # by rank, not alphabetically
    table = ranking_table(rank)
    assert list(table["rank"]) == ["1 ★", "2", "—"] and set(table["95% CI"]) == {"1 seed: no CI"}
    assert table["within budget"].iloc[2].startswith("NO: 2 of 2") and (table["evaluator"] == "exact-channel").all()
    val, txt = heatmap_frame(rank)
    assert np.isnan(val.loc["constant"].iloc[0]) and "over" in txt.loc["constant"].iloc[0]
    assert "★" in txt.loc["plugin"].iloc[0]


def test_ranking_ci_is_the_t_interval_over_seeds_and_evaluators_stay_apart():
    from scipy import stats

    from privbench.bench.reports import ranking_frame

    df = _records("randomized-response", 3, jitter=1e-3)
    df.loc[df["rep"] == 2, ["leakage_evaluator", "leakage_kind"]] = ["fresh-classifier", "lower-bound"]
    rank = ranking_frame(df).set_index("leakage_evaluator")
    assert set(rank.index) == {"exact-channel", "fresh-classifier"}  # never one mean over both
    assert rank.loc["exact-channel", "seeds"] == 2 and rank.loc["fresh-classifier", "seeds"] == 1
    exact = df[df["rep"] < 2]
    strict = exact["leakage"] - np.minimum(exact["optimum_at_distortion"], exact["optimum_at_budget"])
    per_seed = strict.groupby(exact["rep"]).mean().to_numpy()
    lo, hi = stats.t.interval(0.95, len(per_seed) - 1, loc=per_seed.mean(), scale=stats.sem(per_seed))
    r = rank.loc["exact-channel"]
    assert (r["mean_strict_gap"], r["ci_low"], r["ci_high"]) == pytest.approx((per_seed.mean(), lo, hi))
    assert np.isnan(rank.loc["fresh-classifier", "ci_low"])


def test_learner_styles_stay_distinct_past_ten_learners():
    from privbench.bench.reports.style import KIND_MARKER, learner_styles

    styles = learner_styles([f"l{i:02d}" for i in range(23)])
    assert len(set(styles.values())) == 23
    assert len({m for m, _, _ in KIND_MARKER.values()}) == len(KIND_MARKER)


def test_flags_list_failures_and_below_bound():
    df = _records("randomized-response", seeds=1)
    df.loc[0, "below_bound"] = True
    df.loc[0, "below_bound_reason"] = "evaluator or bug: below the exact optimum"
    df.loc[1, "status"] = "failed"
    df.loc[1, "error"] = "boom"
    flags = flags_table(df)
    assert len(flags) == 2 and set(flags["status"]) == {"ok", "failed"} and "leakage_evaluator" in flags


def test_html_is_self_contained_navigable_and_offers_csv(tmp_path):
    import base64
    import re

    df = pd.concat([_records("randomized-response", 2), _records("constant", 2)])
    df["git_commit"] = "0123456789abcdef"
    html = write_html(df, tmp_path / "r.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "randomized-response" in html  # heatmap + one panel
    assert "http://" not in html and "https://" not in html  # opens offline
    anchors = set(re.findall(r'id="([^"]+)"', html))
    links = set(re.findall(r'href="#([^"]+)"', html))
    assert links and links <= anchors and "contents" in anchors
    assert "records (8 rows) from commit(s) <code>0123456789ab</code>" in html
    assert "lower bound on leakage" in html and "evaluator" in html and "1 seed" not in html
    csvs = re.findall(r'base64,([A-Za-z0-9+/=]+)">download CSV', html)
    ranking = [base64.b64decode(c).decode() for c in csvs if base64.b64decode(c).decode().startswith("experiment,rank")]
    assert ranking and "constant" in ranking[0] and "NO: 4 of 4 rows over" in ranking[0]
    md = write_markdown(df, tmp_path / "r.md")
    text = md.read_text()
    figs = list((tmp_path / "r_figures").glob("*.png"))
    assert len(figs) == 2 and all(f.name in text for f in figs)
    tables = list((tmp_path / "r_figures").glob("*.csv"))
    assert tables and all(f.name in text for f in tables) and "| rank" in text


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


def test_certified_band_comes_from_theory_at_the_budgets():
    from privbench.bench.reports.figures import sandwich
    from privbench.theory.mixture.stored import stored_sandwich

    sid = "binary-gmm-prior0.75-mu3-s02-s11"
    row = pd.Series({"scenario": "binary-gmm", "params": json.dumps({"prior": 0.75, "mu": 3, "sigma0": 2,
                                                                     "sigma1": 1}),
                     "observation": "full", "privacy": "map", "family": "certified"})
    budgets, low, up = sandwich(row, [3.0])
    stored = stored_sandwich(sid, 3.0, "map", "full")
    assert stored is not None and list(budgets) == [3.0]
    assert (low[0], up[0]) == pytest.approx((stored["lower"], stored["upper"]), abs=1e-9) and low[0] <= up[0]


def test_points_show_guarantee_columns_when_rows_carry_them():
    from privbench.bench.reports.points import point_frame, points_table
    from privbench.bench.reports.ranking import scored_rows

    df = _records("randomized-response", 2)
    df["guarantee_eps"] = np.arange(len(df), dtype=float)
    table = points_table(point_frame(scored_rows(df)))
    col = "guarantee_eps (worst seed)"
    assert col in table and sorted(table[col]) == sorted(df.groupby("budget")["guarantee_eps"].max())


def test_failed_and_inconsistent_cases_show_in_the_ranking_never_as_a_number():
    from privbench.bench.reports import heatmap_frame, ranking_frame, ranking_table

    rr, pl = _records("randomized-response", 2), _records("plugin", 2)
    pl["status"] = "inconsistent"
    rr.loc[rr.index[0], "status"] = "failed"
    rank = ranking_frame(pd.concat([rr, pl], ignore_index=True))
    table = ranking_table(rank).set_index("learner")
    assert table.loc["plugin", "strict gap (mean)"] == "no number" and table.loc["plugin", "rank"] == "—"
    assert table.loc["plugin", "flags"] == "?" and table.loc["plugin", "failed rows"] == 4
    assert table.loc["randomized-response", "rank"] == "1 ★" and table.loc["randomized-response", "flags"] == "✖"
    assert table.loc["randomized-response", "failed rows"] == 1
    _, txt = heatmap_frame(rank)
    assert "no" in txt.loc["plugin"].iloc[0]


def test_a_lower_bound_never_takes_the_star_from_an_exact_number():
    from privbench.bench.reports import ranking_frame

    rr, pl = _records("randomized-response", 1), _records("plugin", 1)
    rr["leakage"] = rr["optimum_at_distortion"] - 0.01  # an attacker's lower bound below the curve
    rr["leakage_kind"], rr["leakage_evaluator"] = "lower-bound", "fresh-classifier"
    rank = ranking_frame(pd.concat([rr, pl], ignore_index=True)).set_index("learner")
    assert rank.loc["randomized-response", "rank"] == 1 and not rank.loc["randomized-response", "best"]
    assert rank.loc["plugin", "rank"] == 2 and rank.loc["plugin", "best"]

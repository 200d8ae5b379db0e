"""The paper report's special sections say which evaluator produced each number and what it is, never
average seeds measured by different evaluators, show a certified row's family bound and band, mark a
negative gap measured by a lower bound, and are reachable from the table of contents with a CSV each.

The records are small hand-made frames: every expected value is written here from the inputs."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pandas as pd
import pytest

from privbench.bench.reports.render import Block, Style, render_html, render_markdown
from privbench.bench.reports.sections.gap_tables import gap_table_blocks
from privbench.bench.reports.sections.labelled import labelled_blocks, two_user_blocks
from privbench.bench.reports.sections.mismatch import mismatch_blocks, mismatch_overview
from privbench.bench.reports.sections.sample_complexity import sample_complexity_blocks

SID = "binary-gmm-prior0.5-mu3-s01-s11"
PARAMS = json.dumps({"prior": 0.5, "mu": 3, "sigma0": 1, "sigma1": 1})


def _row(**kw) -> dict:
    base = dict(status="ok", experiment="x", scenario="binary-gmm", scenario_id=SID, params=PARAMS,
                observation="full", privacy="map", learner="gap-mixture", budget=3.0, rep=0, n_train=100,
                leakage=0.8, distortion=3.0, leakage_evaluator="exact-mixture-params", leakage_kind="exact",
                optimum_at_distortion=0.7, optimum_at_budget=0.7, bound_kind="certified",
                optimum_lower_at_budget=0.69, family_bound="general", family_bound_at_budget=0.75,
                family_bound_at_distortion=0.75, gap=0.1, evaluations="[]", mechanism_info="{}",
                evaluators="", protocol="")
    base.update(kw)
    return base


def _params_eval(beta0: float) -> str:
    return json.dumps([{"metric": "map", "value": 0.0, "evaluator": "exact-mixture-params", "kind": "exact",
                        "detail": {"params": {"beta0": beta0, "beta1": 0.0, "gamma0": 1.0, "gamma1": 1.0}}}])


def _tables(blocks: list[Block]) -> list[pd.DataFrame]:
    return [b.table for b in blocks if b.kind == "table" and b.table is not None]


def _gap_table(rows: list[dict]) -> pd.DataFrame:
    (t,) = _tables(gap_table_blocks(pd.DataFrame(rows), {}))
    return t


# ---------------------------------------------------------------- 3: a certified row's family bound and band

def test_gap_table_shows_the_family_bound_and_the_certified_band_of_a_certified_row():
    rows = [_row(rep=0, leakage=0.80, distortion=2.9, evaluations=_params_eval(0.1)),
            _row(rep=1, leakage=0.74, distortion=3.2, optimum_at_distortion=0.68, evaluations=_params_eval(0.3))]
    t = _gap_table(rows)
    assert len(t) == 1
    r = t.iloc[0]
    assert r["family optimum"] == 0.75  # family_bound_at_budget, not optimum_at_budget (0.7)
    assert r["certified band [lower, achievable]"] == "[0.6900, 0.7000]"
    # strict gap to the achievable end: leakage - min(optimum at distortion, at budget), per seed, then mean
    want = np.mean([0.80 - 0.70, 0.74 - 0.68])
    assert r["gap to achievable end"].startswith(f"{want:.4f} ± ")
    assert r["beta0"] == pytest.approx(0.2) and r["evaluator"] == "exact-mixture-params"
    assert r["leakage is"] == "exact"


def test_gap_table_of_a_family_row_shows_the_bound_it_is_scored_against():
    t = _gap_table([_row(bound_kind="family", optimum_at_budget=0.72, optimum_at_distortion=0.72,
                         family_bound_at_budget=np.nan, optimum_lower_at_budget=np.nan)])
    r = t.iloc[0]
    assert r["family optimum"] == 0.72 and "gap to family optimum" in t.columns
    assert "gap to achievable end" not in t.columns


def test_gap_table_never_averages_two_evaluators_and_marks_a_negative_lower_bound_gap():
    rows = [_row(rep=0, leakage=0.80),
            _row(rep=1, leakage=0.65, leakage_evaluator="mixture-fresh-classifier", leakage_kind="lower-bound")]
    t = _gap_table(rows).set_index("evaluator")
    assert set(t.index) == {"exact-mixture-params", "mixture-fresh-classifier"}
    assert t.loc["exact-mixture-params", "P_detect (ours)"] == "0.8000"  # one seed each: no mean over both
    assert t.loc["mixture-fresh-classifier", "P_detect (ours)"] == "0.6500"
    low = t.loc["mixture-fresh-classifier"]
    assert low["leakage is"] == "lower bound"
    assert "⚠" in low["gap to achievable end"] and "not a win" in low["gap to achievable end"]
    assert "⚠" not in t.loc["exact-mixture-params", "gap to achievable end"]


def test_a_negative_exact_gap_is_shown_plainly():
    """Inside a certified band an exact leakage may legitimately beat the achievable end."""
    t = _gap_table([_row(leakage=0.695)])
    assert t.iloc[0]["gap to achievable end"] == f"{0.695 - 0.7:.4f}"


# ---------------------------------------------------------------- 2: sample complexity per evaluator

def _sc_rows() -> list[dict]:
    out = []
    for rep, (ev, kind) in enumerate([("exact-channel", "exact"), ("exact-channel", "exact"),
                                      ("fresh-classifier", "lower-bound")]):
        for b in (0.1, 0.3):
            gap_l = 0.01 * (rep + 1) + b if kind == "exact" else -0.05
            out.append(_row(learner="ppan", rep=rep, budget=b, gap=gap_l, leakage_evaluator=ev, leakage_kind=kind,
                            privacy="mi", scenario="symmetric-pair", scenario_id="symmetric-pair-m4-p0.3",
                            bound_kind="exact"))
            out.append(_row(learner="plugin", rep=rep, budget=b, gap=0.02 * b, leakage_evaluator="exact-channel",
                            privacy="mi", scenario="symmetric-pair", scenario_id="symmetric-pair-m4-p0.3",
                            bound_kind="exact"))
    return out


def test_sample_complexity_keeps_evaluators_apart_and_marks_negative_lower_bound_gaps():
    blocks = sample_complexity_blocks("sc", pd.DataFrame(_sc_rows()))
    (t,) = _tables(blocks)
    t = t.set_index("evaluator")
    assert set(t.index) == {"exact-channel", "fresh-classifier"}
    ex = t.loc["exact-channel"]
    assert ex["seeds"] == 2 and ex["leakage is"] == "exact" and ex["plug-in evaluator"] == "exact-channel"
    per_rep = [np.mean([0.01 * (rep + 1) + b for b in (0.1, 0.3)]) for rep in (0, 1)]
    assert ex["total gap"].startswith(f"{np.mean(per_rep):.4f} ± ") and "⚠" not in ex["total gap"]
    lb = t.loc["fresh-classifier"]
    assert lb["seeds"] == 1 and lb["leakage is"] == "lower bound"
    assert lb["total gap"].startswith("-0.0500") and "⚠" in lb["total gap"]
    assert "lower bound" in lb["optimisation part"]  # a difference with a lower bound on one side says so


# ---------------------------------------------------------------- 1 and 2: mismatch, labelled, two users

def _mismatch_row(rep: int, exact: bool, attacker: float | None) -> dict:
    evs = [{"metric": "map", "value": (attacker or 0.0) + 0.01, "evaluator": "ksg", "kind": "estimate"}]
    if attacker is not None:
        evs.append({"metric": "map", "value": attacker, "evaluator": "attacker-linear", "kind": "lower-bound"})
    return _row(learner="ppan-gmm", rep=rep, leakage=0.9 if exact else (attacker or 0.0) + 0.01,
                leakage_kind="exact" if exact else "estimate",
                leakage_evaluator="exact-mixture-params" if exact else "ksg", evaluations=json.dumps(evs),
                mechanism_info=json.dumps({"training_adversary": {"accuracy": 0.8}}), evaluators="mismatch")


def test_mismatch_rows_say_what_the_independent_number_is_and_never_mix_kinds():
    g = pd.DataFrame([_mismatch_row(0, True, 0.85), _mismatch_row(1, False, 0.86), _mismatch_row(2, False, None)])
    (t,) = _tables(mismatch_blocks("m", g))
    t = t.set_index(["evaluator", "leakage is"])
    # the exact seed; the seed whose best lower-bound attacker (0.86) is the independent number, never KSG's
    # larger estimate (0.87); the seed with only an estimate (0.01): three rows, never one mean
    assert set(t.index) == {("exact-mixture-params", "exact"), ("best fresh attacker", "lower bound"),
                            ("best fresh attacker", "estimate")}
    assert t.loc[("exact-mixture-params", "exact"), "independent - training"] == f"{0.9 - 0.8:.3f}"
    assert t.loc[("best fresh attacker", "lower bound"), "independent"] == "0.860"
    assert t.loc[("best fresh attacker", "estimate"), "independent"] == "0.010"
    assert "ksg (estimate)" in t.columns and "attacker-linear" in t.columns
    over = mismatch_overview(g).set_index("evaluator")
    assert set(over.index) == {"exact-mixture-params", "best fresh attacker"} and "leakage is" in over
    assert len(over) == 3


def _labelled_row(rep: int, ev: str, acc: float) -> dict:
    evs = [{"metric": "map", "value": acc, "evaluator": ev, "kind": "lower-bound"},
           {"metric": "utility", "value": 0.9, "evaluator": ev, "kind": "lower-bound",
            "detail": {"label": "parity", "accuracy": {"parity": 0.9}, "majority": {"parity": 0.5}}}]
    return _row(learner="latent-filter", rep=rep, evaluations=json.dumps(evs), bound_kind="none",
                scenario="hypothesis-testing", scenario_id="ht")


def test_labelled_accuracies_are_split_by_evaluator_with_their_kind():
    g = pd.DataFrame([_labelled_row(0, "fresh-classifier", 0.6), _labelled_row(1, "other-classifier", 0.8)])
    t = _tables(labelled_blocks("l", g, {}))[0].set_index("evaluator")
    assert set(t.index) == {"fresh-classifier", "other-classifier"}
    assert t.loc["fresh-classifier", "S accuracy"] == "0.600" and t.loc["other-classifier", "S accuracy"] == "0.800"
    assert set(t["leakage is"]) == {"lower bound"}


def test_two_user_table_names_its_evaluator():
    evs = [{"metric": m, "value": v, "evaluator": ev, "kind": "estimate", "detail": {"user": u, "role": role}}
           for u in ("user-a", "user-b")
           for m, role, v, ev in (("map", "private", 0.6, "two-user-attacker"), ("utility", "utility", 0.8,
                                  "two-user-attacker"), ("raw-map", "private", 0.9, "two-user-raw-reference"))]
    g = pd.DataFrame([_row(learner="latent-filter", evaluations=json.dumps(evs), protocol="two-user")])
    (t,) = _tables(two_user_blocks(g, {}))
    assert list(t["evaluator"]) == ["two-user-attacker"] * 2 and set(t["leakage is"]) == {"estimate"}
    assert set(t["raw evaluator"]) == {"two-user-raw-reference"} and set(t["private acc (raw)"]) == {"0.900"}


# ---------------------------------------------------------------- 5: anchors in the TOC, a CSV per table

def test_section_headings_are_in_the_contents_and_every_table_has_a_csv(tmp_path):
    blocks = [Block("toc"), Block("h2", "gap-tables")] + gap_table_blocks(pd.DataFrame([_row()]), {})
    html = render_html(blocks, tmp_path / "p.html", "t", "", Style(css="")).read_text()
    nav = html[html.index('<nav class="toc">'):html.index("</nav>")]
    links = re.findall(r'href="#([^"]+)"', nav)
    assert "learned-parameters-vs-gap-tables-2-5" in links
    assert all(f'id="{a}"' in html for a in links)
    csvs = [base64.b64decode(c).decode() for c in re.findall(r'base64,([A-Za-z0-9+/=]+)">download CSV', html)]
    assert len(csvs) == 1 and csvs[0].startswith("D,P_detect (ours)") and "evaluator,leakage is" in csvs[0]
    md = render_markdown(blocks, tmp_path / "p.md", "t", "", Style(css="")).read_text()
    assert "](#learned-parameters-vs-gap-tables-2-5)" in md and '<a id="learned-parameters-vs-gap-tables-2-5">' in md
    assert len(list((tmp_path / "figures").glob("*.csv"))) == 1


def test_ranking_and_points_tables_mark_a_negative_lower_bound_gap_too():
    from privbench.bench.reports.points import points_table
    from privbench.bench.reports.ranking import ranking_table

    base = dict(panel="p", learner="a", n_train=10, leakage_evaluator="ev", bound="exact", mean_strict_gap=-0.02,
                ci_low=np.nan, ci_high=np.nan, seeds=1, over_budget=0, rows=2, flags="", rank=1.0, best=True)
    rank = pd.DataFrame([{**base, "trust": "lower-bound"}, {**base, "learner": "b", "trust": "exact"}])
    t = ranking_table(rank).set_index("learner")["strict gap (mean)"]
    assert t["a"] == "-0.02≥⚠" and t["b"] == "-0.02"
    pt = dict(learner="a", n_train=10, budget=0.1, n=1, leakage_evaluator="ev", bound="exact", flags="",
              optimum_at_budget=0.5, over_budget=0, **{f"{c}{s}": v for c, v in
                                                      (("distortion", 0.1), ("leakage", 0.48), ("strict_gap", -0.02))
                                                      for s in ("", "_lo", "_hi")})
    pts = pd.DataFrame([{**pt, "trust": "lower-bound"}, {**pt, "learner": "b", "trust": "exact"}])
    p = points_table(pts).set_index("learner")["strict gap"]
    assert p["a"].endswith("⚠") and not p["b"].endswith("⚠")


def test_per_component_rows_say_learned_numbers_are_lower_bounds_and_the_optimum_exact():
    from privbench.bench.reports.sections.per_component import per_component_blocks

    evs = json.dumps([{"metric": "distortion", "value": 0.5, "evaluator": "sample-distortion", "kind": "estimate",
                       "detail": {"per_component_distortion": [0.4, 0.1], "per_component_mi": [0.2, 0.05]}}])
    g = pd.DataFrame([_row(learner="ppan-linear", scenario="gaussian-vector", scenario_id="gaussian-vector-rho0.8,0.3",
                           params=json.dumps({"rho": [0.8, 0.3]}), observation="useful", privacy="mi", budget=0.5,
                           bound_kind="exact", evaluations=evs)])
    (t,) = _tables(per_component_blocks(g))
    t = t.set_index("learner")
    assert t.loc["ppan-linear", "leakage is"] == "lower bound" and "gaussian-approx" in t.loc["ppan-linear", "evaluator"]
    assert (t.loc["ppan-linear", "D1"], t.loc["ppan-linear", "I2"]) == (0.4, 0.05)
    opt = t.loc["optimum (Prop. 2)"]
    assert opt["leakage is"] == "exact"
    # reverse water-filling spends the budget 0.5 on the most correlated component: D1 + D2 = 0.5
    assert opt["D1"] + opt["D2"] == pytest.approx(0.5, abs=2e-3)


def test_two_user_raw_accuracies_of_two_evaluators_stay_apart():
    evs = [{"metric": "map", "value": 0.6, "evaluator": "two-user-attacker", "kind": "estimate",
            "detail": {"user": "user-a", "role": "private"}}]
    evs += [{"metric": "raw-map", "value": v, "evaluator": ev, "kind": "estimate",
             "detail": {"user": "user-a", "role": "private"}} for v, ev in ((0.9, "raw-one"), (0.7, "raw-two"))]
    g = pd.DataFrame([_row(learner="latent-filter", evaluations=json.dumps(evs), protocol="two-user")])
    (t,) = _tables(two_user_blocks(g, {}))
    a = t.set_index("user").loc["user-a"]
    assert a["private acc (raw)"] == "raw-one: 0.900; raw-two: 0.700"  # never their mean, 0.800
    assert a["raw evaluator"] == "raw-one, raw-two"


def _uci_row(learner: str, budget: float, rep: int, s_acc: float, label: str, u_acc: float) -> dict:
    evs = [{"metric": "map", "value": s_acc, "evaluator": "fresh-classifier", "kind": "lower-bound"},
           {"metric": "utility", "value": u_acc, "evaluator": "fresh-classifier", "kind": "lower-bound",
            "detail": {"label": label, "accuracy": {label: u_acc, "sex": s_acc}}}]
    return _row(learner=learner, budget=budget, rep=rep, evaluations=json.dumps(evs), bound_kind="none",
                scenario="abalone", scenario_id="abalone-mfi")


def test_filter_tables_2_and_3_show_ours_beside_the_printed_rows():
    from privbench.bench.reports.paper import reference_values
    from privbench.bench.reports.sections import SECTIONS

    ref = reference_values()
    g = pd.DataFrame([_uci_row("vfae", 10.0, 0, 0.40, "rings", 0.70), _uci_row("vfae", 10.0, 1, 0.50, "rings", 0.72),
                      _uci_row("identity", 0.0, 0, 0.55, "rings", 0.77)])
    (t3,) = _tables(SECTIONS["filter-table3"].render("filter-abalone", g, ref))
    t3 = t3.set_index("model")
    assert t3.loc["ours: vfae MMD weight=10", "seeds"] == 2
    assert t3.loc["ours: vfae MMD weight=10", "private (sex) acc"].startswith("0.450 ± ")
    assert t3.loc["ours: raw data (identity)", "utility (rings > 10) acc"] == "0.770"
    assert t3.loc["paper: raw", "private (sex) acc"] == "0.546 ± 0.011"
    assert t3.loc["paper: generative filter b=10", "utility (rings > 10) acc"] == "0.707 ± 0.011"
    g2 = pd.DataFrame([_uci_row("latent-filter", 1.0, 0, 0.70, "income", 0.80),
                       _uci_row("latent-filter (formulation=utility)", 1.0, 0, 0.65, "income", 0.82)])
    (t2,) = _tables(SECTIONS["filter-table2"].render("filter-adult", g2, ref))
    t2 = t2.set_index("model")
    assert t2.loc["ours: latent-filter KL b=1", "utility (income) acc"] == "0.800"
    # a variant keeps its label and its budget's name (KL b), in a row of its own
    assert t2.loc["ours: latent-filter (formulation=utility) KL b=1", "utility (income) acc"] == "0.820"
    assert t2.loc["paper: VFAE", "private (gender) acc"] == "0.802 ± 0.009"
    assert t2.loc["paper: LMIFR", "paper: utility auroc"] == "0.741 ± 0.013"
    assert set(t2["leakage is"]) == {"lower bound", "as printed"}

"""Sections for data without a known optimum (images, hypothesis testing): attacker and utility
accuracies per label, sample releases, the generative filter's Table 1 and the two-user protocol."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from privbench.datasets.errors import InputError

from ...evaluators import headline
from ...evaluators.evaluation import Evaluation
from ...evaluators.headline import family
from ..paper_tables import ci95, pm, row_evaluations
from ..render import Block, png, setup_plots
from .trust import EVALUATOR, LEAKAGE_IS, one_kind


def utility_of(row: pd.Series) -> dict[str, float]:
    for e in row_evaluations(row):
        if e.get("metric") == "utility":
            return dict((e.get("detail") or {}).get("accuracy") or {})
    return {}


def metric_of(row: pd.Series, metric: str) -> float:
    e = evaluation_of(row, metric)
    return float("nan") if e is None else float(e["value"])


def evaluation_of(row: pd.Series, metric: str) -> dict[str, Any] | None:
    """The evaluation of ``metric`` in a row, not a study's, that the headline rule picks
    (:func:`privbench.bench.evaluators.headline.headline`: an exact one, else the largest credible; e.g. the
    larger of the two fresh classifiers' reads of S); the first where none is credible; None if none."""
    mine = [e for e in row_evaluations(row) if e.get("metric") == metric and not (e.get("detail") or {}).get("study")]
    if len(mine) < 2:
        return mine[0] if mine else None
    objs = [Evaluation.from_dict({"evaluator": "", "kind": "", "stderr": math.nan, "detail": {}, **e}) for e in mine]
    try:
        return mine[objs.index(headline(objs, metric))]
    except InputError:
        return mine[0]


def preview_of(row: pd.Series) -> dict[str, Any] | None:
    """The stored release preview of a row (``detail["preview"]`` of the privacy classifier's ``map``; the
    headline may be another evaluation, which keeps none); None if none."""
    for e in row_evaluations(row):
        pv = (e.get("detail") or {}).get("preview")
        if pv:
            return pv
    return None


def evaluator_family(e: dict[str, Any]) -> str:
    """The family of an evaluation's evaluator (:func:`privbench.bench.evaluators.headline.family`): the
    two fresh classifiers that read S are one evaluator in the tables."""
    return family(str(e.get("evaluator", "")))


def labelled_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per row: distortion, attacker accuracy for S, the MI bound, every label's utility accuracy, and the
    evaluator of the S accuracy (``evaluator``) with its kind (``kind``)."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        e = evaluation_of(r, "map") or {}
        row = {"learner": r["learner"], "budget": r["budget"], "rep": r["rep"], "distortion": r["distortion"],
               "S accuracy": metric_of(r, "map"), "MI bound": metric_of(r, "mi"),
               "evaluator": evaluator_family(e), "kind": str(e.get("kind", ""))}
        row.update({f"acc {k}": v for k, v in utility_of(r).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def labelled_blocks(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    f = labelled_frame(g)
    if f.empty:
        return []
    cols = ["distortion", "S accuracy", "MI bound"] + sorted(c for c in f.columns if c.startswith("acc "))
    rows = []
    for (lr, b, ev), h in f.groupby(["learner", "budget", "evaluator"], sort=True):  # evaluators never averaged
        rows.append({"learner": lr, "budget": b, "seeds": len(h), EVALUATOR: ev, LEAKAGE_IS: one_kind(h["kind"]),
                     **{c: pm(h[c].mean(), ci95(h[c]), ".3f") for c in cols if c in h}})
    label = str(first_detail(g, "utility", "label") or "")
    majority = {k: float(v) for k, v in (first_detail(g, "utility", "majority") or {}).items()}
    majority_s = first_detail(g, "map", "majority")
    out = [Block("h3", "Attacker and utility accuracy (fresh classifiers on releases; mean ± 95% CI over seeds)",
                 toc=True),
           Block("p", "S accuracy: classifiers trained from scratch on releases of the training partition, "
                      "scored on releases of held-out data; S is read by two of them (one for S alone, one for "
                      "every label through a shared hidden layer) and each row takes the larger read; MI bound: "
                      "H(S) + mean log Q(S|Z), the larger of the two classifiers' "
                      "(nats, a lower bound); acc X: the shared classifier's accuracy for label X. One row per "
                      "evaluator of the S accuracy (its name and what its number is in the evaluator and "
                      "leakage-is columns). "
                      "Majority-class "
                      "accuracies: " + ", ".join(f"{k} {v:.3f}" for k, v in majority.items()) + "."),
           Block("table", table=pd.DataFrame(rows))]
    plt = setup_plots()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    util = f"acc {label}"
    several = f.groupby("learner")["evaluator"].nunique().gt(1).any()
    for (lr, ev), h in f.groupby(["learner", "evaluator"], sort=True):  # one line per evaluator, never a mean
        m = h.groupby("budget")[[c for c in ("distortion", "S accuracy", util) if c in h]].mean()
        m = m.sort_values("distortion")
        lab = f"{lr} [{ev}]" if several else lr
        axes[0].plot(m["distortion"], m["S accuracy"], "o-", label=lab)
        if util in m:
            axes[1].plot(m["distortion"], m[util], "o-", label=lab)
    if majority_s is not None:
        axes[0].axhline(float(majority_s), color="grey", ls="--", lw=1, label="majority class")
    axes[0].set_xlabel("distortion (held-out rows)")
    axes[0].set_ylabel("attacker accuracy for S")
    axes[1].set_xlabel("distortion (held-out rows)")
    axes[1].set_ylabel(f"utility accuracy ({label})")
    if label in majority:
        axes[1].axhline(majority[label], color="grey", ls="--", lw=1, label="majority class")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle(f"{name}: {g['scenario_id'].iloc[0]}", fontsize=10)
    out.append(Block("fig", f"{name.replace('/', '_')}-accuracy.png", png=png(fig)))
    grid = preview_figure(g)
    if grid is not None:
        out += [Block("p", "Sample releases (seed 0): the first 8 held-out images, original on top, then each "
                           "learner at each budget."), Block("fig", f"{name.replace('/', '_')}-samples.png",
                                                                     png=grid)]
    return out


def first_detail(g: pd.DataFrame, metric: str, key: str) -> Any:
    """``detail[key]`` of the first evaluation of ``metric`` (ok rows of ``g``) that has it; None if none."""
    for _, r in g[g["status"] == "ok"].iterrows():
        for e in row_evaluations(r):
            if e.get("metric") == metric and key in (e.get("detail") or {}):
                return e["detail"][key]
    return None


def preview_figure(g: pd.DataFrame) -> bytes | None:
    """A grid of the stored release previews (repetition 0): originals, then learner x budget rows."""
    from privbench.datasets import make_scenario

    ok = g[(g["status"] == "ok") & (g["rep"] == g["rep"].min())]
    rows: list[tuple[str, np.ndarray]] = []
    shape, first_rows = None, None
    for (lr, b), h in ok.groupby(["learner", "budget"], sort=True):
        pv = preview_of(h.iloc[0])
        if pv and pv.get("images"):
            shape = tuple(pv["shape"])
            first_rows = first_rows or pv.get("heldout_rows")
            imgs = np.asarray(pv["images"], dtype=float)
            same = [r for r in rows if r[0].split("\n")[0] == lr and np.array_equal(r[1], imgs)]
            if not same:  # a release that does not depend on the budget (identity) is shown once
                rows.append((f"{lr}\nb={b:g}", imgs))
    if not rows or shape is None:
        return None
    try:
        first = ok.iloc[0]
        sc = make_scenario(first["scenario"], json.loads(first["params"]))
        held = sc.partition()[1]  # type: ignore[attr-defined]
        originals = np.asarray(held.images[np.asarray(first_rows, dtype=int)], dtype=float)
        rows.insert(0, ("original", originals.reshape(len(originals), -1)))
    except Exception:  # noqa: BLE001 - the grid without originals
        pass
    plt = setup_plots()
    n_col = max(len(r[1]) for r in rows)
    fig, axes = plt.subplots(len(rows), n_col, figsize=(1.1 * n_col + 1.4, 1.1 * len(rows) + 0.3), squeeze=False)
    for i, (lab, imgs) in enumerate(rows):
        for j in range(n_col):
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if j < len(imgs):
                ax.imshow(imgs[j].reshape(shape), cmap="gray_r", vmin=0, vmax=1)
        axes[i][0].set_ylabel(lab, rotation=0, ha="right", va="center", fontsize=8)
    return png(fig)


def filter_table1_section(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """The ``filter-table1`` section: the generative filter's Table 1 beside our accuracies."""
    return filter_table1_blocks(labelled_frame(g), ref)


def filter_table1_blocks(f: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    t1 = ((ref.get("filter_tables") or {}).get("table1") or {})
    rows = []
    for (lr, b, ev), h in f.groupby(["learner", "budget", "evaluator"], sort=True):
        if lr.split(" (")[0] not in ("identity", "latent-filter", "gaussian-noise"):  # variants: "name (k=v)"
            continue
        rows.append({"data": f"ours: {lr}" + ("" if lr == "identity" else f" b={b:g}"), EVALUATOR: ev,
                     LEAKAGE_IS: one_kind(h["kind"]),
                     "private (>= 5)": round(float(h["S accuracy"].mean()), 3),
                     "utility (odd)": round(float(h.get("acc parity", pd.Series([np.nan])).mean()), 3),
                     "non-target (circle)": round(float(h.get("acc circle", pd.Series([np.nan])).mean()), 3)})
        if lr == "identity":
            rows[-1]["data"] = "ours: raw images"
    rows = [r for i, r in enumerate(rows) if not (r["data"] == "ours: raw images" and any(
        (q["data"], q[EVALUATOR]) == (r["data"], r[EVALUATOR]) for q in rows[:i]))]
    for k, v in t1.items():
        rows.append({"data": f"paper: {k}", EVALUATOR: "the paper's attacker", LEAKAGE_IS: "as printed",
                     "private (>= 5)": v.get("private"), "utility (odd)": v.get("utility"),
                     "non-target (circle)": v.get("non_target")})
    return [Block("h3", "Beside the filter paper's Table 1", toc=True), Block("table", table=pd.DataFrame(rows))]


def two_user_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per ok row and per-user evaluation: budget, rep, metric ('map', 'utility', 'raw map', ...), user, role,
    evaluator, kind and value."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        for e in row_evaluations(r):
            d = e.get("detail") or {}
            if "user" in d and "role" in d:
                rows.append({"budget": r["budget"], "rep": r["rep"], "metric": str(e["metric"]).replace("raw-", "raw "),
                             "user": d["user"], "role": d["role"], "evaluator": str(e.get("evaluator", "")),
                             "kind": str(e.get("kind", "")), "value": float(e["value"])})
    return pd.DataFrame(rows, columns=["budget", "rep", "metric", "user", "role", "evaluator", "kind", "value"])


def two_user_blocks(g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    t5 = ((ref.get("filter_tables") or {}).get("table5") or {})
    f = two_user_frame(g)
    filtered = f[~f["metric"].str.startswith("raw ")]
    raw = f[f["metric"].str.startswith("raw ")]
    rows = []
    for (b, ev), h in filtered.groupby(["budget", "evaluator"], sort=True):  # evaluators never averaged together
        r_h = raw[raw["budget"] == b]
        for user, paper_key in (("user-a", "user1"), ("user-b", "user2")):
            def m(src: pd.DataFrame, metric: str, role: str) -> str:  # one mean per evaluator, named if several
                sel = src[(src["metric"] == metric) & (src["user"] == user) & (src["role"] == role)]
                parts = {e: pm(v.mean(), ci95(v), ".3f") for e, v in sel.groupby("evaluator")["value"]}
                if len(parts) > 1:
                    return "; ".join(f"{e}: {t}" for e, t in parts.items())
                return next(iter(parts.values()), "n/a")
            rows.append({"budget": b, "user": user, EVALUATOR: ev, LEAKAGE_IS: one_kind(h["kind"]),
                         "private acc (filtered)": m(h, "map", "private"),
                         "utility acc (filtered)": m(h, "utility", "utility"),
                         "raw evaluator": ", ".join(sorted(set(r_h["evaluator"]))) or "n/a",
                         "private acc (raw)": m(r_h, "raw map", "private"),
                         "utility acc (raw)": m(r_h, "raw utility", "utility"),
                         "paper private / utility": f"{t5.get(paper_key, {}).get('private', '')} / "
                                                    f"{t5.get(paper_key, {}).get('utility', '')}"})
    return [Block("h3", "Two users (user-a hides >= 5, keeps parity; user-b hides parity, keeps >= 5)", toc=True),
            Block("p", "Accuracies of fresh classifiers trained on the pooled released training partition "
                       "(8 public parts raw, each user's part through its own filter), scored on each user's "
                       "half of the held-out images; 'raw' is the same with no filter. Mean ± 95% CI over seeds; "
                       "one row per evaluator of the filtered accuracies (its name and what its numbers are in "
                       "the evaluator and leakage-is columns)."),
            Block("table", table=pd.DataFrame(rows))]

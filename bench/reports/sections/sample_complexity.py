"""The ``sample-complexity`` section: gap vs training-set size split into the finite-sample part
(the plug-in's gap) and the optimisation part (learner minus plug-in, paired by repetition).

Seeds measured by different evaluators are never averaged into one number: a table row is one
(learner, n_train, the learner's evaluator, the plug-in's evaluator), and says which (with what each
leakage is: exact, lower bound or estimate).  A negative gap measured by a lower bound is marked.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..paper_tables import ci95, obs_label, pm
from ..render import Block, png, setup_plots
from .trust import EVALUATOR, LEAKAGE_IS, gap_text, kind_words, one_kind

PARTS = ("total", "finite_sample", "optimisation")
ENTRY = ["learner", "n_train", "evaluator", "plugin_evaluator"]


def sample_complexity_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per learner, n_train, budget and repetition: total gap, the plug-in's gap, their difference, and the
    evaluator (and leakage kind) of each side."""
    ok = g[g["status"] == "ok"]
    plug = ok[ok["learner"] == "plugin"].drop_duplicates(["n_train", "budget", "rep"]) \
        .set_index(["n_train", "budget", "rep"])
    rows = []
    for _, r in ok[ok["learner"] != "plugin"].iterrows():
        k = (r["n_train"], r["budget"], r["rep"])
        p = plug.loc[k] if k in plug.index else None
        fs = float("nan") if p is None else float(p["gap"])
        rows.append({"learner": r["learner"], "n_train": int(r["n_train"]), "budget": r["budget"], "rep": r["rep"],
                     "evaluator": str(r.get("leakage_evaluator", "")), "kind": str(r.get("leakage_kind", "")),
                     "plugin_evaluator": "" if p is None else str(p.get("leakage_evaluator", "")),
                     "plugin_kind": "" if p is None else str(p.get("leakage_kind", "")),
                     "total": float(r["gap"]), "finite_sample": fs, "optimisation": float(r["gap"]) - fs})
    return pd.DataFrame(rows)


def summary_frame(f: pd.DataFrame) -> pd.DataFrame:
    """Per entry (learner, n_train, both evaluators): mean and 95% half-width over repetitions of each part
    (one repetition's value: its mean over the budgets it has in the entry)."""
    rows = []
    for key, h in f.groupby(ENTRY, sort=True):
        per_rep = h.groupby("rep")[list(PARTS)].mean()
        rows.append({**dict(zip(ENTRY, key)), "kind": one_kind(h["kind"]), "plugin_kind": one_kind(h["plugin_kind"]),
                     "budgets": ", ".join(f"{b:g}" for b in sorted(h["budget"].unique())), "seeds": len(per_rep),
                     **{c: per_rep[c].mean() for c in PARTS}, **{c + "_ci": ci95(per_rep[c]) for c in PARTS},
                     "worst total": h["total"].max()})
    return pd.DataFrame(rows)


def shown_table(t: pd.DataFrame) -> pd.DataFrame:
    """The summary as people read it: each part with its evaluator and what its leakage is."""
    def opt_kind(r: pd.Series) -> str:  # the optimisation part is as good as the weaker of its two sides
        kinds = {r["kind"], r["plugin_kind"]} - {""}
        return "exact" if kinds == {"exact"} else next(iter(sorted(kinds - {"exact"})), "")
    return pd.DataFrame({
        "learner": t["learner"], "n_train": t["n_train"], "seeds": t["seeds"],
        "total gap": [gap_text(a, b, k) for a, b, k in zip(t["total"], t["total_ci"], t["kind"])],
        "finite-sample part": [gap_text(a, b, k) for a, b, k in
                               zip(t["finite_sample"], t["finite_sample_ci"], t["plugin_kind"])],
        "optimisation part": [pm(a, b) if kind_words(opt_kind(r)) == "exact" or math.isnan(a) else
                              f"{pm(a, b)} (from {opt_kind(r)} leakage)" for (_, r), a, b in
                              zip(t.iterrows(), t["optimisation"], t["optimisation_ci"])],
        "worst total": t["worst total"].round(4), EVALUATOR: t["evaluator"], LEAKAGE_IS: t["kind"],
        "plug-in evaluator": t["plugin_evaluator"].replace("", "n/a"), "plug-in leakage is": t["plugin_kind"],
        "budgets": t["budgets"]})


def entry_label(r: pd.Series, several: bool) -> str:
    """A learner's legend label: with its evaluator where it has several, and the kind where not exact."""
    kind = kind_words(r["kind"])
    tags = ([str(r["evaluator"])] if several else []) + ([kind] if kind != "exact" else [])
    return f"{r['learner']} [{', '.join(tags)}]" if tags else str(r["learner"])


def sample_complexity_blocks(name: str, g: pd.DataFrame) -> list[Block]:
    f = sample_complexity_frame(g)
    if f.empty:
        return [Block("p", "No learner rows to decompose.")]
    t = summary_frame(f)
    several = t.groupby("learner")["evaluator"].nunique().gt(1).any()
    text = []
    for _, h in t.groupby(["learner", "evaluator", "plugin_evaluator"], sort=True):
        h = h.sort_values("n_train")
        last = h.iloc[-1]
        tol = max(0.002, 2 * (last["total_ci"] if not math.isnan(last["total_ci"]) else 0.0))
        stop = next(int(r.n_train) for r in h.itertuples() if r.total <= last["total"] + tol)
        text.append(f"{entry_label(last, several)} ({kind_words(last['kind'])} leakage by {last['evaluator']}): its "
                    f"total gap is within {tol:.3f} nats of its value at n = {int(last['n_train'])} "
                    f"({last['total']:.4f}) from n = {stop} on; at the largest n the optimisation part is "
                    f"{pm(last['optimisation'], last['optimisation_ci'])} and the finite-sample part "
                    f"{last['finite_sample']:.4f}.")
    return [Block("h3", "Gap vs training-set size (mean ± 95% CI over seeds; each seed averaged over budgets)",
                  toc=True),
            Block("p", "One row per learner, training size and evaluator pair: seeds measured by different evaluators "
                       "are never averaged together. The finite-sample part is the plug-in's gap (its own evaluator: "
                       "plug-in columns), the optimisation part the learner's gap minus the plug-in's, paired by "
                       "repetition and budget."),
            Block("table", table=shown_table(t)), Block("p", " ".join(text)),
            Block("fig", f"{name.replace('/', '_')}-gap-vs-n.png", png=gap_vs_n_figure(name, g, t, several))]


def gap_vs_n_figure(name: str, g: pd.DataFrame, t: pd.DataFrame, several: bool) -> bytes:
    plt = setup_plots()
    fig, ax = plt.subplots(figsize=(6.6, 4.2))
    styles = {"total": ("o-", "total gap"), "finite_sample": ("s--", "finite-sample part (plug-in)"),
              "optimisation": ("^:", "optimisation part")}
    for _, h in t.groupby(["learner", "evaluator", "plugin_evaluator"], sort=True):
        h = h.sort_values("n_train")
        lab = entry_label(h.iloc[0], several)
        for col, (fmt, what) in styles.items():
            kind = h.iloc[0]["plugin_kind" if col == "finite_sample" else "kind"]
            hollow = {"markerfacecolor": "white"} if kind_words(kind) not in ("exact", "") else {}  # not exact
            ax.errorbar(h["n_train"], h[col], yerr=np.nan_to_num(h[col + "_ci"].astype(float)), fmt=fmt, capsize=3,
                        label=f"{lab}: {what}" if col != "finite_sample" else what, **hollow)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("training samples n")
    ax.set_ylabel("gap [nats], mean over budgets")
    ax.set_title(f"{name}\n{g['scenario_id'].iloc[0]}, observation {obs_label(g['observation'].iloc[0])}", fontsize=9)
    inexact = {kind_words(k) for k in pd.concat([t["kind"], t["plugin_kind"]])} - {"exact", ""}
    ax.legend(fontsize=8, title=f"hollow markers: {' / '.join(sorted(inexact))}" if inexact else None,
              title_fontsize=8)
    return png(fig)

"""The ``sample-complexity`` section: gap vs training-set size split into the finite-sample part
(the plug-in's gap) and the optimisation part (learner minus plug-in, paired by repetition)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..paper_tables import ci95, obs_label, pm
from ..render import Block, png, setup_plots


def sample_complexity_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per learner, n_train, budget and repetition: total gap, the plug-in's gap, their difference."""
    ok = g[g["status"] == "ok"]
    plug = ok[ok["learner"] == "plugin"].set_index(["n_train", "budget", "rep"])["gap"]
    rows = []
    for _, r in ok[ok["learner"] != "plugin"].iterrows():
        k = (r["n_train"], r["budget"], r["rep"])
        fs = float(plug.get(k, np.nan)) if k in plug.index else float("nan")
        rows.append({"learner": r["learner"], "n_train": int(r["n_train"]), "budget": r["budget"], "rep": r["rep"],
                     "total": float(r["gap"]), "finite_sample": fs, "optimisation": float(r["gap"]) - fs})
    return pd.DataFrame(rows)


def sample_complexity_blocks(name: str, g: pd.DataFrame) -> list[Block]:
    f = sample_complexity_frame(g)
    if f.empty:
        return [Block("p", "No learner rows to decompose.")]
    rows = []
    for (lr, n), h in f.groupby(["learner", "n_train"], sort=True):
        # per repetition: the mean over budgets, then mean and CI over repetitions
        per_rep = h.groupby("rep")[["total", "finite_sample", "optimisation"]].mean()
        rows.append({"learner": lr, "n_train": n, "seeds": len(per_rep),
                     **{c: per_rep[c].mean() for c in per_rep}, **{c + "_ci": ci95(per_rep[c]) for c in per_rep},
                     "worst total": h["total"].max()})
    t = pd.DataFrame(rows)
    shown = pd.DataFrame({
        "learner": t["learner"], "n_train": t["n_train"], "seeds": t["seeds"],
        "total gap": [pm(a, b) for a, b in zip(t["total"], t["total_ci"])],
        "finite-sample part (plug-in)": [pm(a, b) for a, b in zip(t["finite_sample"], t["finite_sample_ci"])],
        "optimisation part": [pm(a, b) for a, b in zip(t["optimisation"], t["optimisation_ci"])],
        "worst total": t["worst total"].round(4)})
    text = []
    for lr, h in t.groupby("learner"):
        h = h.sort_values("n_train")
        last = h.iloc[-1]
        tol = max(0.002, 2 * (last["total_ci"] if not math.isnan(last["total_ci"]) else 0.0))
        stop = next(int(r.n_train) for r in h.itertuples() if r.total <= last["total"] + tol)
        text.append(f"{lr}: its total gap is within {tol:.3f} nats of its value at n = {int(last['n_train'])} "
                    f"({last['total']:.4f}) from n = {stop} on; at the largest n the optimisation part is "
                    f"{last['optimisation']:.4f} ± {last['optimisation_ci']:.4f} and the finite-sample part "
                    f"{last['finite_sample']:.4f}.")
    plt = setup_plots()
    fig, ax = plt.subplots(figsize=(6.6, 4.2))
    styles = {"total": ("o-", "total gap"), "finite_sample": ("s--", "finite-sample part (plug-in)"),
              "optimisation": ("^:", "optimisation part")}
    for lr, h in t.groupby("learner"):
        h = h.sort_values("n_train")
        for col, (fmt, lab) in styles.items():
            ax.errorbar(h["n_train"], h[col], yerr=h[col + "_ci"].fillna(0), fmt=fmt, capsize=3,
                        label=f"{lr}: {lab}" if col != "finite_sample" else lab)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("training samples n")
    ax.set_ylabel("gap [nats], mean over budgets")
    ax.set_title(f"{name}\n{g['scenario_id'].iloc[0]}, observation {obs_label(g['observation'].iloc[0])}", fontsize=9)
    ax.legend(fontsize=8)
    return [Block("h3", "Gap vs training-set size (mean ± 95% CI over seeds; each seed averaged over budgets)"),
            Block("table", table=shown), Block("p", " ".join(text)),
            Block("fig", f"{name.replace('/', '_')}-gap-vs-n.png", png=png(fig))]

"""The ``privacy-utility`` section: privacy against utility (S accuracy against the utility label's
accuracy, both from the bench's fresh classifiers) for data without a known optimum, so that learners
and formulations whose budgets mean different things (a distortion, a chi-square level eta, a latent
KL divergence) compare on one figure.

An experiment asks for it in its suite YAML: ``paper: {sections: [privacy-utility]}``.  One point per
learner (variant), evaluator and budget: the mean over seeds, with 95% intervals on both axes; lower
left is private and useless, upper left is what the papers aim for (S hidden, utility kept).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..figures import pyplot, save
from ..paper_tables import ci95, pm
from ..render import Block
from .labelled import first_detail, labelled_frame
from .trust import EVALUATOR, LEAKAGE_IS, one_kind


def privacy_utility_points(f: pd.DataFrame, util: str) -> pd.DataFrame:
    """Per (learner, evaluator, budget) of a :func:`labelled_frame`: seeds, mean and 95% CI half-width of
    the S accuracy and of the utility accuracy column ``util``, and the evaluators' kind."""
    rows = []
    for (lr, ev, b), h in f.groupby(["learner", "evaluator", "budget"], sort=True):  # evaluators never averaged
        rows.append({"learner": lr, EVALUATOR: ev, "budget": b, "seeds": len(h), LEAKAGE_IS: one_kind(h["kind"]),
                     "s": float(h["S accuracy"].mean()), "s_ci": ci95(h["S accuracy"]),
                     "u": float(h[util].mean()), "u_ci": ci95(h[util]),
                     "distortion": float(h["distortion"].mean())})
    return pd.DataFrame(rows)


def privacy_utility_blocks(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """The section's blocks: a table of the points and the privacy-utility figure ([] without utility data)."""
    f = labelled_frame(g)
    label = first_detail(g, "utility", "label")
    util = f"acc {label}"
    if f.empty or label is None or util not in f:
        return []
    pts = privacy_utility_points(f.dropna(subset=["S accuracy", util]), util)
    if pts.empty:
        return []
    table = pd.DataFrame({"learner": pts["learner"], "budget": pts["budget"], "seeds": pts["seeds"],
                          EVALUATOR: pts[EVALUATOR], LEAKAGE_IS: pts[LEAKAGE_IS],
                          "S accuracy": [pm(m, c, ".3f") for m, c in zip(pts["s"], pts["s_ci"])],
                          f"{label} accuracy": [pm(m, c, ".3f") for m, c in zip(pts["u"], pts["u_ci"])],
                          "distortion": pts["distortion"].round(4)})
    majority = first_detail(g, "utility", "majority") or {}
    majority_s = first_detail(g, "map", "majority")
    out = [Block("h3", f"Privacy against utility (S accuracy against {label} accuracy)", toc=True),
           Block("p", f"One point per learner, evaluator and budget: the mean over seeds of the fresh classifiers' "
                      f"held-out accuracy for S (privacy: lower is better) and for the utility label {label} "
                      "(higher is better), ± the 95% interval. Budgets differ in meaning between learners and "
                      "formulations (a distortion, the chi-square level eta, a latent KL divergence), so the "
                      "figure compares them by what their releases give away and keep, not by budget."),
           Block("table", table=table)]
    out.append(Block("fig", f"{name.replace('/', '_')}-privacy-utility.png",
                     png=_figure(name, g, pts, label, majority_s, majority.get(label))))
    return out


def _figure(name: str, g: pd.DataFrame, pts: pd.DataFrame, label: str, majority_s: Any, majority_u: Any) -> bytes:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    several = pts.groupby("learner")[EVALUATOR].nunique().gt(1).any()
    for (lr, ev), h in pts.groupby(["learner", EVALUATOR], sort=True):
        h = h.sort_values("budget")
        lab = f"{lr} [{ev}]" if several else lr
        ax.errorbar(h["s"], h["u"], xerr=h["s_ci"].fillna(0), yerr=h["u_ci"].fillna(0), fmt="o-", ms=5,
                    capsize=2, lw=1.2, label=lab)
        if h[["s", "u"]].drop_duplicates().shape[0] > 1:  # a budget-independent release is not annotated
            for _, r in h.iterrows():
                ax.annotate(f"{r['budget']:g}", (r["s"], r["u"]), textcoords="offset points", xytext=(4, 3),
                            fontsize=6, color="dimgrey")
    if majority_s is not None:
        ax.axvline(float(majority_s), color="grey", ls="--", lw=1, label="majority class (S)")
    if majority_u is not None:
        ax.axhline(float(majority_u), color="grey", ls=":", lw=1, label=f"majority class ({label})")
    ax.set_xlabel("attacker accuracy for S (fresh classifier; lower is more private)")
    ax.set_ylabel(f"utility accuracy for {label} (fresh classifier)")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{name}: {g['scenario_id'].iloc[0]} (numbers: budgets)", fontsize=9)
    return save(fig)

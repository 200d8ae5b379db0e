"""The generative-filter paper's UCI tables beside our accuracies: Table 2 (UCI-Adult: private
gender, utility income) and Table 3 (UCI-Abalone: private sex, utility rings > 10).

Our rows: one per learner, budget and evaluator of the S accuracy (mean ± 95% CI over seeds of
the fresh classifiers' held-out accuracies); the paper's rows as printed (mean ± its spread).
The paper's AUROC columns are shown as printed; the bench measures accuracies only.  Table 2's
LMIFR (Song et al. 2018) is printed but not run: privbench has no LMIFR learner.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..paper_tables import ci95, pm
from ..render import Block
from .labelled import labelled_frame
from .trust import EVALUATOR, LEAKAGE_IS, one_kind

#: What each learner's budget is, for the "ours" row labels.
BUDGET_NAMES = {"latent-filter": "KL b", "vfae": "MMD weight"}
NO_BUDGET = ("identity", "constant")


def ours_rows(f: pd.DataFrame, utility: str, priv_col: str, util_col: str,
              paper_only: tuple[str, ...]) -> list[dict[str, Any]]:
    """Our accuracies per (learner, budget, evaluator); identity and constant once (no budget)."""
    rows: list[dict[str, Any]] = []
    for (lr, b, ev), h in f.groupby(["learner", "budget", "evaluator"], sort=True):
        what = {"identity": "raw data (identity)", "constant": "constant release"}.get(lr)
        if what is None:
            what = f"{lr} {BUDGET_NAMES.get(lr.split(' (')[0], 'budget')}={b:g}"  # variants: "name (k=v)"
        elif any(r["model"] == f"ours: {what}" and r[EVALUATOR] == ev for r in rows):
            continue
        u = h.get(f"acc {utility}", pd.Series(dtype=float))
        rows.append({"model": f"ours: {what}", EVALUATOR: ev, LEAKAGE_IS: one_kind(h["kind"]), "seeds": len(h),
                     priv_col: pm(h["S accuracy"].mean(), ci95(h["S accuracy"]), ".3f"),
                     util_col: pm(u.mean(), ci95(u), ".3f") if len(u) else "n/a", **{c: "" for c in paper_only}})
    return rows


def printed(v: dict[str, Any], key: str) -> str:
    """``key`` of a printed row as 'mean ± spread' ('' where the paper has none)."""
    if v.get(key) is None:
        return ""
    return f"{v[key]:.3f}" + (f" ± {v[key + '_pm']:.3f}" if v.get(key + "_pm") is not None else "")


def table2_section(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """``filter-table2``: UCI-Adult, Table 2 beside our accuracies."""
    t2 = (ref.get("filter_tables") or {}).get("table2") or {}
    priv, util = "private (gender) acc", "utility (income) acc"
    rows = ours_rows(labelled_frame(g), "income", priv, util, ("paper: private auroc", "paper: utility auroc"))
    for k, v in t2.items():
        rows.append({"model": f"paper: {k}", EVALUATOR: "the paper's classifier", LEAKAGE_IS: "as printed",
                     "seeds": "", priv: printed(v, "private"), util: printed(v, "utility"),
                     "paper: private auroc": printed(v, "private_auroc"),
                     "paper: utility auroc": printed(v, "utility_auroc")})
    return [Block("h3", "Beside the filter paper's Table 2 (UCI-Adult)", toc=True),
            Block("p", "Accuracies of fresh classifiers on held-out releases (mean ± 95% CI over seeds); the "
                       "paper's rows as printed. LMIFR is not run (no privbench learner); the paper's VFAE is "
                       "Louizos et al.'s semi-supervised model, ours the unsupervised one (a privbench task "
                       "has no utility label). AUROC is the paper's only: the bench measures accuracy."),
            Block("table", table=pd.DataFrame(rows))]


def table3_section(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """``filter-table3``: UCI-Abalone, Table 3 beside our accuracies."""
    t3 = (ref.get("filter_tables") or {}).get("table3") or {}
    priv, util = "private (sex) acc", "utility (rings > 10) acc"
    rows = ours_rows(labelled_frame(g), "rings", priv, util, ("paper: utility auroc",))
    for b, v in t3.items():
        rows.append({"model": f"paper: generative filter b={b}" if str(b) != "raw" else "paper: raw",
                     EVALUATOR: "the paper's classifier", LEAKAGE_IS: "as printed", "seeds": "",
                     priv: printed(v, "private"), util: printed(v, "utility"),
                     "paper: utility auroc": printed(v, "utility_auroc")})
    return [Block("h3", "Beside the filter paper's Table 3 (UCI-Abalone)", toc=True),
            Block("p", "Accuracies of fresh classifiers on held-out releases (mean ± 95% CI over seeds); the "
                       "paper's rows as printed (its b is the latent filter's KL budget). Sex has three "
                       "classes (male, female, infant), as in the paper. AUROC is the paper's only."),
            Block("table", table=pd.DataFrame(rows))]

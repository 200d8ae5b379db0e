"""The ``gap-table`` section: GAP Tables 2-5, learned parameters and MAP accuracy per D beside the
paper's printed learned / theory columns, GAP's family optimum and the optimum over all mechanisms.

Rows scored against a certified sandwich (``bound_kind`` "certified", :mod:`privbench.bench.beside`)
show GAP's family optimum from ``family_bound_at_budget``, the certified band
[``optimum_lower_at_budget``, ``optimum_at_budget``] in its own column, and the strict gap to the band's
achievable end; rows scored against the family itself show ``optimum_at_budget`` as the family optimum
and the committed sandwich table's band where it has the row.  One table row per (D, evaluator): seeds
measured by different evaluators are never averaged together.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from privbench.theory.mixture.stored import stored_sandwich

from ...scores import strict_gap
from ..paper_tables import ci95, pm, row_evaluations
from ..render import Block
from .trust import EVALUATOR, LEAKAGE_IS, frame_kind, gap_text

PARAMS = ("beta0", "beta1", "gamma0", "gamma1")
FAMILY = "family optimum"
BAND = "certified band [lower, achievable]"
GAP = "gap to achievable end"


def gap_table_blocks(g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """Learned parameters and MAP accuracy per D beside GAP Tables 2-5 (one table per dataset)."""
    out = [Block("h3", "Learned parameters vs GAP Tables 2-5", toc=True)]
    tables = (ref.get("gap_tables") or {})
    ok = g[(g["status"] == "ok") & (g["learner"] == "gap-mixture")]
    if ok.empty:
        return out + [Block("p", "No gap-mixture row to tabulate.")]
    out.append(Block("p", HOW + (CERTIFIED if (ok["bound_kind"] == "certified").any() else "")))
    for (sid, params), h in ok.groupby(["scenario_id", "params"], sort=True):
        p = json.loads(params)
        key = f"prior={p['prior']:g},sigma0={p['sigma0']:g}"
        printed = tables.get(key, {})
        rows = [gap_row(hb, b, ev, printed) for (b, ev), hb in h.groupby(["budget", "leakage_evaluator"], sort=True)]
        seeds = h["rep"].nunique()
        out += [Block("p", f"**{sid}** ({key}, mu = 3, sigma1 = 1); means over {seeds} seed{'s' * (seeds != 1)}."),
                Block("table", table=pd.DataFrame(rows))]
    return out


HOW = ("One row per D and evaluator (seeds measured by different evaluators are never averaged together); "
       "beta0 ... gamma1: the learned parameters, mean over seeds; P_detect (ours): MAP accuracy of the release, "
       "mean ± 95% CI over seeds; paper P_detect / paper theory: GAP's printed learned and theory columns. ")
CERTIFIED = (f"Rows scored against the certified sandwich of the optimum over all mechanisms: '{FAMILY}' is GAP's "
             "general family at D (family_bound_at_budget, what the paper's theory column computes), "
             f"'{BAND}' the sandwich at D (optimum_lower_at_budget, optimum_at_budget), and '{GAP}' the strict gap "
             "(leakage minus the achievable end at max(distortion, D)), mean ± 95% CI over seeds. A negative gap "
             "can be real here (the band is not a point), but only where the leakage is exact; one measured by a "
             "lower bound is marked ⚠.")


def gap_row(hb: pd.DataFrame, budget: float, evaluator: str, printed: dict[Any, Any]) -> dict[str, Any]:
    """One row of a GAP table: the rows ``hb`` of one D measured by one evaluator (over seeds)."""
    pars = []
    for _, r in hb.iterrows():
        ev = next((e for e in row_evaluations(r) if e.get("evaluator") == "exact-mixture-params"), None)
        if ev is not None:
            pars.append(ev["detail"].get("params", {}))
    mean_p = {k: round(float(np.mean([q[k] for q in pars])), 4) for k in PARAMS} if pars else {}
    pr = printed.get(int(budget)) or printed.get(str(int(budget))) or {}
    kind = frame_kind(hb)
    per_seed = hb.assign(sg=strict_gap(hb["leakage"].astype(float), hb["optimum_at_distortion"].astype(float),
                                       hb["optimum_at_budget"].astype(float))).groupby("rep")["sg"].mean()
    certified = (hb["bound_kind"] == "certified").all()
    band = band_of(hb) if certified else certified_band(str(hb["scenario_id"].iloc[0]), float(budget),
                                                        str(hb["observation"].iloc[0]))
    # what the paper compares first (ours beside its printed columns), then where our numbers come from
    return {"D": budget, "P_detect (ours)": pm(hb["leakage"].mean(), ci95(hb["leakage"])),
            "paper P_detect": pr.get("p_detect", ""), FAMILY: family_optimum(hb), "paper theory": pr.get("theory", ""),
            BAND: band, GAP if certified else "gap to family optimum": gap_text(per_seed.mean(), ci95(per_seed), kind),
            EVALUATOR: evaluator, LEAKAGE_IS: kind, "distortion": pm(hb["distortion"].mean(), ci95(hb["distortion"])),
            **mean_p}


def family_optimum(hb: pd.DataFrame) -> Any:
    """GAP's family optimum at the budget: ``family_bound_at_budget`` on certified rows (NaN -> ''), the
    optimum the rows are scored against on family rows."""
    r = hb.iloc[0]
    if r["bound_kind"] == "certified":
        v = r.get("family_bound_at_budget")
        return "" if v is None or pd.isna(v) else round(float(v), 4)
    return round(float(r["optimum_at_budget"]), 4)


def band_of(hb: pd.DataFrame) -> str:
    """The certified band the rows carry: [optimum_lower_at_budget, optimum_at_budget]."""
    r = hb.iloc[0]
    lo, hi = r.get("optimum_lower_at_budget"), r.get("optimum_at_budget")
    if lo is None or pd.isna(lo) or pd.isna(hi):
        return ""
    return f"[{float(lo):.4f}, {float(hi):.4f}]"


def certified_band(scenario_id: str, budget: float, observation: str) -> str:
    """The certified sandwich of the optimum over all mechanisms, '' where the table lacks the row."""
    got = stored_sandwich(scenario_id, budget, "map", observation)
    return "" if got is None else f"[{got['lower']:.4f}, {got['upper']:.4f}]"

"""The ``gap-table`` section: GAP Tables 2-5, learned parameters and exact MAP accuracy per D
beside the paper's printed learned / theory columns, GAP's family optimum and the certified
sandwich of the optimum over all mechanisms (from the committed table, where it has the row)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from privbench.theory.mixture.stored import stored_sandwich

from ..paper_tables import ci95, pm, row_evaluations
from ..render import Block


def gap_table_blocks(g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    """Learned parameters and exact MAP accuracy per D beside GAP Tables 2-5."""
    out = [Block("h3", "Learned parameters vs GAP Tables 2-5")]
    tables = (ref.get("gap_tables") or {})
    ok = g[(g["status"] == "ok") & (g["learner"] == "gap-mixture")]
    for (sid, params), h in ok.groupby(["scenario_id", "params"], sort=True):
        p = json.loads(params)
        key = f"prior={p['prior']:g},sigma0={p['sigma0']:g}"
        printed = tables.get(key, {})
        rows = []
        for b, hb in h.groupby("budget", sort=True):
            pars = []
            for _, r in hb.iterrows():
                ev = next((e for e in row_evaluations(r) if e.get("evaluator") == "exact-mixture-params"), None)
                if ev is not None:
                    pars.append(ev["detail"].get("params", {}))
            mean_p = {k: float(np.mean([q[k] for q in pars])) for k in ("beta0", "beta1", "gamma0", "gamma1")} \
                if pars else {}
            pr = printed.get(int(b)) or printed.get(str(int(b))) or {}
            rows.append({"D": b, **{k: round(v, 4) for k, v in mean_p.items()},
                         "distortion": pm(hb["distortion"].mean(), ci95(hb["distortion"])),
                         "P_detect (ours, exact)": pm(hb["leakage"].mean(), ci95(hb["leakage"])),
                         "family optimum (ours)": round(float(hb["optimum_at_budget"].iloc[0]), 4),
                         "all mechanisms [lower, upper]": certified_band(sid, float(b), str(hb["observation"].iloc[0])),
                         "paper P_detect": pr.get("p_detect", ""), "paper theory": pr.get("theory", "")})
        out += [Block("p", f"{sid} ({key}, mu = 3, sigma1 = 1), family general; parameters are means "
                           f"over {h['rep'].nunique()} seeds."), Block("table", table=pd.DataFrame(rows))]
    return out


def certified_band(scenario_id: str, budget: float, observation: str) -> str:
    """The certified sandwich of the optimum over all mechanisms, '' where the table lacks the row."""
    got = stored_sandwich(scenario_id, budget, "map", observation)
    return "" if got is None else f"[{got['lower']:.4f}, {got['upper']:.4f}]"

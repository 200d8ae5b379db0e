"""The ``per-component`` section: per-component distortion and leakage, learned vs PPAN Prop. 2
(PPAN appendix H)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..paper_tables import row_evaluations
from ..render import Block
from .trust import EVALUATOR, LEAKAGE_IS, KIND_WORDS

#: Where the learned per-component numbers come from (bench/evaluators/gaussian.py ``with_components``):
#: sample MSE and the Gaussian approximation of I(S_i; Z_i) on fresh samples, a lower bound.
LEARNED_SOURCE = {EVALUATOR: "gaussian-approx per component (fresh samples)", LEAKAGE_IS: KIND_WORDS["lower-bound"]}
OPTIMUM_SOURCE = {EVALUATOR: "theory (Prop. 2 mechanism)", LEAKAGE_IS: KIND_WORDS["exact"]}


def per_component_blocks(g: pd.DataFrame) -> list[Block]:
    """Per-component distortion and Gaussian-approximation leakage, learned vs Prop. 2's allocation."""
    from privbench.datasets import make_scenario
    from privbench.theory.optimum import optimum

    ok = g[g["status"] == "ok"]
    rows = []
    for (lr, b), h in ok.groupby(["learner", "budget"], sort=True):
        comps_d, comps_i = [], []
        for _, r in h.iterrows():
            for e in row_evaluations(r):
                det = e.get("detail") or {}
                if "per_component_distortion" in det:
                    comps_d.append(det["per_component_distortion"])
                if "per_component_mi" in det:
                    comps_i.append(det["per_component_mi"])
        if not comps_d:
            continue
        d = np.mean(comps_d, axis=0)
        mi = np.mean(comps_i, axis=0) if comps_i else np.full_like(d, np.nan)
        rows.append({"learner": lr, "budget": b, **LEARNED_SOURCE,
                     **{f"D{i + 1}": round(float(x), 3) for i, x in enumerate(d)},
                     **{f"I{i + 1}": round(float(x), 3) for i, x in enumerate(mi)}})
    if not rows:
        return []
    first = ok.iloc[0]
    sc = make_scenario(first["scenario"], json.loads(first["params"]))
    rho = np.asarray(json.loads(first["params"]).get("rho") or [], dtype=float)
    for b in sorted(ok["budget"].unique()):
        mech = optimum(sc, float(b), "mi", "useful").mechanism or {}
        A, N = np.asarray(mech.get("A")), np.asarray(mech.get("noise_cov"))
        if A.ndim != 2 or rho.size != A.shape[0]:
            continue
        a, nv = np.diag(A), np.diag(N)
        d = (1 - a) ** 2 + nv
        with np.errstate(divide="ignore", invalid="ignore"):
            snr = np.where(a * a + nv > 0, a * a / (a * a + nv), 0.0)
        mi = -0.5 * np.log1p(-(rho**2) * snr)
        rows.append({"learner": "optimum (Prop. 2)", "budget": b, **OPTIMUM_SOURCE,
                     **{f"D{i + 1}": round(float(x), 3) for i, x in enumerate(d)},
                     **{f"I{i + 1}": round(float(x), 3) for i, x in enumerate(mi)}})
    tab = pd.DataFrame(rows).sort_values(["budget", "learner"]).reset_index(drop=True)
    return [Block("h3", "Per-component picture (PPAN appendix H)", toc=True),
            Block("p", "Di: mean squared error of component i, E(Z_i - U_i)^2; Ii: leakage of component i, "
                       "I(S_i; Z_i) (learned: Gaussian approximation from fresh samples, a lower bound; optimum: "
                       "exact; the evaluator and leakage-is columns say which). "
                       "rho = " + ", ".join(f"{x:g}" for x in rho) + ". The optimum spends the budget on the "
                       "most correlated components first (reverse water-filling on rho^2)."),
            Block("table", table=tab)]

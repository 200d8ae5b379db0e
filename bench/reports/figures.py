"""Tradeoff figures: learned points (with 95% intervals) over the optimal curve, one PNG per panel."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from privbench.datasets.errors import InputError

from .tables import UNIT_LABEL, aggregate_points


def optimum_curve(first: pd.Series, d_max: float) -> tuple[np.ndarray, np.ndarray] | None:
    from privbench.datasets import make_scenario
    from privbench.theory import curve

    try:
        sc = make_scenario(first["scenario"], json.loads(first["params"]))
        grid = np.linspace(0.0, max(d_max, 1e-9) * 1.1, 60 if first["scenario"] != "binary-gmm" else 25)
        fam = first.get("family")
        obs = first.get("observation")
        vals = curve(sc, grid, first["privacy"], obs if isinstance(obs, str) and obs else None,
                     fam if isinstance(fam, str) and fam else None)
        keep = np.isfinite(vals)
        return grid[keep], vals[keep]
    except InputError:
        return None


def tradeoff_figures(df: pd.DataFrame) -> list[tuple[str, bytes]]:
    """One PNG per scenario/observation/privacy: optimum curve and learned points with 95% CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    pts = aggregate_points(df)
    if pts.empty:
        return []
    sns.set_theme(style="whitegrid", context="notebook")
    learners = sorted(pts["learner"].unique())
    colours = sns.color_palette("colorblind" if len(learners) <= 10 else "tab20", len(learners))
    palette = dict(zip(learners, colours))  # one colour per learner, the same in every plot
    figs = []
    ok = df[df["status"] == "ok"]
    for key, g in pts.groupby(["scenario_id", "observation", "privacy", "family"], dropna=False, sort=True):
        sid, obs, priv, fam = key
        first = ok[(ok["scenario_id"] == sid) & (ok["observation"].fillna("") == obs)
                   & (ok["privacy"] == priv)].iloc[0]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        opt = optimum_curve(first, float(np.nanmax(g["distortion"] + g["distortion_ci"].fillna(0))))
        if opt is not None:
            kind = "family bound" if first["bound_kind"] == "family" else "optimum"
            ax.plot(opt[0], opt[1], color="black", lw=2, label=f"{kind}{f' ({fam})' if fam else ''}")
        for lr, h in g.groupby("learner"):
            ax.errorbar(h["distortion"], h["leakage"], xerr=h["distortion_ci"].fillna(0),
                        yerr=h["leakage_ci"].fillna(0), fmt="o", ms=6, capsize=3, color=palette[lr],
                        label=f"{lr} (n={int(h['n'].max())})")
            flagged = h[h["below_bound"] > 0]
            if not flagged.empty:
                ax.scatter(flagged["distortion"], flagged["leakage"], marker="x", s=90, color="red", zorder=5)
        ax.set_xlabel(f"distortion ({first.get('distortion_evaluator', '')})")
        ax.set_ylabel(UNIT_LABEL.get(priv, priv))
        ax.set_title(f"{sid}  {obs or ''}  {priv}", fontsize=10)
        ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{sid}-{obs}-{priv}-{fam}") + ".png"
        figs.append((name, buf.getvalue()))
    return figs

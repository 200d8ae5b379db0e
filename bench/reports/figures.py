"""Figures: per experiment panel the tradeoff (learned points over the optimal curve, budgets marked)
beside the strict gap against the budget, one PNG each at 160 dpi; and the learners x experiments
heatmap of the first screen.  Markers tell exact leakage from lower bounds and estimates, colour x line
style tell learners apart (:mod:`.style`), flags are drawn and explained in the legend."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from privbench.datasets.errors import InputError

from .points import point_frame
from .ranking import scored_rows
from .style import (FLAG_MARK, KIND_MARKER, PRIVACY_UNIT, distortion_label, learner_styles, privacy_label)

DPI = 160


def optimum_curve(first: pd.Series, d_max: float, lower: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """(distortions, optimal leakage) from 0 to 1.1 d_max of the row's scenario, privacy, observation and
    family; ``lower``: the certified lower end instead (``Optimum.lower``). None where theory has none."""
    from privbench.datasets import make_scenario
    from privbench.theory import curve, optimum

    try:
        sc = make_scenario(first["scenario"], json.loads(first["params"]))
        grid = np.linspace(0.0, max(d_max, 1e-9) * 1.1, 60 if first["scenario"] != "binary-gmm" else 25)
        fam = first.get("family")
        obs = first.get("observation")
        obs, fam = (obs if isinstance(obs, str) and obs else None), (fam if isinstance(fam, str) and fam else None)
        if lower:
            lows = [getattr(optimum(sc, float(b), first["privacy"], obs, fam), "lower", None) for b in grid]
            vals = np.array([np.nan if lo is None else lo for lo in lows], dtype=float)
        else:
            vals = curve(sc, grid, first["privacy"], obs, fam)
        keep = np.isfinite(vals)
        return (grid[keep], vals[keep]) if keep.any() else None
    except InputError:
        return None


def save(fig: Any) -> bytes:
    """The figure as a 256-colour PNG at :data:`DPI` (a third of the bytes of RGBA, same look); closed."""
    import matplotlib.pyplot as plt
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB").quantize(256)
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    return plt


def draw_bound(ax: Any, first: pd.Series, d_max: float) -> list[Any]:
    """The optimum (solid), family bound (dash-dot) or certified band (shaded between its ends)."""
    opt = optimum_curve(first, d_max)
    if opt is None:
        return []
    kind = str(first["bound_kind"])
    fam = first.get("family") if isinstance(first.get("family"), str) else ""
    if kind == "family":
        return ax.plot(opt[0], opt[1], color="black", lw=2, ls="-.", label=f"family bound ({fam}): best of "
                       "a mechanism family")
    handles = ax.plot(opt[0], opt[1], color="black", lw=2, label="optimum over all mechanisms"
                      if kind == "exact" else "certified sandwich: achievable end")
    if kind == "certified":
        low = optimum_curve(first, d_max, lower=True)
        if low is not None:
            up = np.interp(low[0], opt[0], opt[1])
            handles.append(ax.fill_between(low[0], low[1], up, color="grey", alpha=0.3,
                                           label="certified sandwich: optimum lies in the band"))
    return handles


def draw_learner(ax_t: Any, ax_g: Any, h: pd.DataFrame, colour: str, ls: str) -> None:
    """One learner's points (one evaluator): tradeoff on ``ax_t``, strict gap vs budget on ``ax_g``."""
    marker, filled, _ = KIND_MARKER.get(str(h["trust"].iloc[0]), ("s", True, ""))
    face = colour if filled else "white"
    h = h.sort_values("budget")
    for ax, x, y, col_x in ((ax_t, "distortion", "leakage", "distortion"), (ax_g, "budget", "strict_gap", None)):
        xerr = None if col_x is None else (h["distortion_hi"] - h["distortion_lo"]).fillna(0).to_numpy() / 2
        yerr = (h[f"{y}_hi"] - h[f"{y}_lo"]).fillna(0).to_numpy() / 2
        ax.errorbar(h[x], h[y], xerr=xerr, yerr=yerr, color=colour, ls=ls, lw=1.2, marker=marker, ms=7,
                    mfc=face, mec=colour, mew=1.5, capsize=3, alpha=0.9, zorder=3)
        over = h[h["over_budget"] > 0]
        ax.scatter(over[x], over[y], s=260, facecolors="none", edgecolors="red", linewidths=1.5, marker="s",
                   zorder=4)
        below = h[h["below_bound"] > 0]
        ax.scatter(below[x], below[y], s=120, color="red", marker="x", linewidths=2, zorder=5)


def legend_handles(styles: dict[str, tuple[str, str]], kinds: set[str]) -> list[Any]:
    from matplotlib.lines import Line2D

    out = [Line2D([], [], color=c, ls=ls, lw=2, label=lr) for lr, (c, ls) in styles.items()]
    for k, (m, filled, text) in KIND_MARKER.items():
        if k in kinds:
            out.append(Line2D([], [], ls="", marker=m, ms=8, mfc="black" if filled else "white", mec="black",
                              label=text))
    out += [Line2D([], [], ls="", marker="s", ms=13, mfc="none", mec="red",
                   label=f"{FLAG_MARK['over budget']} over budget beyond tolerance"),
            Line2D([], [], ls="", marker="x", ms=9, mec="red", mew=2, label="! below the bound (evaluator failure)"),
            Line2D([], [], color="grey", ls=":", lw=1.5, label="budgets given")]
    return out


def panel_figure(g: pd.DataFrame, pts: pd.DataFrame, title: str) -> bytes:
    """Tradeoff (left) and strict gap vs budget (right) of one experiment panel, legend below."""
    plt = pyplot()
    fig, (ax_t, ax_g) = plt.subplots(1, 2, figsize=(13, 5.2))
    first = g.iloc[0]
    multi_n = pts["n_train"].nunique() > 1
    pts = pts.assign(label=pts["learner"] + (" n=" + pts["n_train"].astype(int).astype(str) if multi_n else ""))
    styles = learner_styles(list(pts["label"].unique()))
    d_max = float(np.nanmax(np.r_[pts["distortion_hi"].fillna(pts["distortion"]), pts["budget"]]))
    handles = draw_bound(ax_t, first, d_max)
    for b in sorted(pts["budget"].unique()):
        ax_t.axvline(b, color="grey", ls=":", lw=1.2, zorder=1)
    for (lab, _), h in pts.groupby(["label", "leakage_evaluator"], sort=True):
        draw_learner(ax_t, ax_g, h, *styles[lab])
    ax_g.axhline(0, color="black", lw=2)
    unit = PRIVACY_UNIT.get(str(first["privacy"]), "")
    ax_t.set(xlabel=distortion_label(first), ylabel=privacy_label(first["privacy"]), title="tradeoff")
    ax_g.set(xlabel="budget (" + distortion_label(first) + " allowed)",
             ylabel=f"strict gap [{unit}]", title="strict gap = leakage − optimum at max(d, budget)")
    ax_g.set_xticks(sorted(pts["budget"].unique()))
    fig.suptitle(title, fontsize=13, x=0.01, ha="left")
    extra = legend_handles(styles, set(pts["trust"]))
    fig.legend(handles=handles + extra, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=10,
               frameon=False)
    fig.tight_layout()
    return save(fig)


def tradeoff_figures(df: pd.DataFrame) -> list[tuple[str, bytes]]:
    """(file name, PNG) per experiment panel of the scored rows of ``df``: tradeoff beside gap vs budget."""
    scored = scored_rows(df)
    if scored.empty:
        return []
    pts = point_frame(scored)
    out = []
    for panel, g in scored.groupby("panel", sort=True):
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in panel) + ".png"
        out.append((name, panel_figure(g, pts[pts["panel"] == panel], panel)))
    return out


def heatmap_png(values: pd.DataFrame, text: pd.DataFrame, title: str) -> bytes:
    """The learners x experiments heatmap: colour = strict gap (square-root scale; grey = over budget or not
    run), each cell annotated with its number and marks."""
    from matplotlib.colors import PowerNorm

    plt = pyplot()
    n_l, n_p = values.shape
    fig, ax = plt.subplots(figsize=(max(8.0, 1.0 * n_p + 2.5), max(3.0, 0.45 * n_l + 2.2)))
    v = values.to_numpy(dtype=float)
    finite = v[np.isfinite(v)]
    vmax = float(np.nanpercentile(np.clip(finite, 0, None), 95)) if finite.size else 1.0
    cmap = plt.get_cmap("YlOrRd").with_extremes(bad="#d9d9d9")
    ax.imshow(np.ma.masked_invalid(np.clip(v, 0, None)), cmap=cmap, norm=PowerNorm(0.5, 0, max(vmax, 1e-6)),
              aspect="auto")
    for i in range(n_l):
        for j in range(n_p):
            t = text.iat[i, j]
            dark = np.isfinite(v[i, j]) and v[i, j] > 0.55 * vmax
            ax.text(j, i, t, ha="center", va="center", fontsize=10 if "\n" not in t else 8.5,
                    color="white" if dark else "black", fontweight="bold" if "★" in t else "normal")
    ax.set_xticks(range(n_p), labels=list(values.columns), rotation=35, ha="right", fontsize=11)
    ax.set_yticks(range(n_l), labels=list(values.index), fontsize=11)
    ax.grid(False)
    ax.set_title(title, fontsize=11, loc="left")
    fig.tight_layout()
    return save(fig)

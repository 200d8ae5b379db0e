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


def scenario_of(first: pd.Series) -> tuple[Any, str | None, str | None]:
    """(scenario, observation, family) of a stored row; observation and family None where empty."""
    from privbench.datasets import make_scenario

    fam, obs = first.get("family"), first.get("observation")
    return (make_scenario(first["scenario"], json.loads(first["params"])),
            obs if isinstance(obs, str) and obs else None, fam if isinstance(fam, str) and fam else None)


def distortion_of(first: pd.Series) -> str | None:
    """The stored row's other distortion (``distortion_name``; None: the scenario's own or an older part)."""
    d = first.get("distortion_name")
    return d if isinstance(d, str) and d else None


def optimum_curve(first: pd.Series, d_max: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(distortions, optimal leakage) from 0 to 1.1 d_max of the row's scenario, privacy, observation and
    family; None where theory has none."""
    from privbench.theory import curve

    try:
        sc, obs, fam = scenario_of(first)
        grid = np.linspace(0.0, max(d_max, 1e-9) * 1.1, 60 if first["scenario"] != "binary-gmm" else 25)
        vals = curve(sc, grid, first["privacy"], obs, fam, distortion=distortion_of(first))
        keep = np.isfinite(vals)
        return (grid[keep], vals[keep]) if keep.any() else None
    except InputError:
        return None


def sandwich(first: pd.Series, budgets: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(budgets, lower ends, achievable ends) of a certified bound at the experiment's budgets only (a
    certified solve off its stored table takes seconds per budget); None where theory has none."""
    from privbench.theory import optimum

    try:
        sc, obs, fam = scenario_of(first)
        opts = [optimum(sc, float(b), first["privacy"], obs, fam, distortion=distortion_of(first)) for b in budgets]
    except InputError:
        return None
    low = np.array([np.nan if getattr(o, "lower", None) is None else o.lower for o in opts], dtype=float)
    return np.asarray(budgets, dtype=float), low, np.array([o.value for o in opts], dtype=float)


def save(fig: Any, tight: bool = True) -> bytes:
    """The figure as a 256-colour PNG at :data:`DPI` (a third of the bytes of RGBA, same look); closed.
    ``tight``: crop to what is drawn (one more layout pass)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    plt.close(fig)
    img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB").quantize(256)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=6)
    return out.getvalue()


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    return plt


def draw_bound(ax: Any, first: pd.Series, d_max: float, budgets: list[float]) -> list[Any]:
    """The optimum (solid), family bound (dash-dot), or the certified sandwich at the budgets (its achievable
    end dashed, the band between its ends shaded)."""
    kind = str(first["bound_kind"])
    if kind == "certified":
        band = sandwich(first, budgets)
        if band is None:
            return []
        return ax.plot(band[0], band[2], color="black", lw=2, ls="--", marker="_", ms=14,
                       label="certified sandwich: achievable end") + [
            ax.fill_between(band[0], band[1], band[2], color="grey", alpha=0.35, step=None,
                            label="certified sandwich: the optimum lies in the band")]
    opt = optimum_curve(first, d_max)
    if opt is None:
        return []
    if kind == "family":
        fam = first.get("family") if isinstance(first.get("family"), str) else ""
        return ax.plot(opt[0], opt[1], color="black", lw=2, ls="-.", label=f"family bound ({fam}): best of "
                       "a mechanism family")
    return ax.plot(opt[0], opt[1], color="black", lw=2, label="optimum over all mechanisms")


def draw_learner(ax_t: Any, ax_g: Any, h: pd.DataFrame, colour: str, ls: str, ms: float = 7.0) -> None:
    """One learner's points (one evaluator): tradeoff on ``ax_t``, strict gap vs budget on ``ax_g`` (at the
    budget's slot ``slot``, dodged sideways per learner so that no point hides another)."""
    marker, filled, _ = KIND_MARKER.get(str(h["trust"].iloc[0]), ("s", True, ""))
    face = colour if filled else "white"
    h = h.sort_values("budget")
    for ax, x, y, col_x in ((ax_t, "distortion", "leakage", "distortion"), (ax_g, "slot", "strict_gap", None)):
        xerr = None if col_x is None else (h["distortion_hi"] - h["distortion_lo"]).fillna(0).to_numpy() / 2
        yerr = (h[f"{y}_hi"] - h[f"{y}_lo"]).fillna(0).to_numpy() / 2
        ax.errorbar(h[x], h[y], xerr=xerr, yerr=yerr, color=colour, ls=ls, lw=1.2, marker=marker, ms=ms,
                    mfc=face, mec=colour, mew=1.5, capsize=3, alpha=0.9, zorder=3)
        over = h[h["over_budget"] > 0]
        ax.scatter(over[x], over[y], s=260, facecolors="none", edgecolors="red", linewidths=1.5, marker="s",
                   zorder=4)
        below = h[h["below_bound"] > 0]
        ax.scatter(below[x], below[y], s=120, color="red", marker="x", linewidths=2, zorder=5)


def clip_axes(ax: Any, privacy: str, d_max: float) -> None:
    """Keep the tradeoff axes on possible values (distortion and leakage >= 0, an accuracy <= 1): wide
    intervals of a few seeds are cut at the edge rather than stretching the axes."""
    lo_x, hi_x = ax.get_xlim()
    ax.set_xlim(max(lo_x, -0.03 * d_max), min(hi_x, 1.15 * d_max))
    lo_y, hi_y = ax.get_ylim()
    span = hi_y - lo_y
    ax.set_ylim(max(lo_y, -0.03 * span), min(hi_y, 1.02) if privacy == "map" else hi_y)


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
    fig, (ax_t, ax_g) = plt.subplots(1, 2, figsize=(13, 6.6))
    first = g.iloc[0]
    multi_n = pts["n_train"].nunique() > 1
    pts = pts.assign(label=pts["learner"] + (" n=" + pts["n_train"].astype(int).astype(str) if multi_n else ""))
    styles = learner_styles(list(pts["label"].unique()))
    d_max = float(np.nanmax(np.r_[pts["distortion_hi"].fillna(pts["distortion"]), pts["budget"]]))
    handles = draw_bound(ax_t, first, d_max, sorted(pts["budget"].unique()))
    for b in sorted(pts["budget"].unique()):
        ax_t.axvline(b, color="grey", ls=":", lw=1.2, zorder=1)
    budgets = sorted(pts["budget"].unique())
    series = list(pts.groupby(["label", "leakage_evaluator"], sort=True))
    width = min(0.6, 0.12 * len(series)) if len(series) > 1 else 0.0
    for i, ((lab, _), h) in enumerate(series):
        dodge = (i / (len(series) - 1) - 0.5) * width if len(series) > 1 else 0.0
        ms = max(5.0, 12.0 - 7.0 * i / max(len(series) - 1, 1))  # later, smaller: coinciding points show as rings
        draw_learner(ax_t, ax_g, h.assign(slot=h["budget"].map(budgets.index) + dodge), *styles[lab], ms=ms)
    ax_g.axhline(0, color="black", lw=2)
    clip_axes(ax_t, str(first["privacy"]), float(np.nanmax(np.r_[pts["distortion"], pts["budget"]])) * 1.1)
    unit = PRIVACY_UNIT.get(str(first["privacy"]), "")
    ax_t.set(xlabel=distortion_label(first), ylabel=privacy_label(first["privacy"]), title="tradeoff")
    ax_g.set(xlabel="budget (" + distortion_label(first) + " allowed)",
             ylabel=f"strict gap [{unit}]", title="strict gap = leakage − optimum at max(d, budget)")
    ax_g.set_xticks(range(len(budgets)), labels=[f"{b:g}" for b in budgets])
    ax_g.set_xlim(-0.6, len(budgets) - 0.4)
    fig.suptitle(title, fontsize=13, x=0.01, ha="left")
    extra = legend_handles(styles, set(pts["trust"]))
    rows = -(-len(handles + extra) // 3)
    fig.legend(handles=handles + extra, loc="lower center", bbox_to_anchor=(0.5, 0.008), ncol=3, fontsize=10,
               frameon=False)
    fig.tight_layout(rect=(0, min(0.45, 0.04 * rows + 0.025), 1, 1))
    return save(fig, tight=False)


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
    run), each cell annotated with its number and marks.  Experiments run down the rows when there are more
    of them than learners (the paper suite), so that every label stays readable at full width."""
    from matplotlib.colors import PowerNorm

    plt = pyplot()
    if values.shape[1] > values.shape[0]:
        values, text = values.T, text.T
    n_r, n_c = values.shape
    label_in = 0.085 * max(len(str(x)) for x in values.index)
    fig, ax = plt.subplots(figsize=(min(13.0, label_in + 1.25 * n_c + 0.5), 0.42 * n_r + 1.6))
    v = values.to_numpy(dtype=float)
    finite = v[np.isfinite(v)]
    vmax = float(np.nanpercentile(np.clip(finite, 0, None), 95)) if finite.size else 1.0
    cmap = plt.get_cmap("YlOrRd").with_extremes(bad="#d9d9d9")
    ax.imshow(np.ma.masked_invalid(np.clip(v, 0, None)), cmap=cmap, norm=PowerNorm(0.5, 0, max(vmax, 1e-6)),
              aspect="auto")
    for i in range(n_r):
        for j in range(n_c):
            t = text.iat[i, j].replace("\n", " ") if n_c > 8 else text.iat[i, j]
            dark = np.isfinite(v[i, j]) and v[i, j] > 0.55 * vmax
            ax.text(j, i, t.replace(" over budget", "\nover budget") if n_c > 8 else t, ha="center",
                    va="center", fontsize=(9.5 if n_c <= 8 else 8.5) if "\n" not in t else 8,
                    color="white" if dark else "black", fontweight="bold" if "★" in t else "normal")
    ax.xaxis.tick_top()
    ax.set_xticks(range(n_c), labels=list(values.columns), rotation=30, ha="left", fontsize=10.5)
    ax.set_yticks(range(n_r), labels=list(values.index), fontsize=10.5)
    ax.set_xticks(np.arange(-0.5, n_c), minor=True)
    ax.set_yticks(np.arange(-0.5, n_r), minor=True)
    ax.grid(which="minor", color="white", lw=1.5)
    ax.grid(which="major", visible=False)
    ax.tick_params(which="minor", length=0)
    ax.set_title(title, fontsize=11, loc="left", pad=12)
    fig.tight_layout()
    return save(fig)


def unscored_figure(df: pd.DataFrame) -> bytes | None:
    """Leakage against distortion of the learned points without a known optimum (mean over seeds; one
    series per learner and leakage evaluator, marker = exact / lower bound / estimate), one panel per
    (scenario, privacy); budgets as dotted lines.  None when there are no such points."""
    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) == "none")]
    if ok.empty:
        return None
    plt = pyplot()
    panels = list(ok.groupby(["scenario_id", "privacy"], sort=True))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5.2), squeeze=False)
    for ax, ((sid, privacy), g) in zip(axes[0], panels):
        series = list(g.groupby(["learner", "leakage_evaluator"], sort=True))
        styles = learner_styles([f"{lr} ({ev})" for (lr, ev), _ in series])
        for (lr, ev), h in series:
            m = h.groupby("budget")[["distortion", "leakage"]].mean()
            colour, ls = styles[f"{lr} ({ev})"]
            marker, filled, _ = KIND_MARKER.get(str(h["leakage_kind"].iloc[0]), ("s", True, ""))
            ax.plot(m["distortion"], m["leakage"], ls=ls, color=colour, marker=marker, ms=8,
                    mfc=colour if filled else "none", label=f"{lr} ({ev})")
        for b in sorted(g["budget"].unique()):
            ax.axvline(b, color="grey", ls=":", lw=1.2, zorder=1)
        first = g.iloc[0]
        ax.set(xlabel=distortion_label(first), ylabel=privacy_label(privacy), title=f"{sid} / {privacy}")
        ax.legend(fontsize=9, frameon=False)
    fig.tight_layout()
    return save(fig)

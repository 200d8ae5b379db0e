"""Reports from stored records: tradeoff plots, gap tables, flags, timings; and A/B comparison.

Input is the long records table (one row per finished case, columns as in
``bench/store.py``).  Rows with ``bound_kind == "none"`` (scenarios with no known
optimum: ``mnist-subset``, ``digits``, ``hypothesis-testing``) have NaN gaps: the
gap table leaves them out, their plots have no optimum curve, and the table
"Learned points without a known optimum" lists their leakage, distortion and
utility accuracies (from the ``utility`` evaluation).  Figures are seaborn/matplotlib PNGs: embedded as base64 in
the HTML (it opens offline) and written beside the Markdown file.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privbench.datasets.errors import InputError
from .store import atomic_write_text

GROUP = ["scenario", "scenario_id", "observation", "privacy", "family"]
POINT = GROUP + ["learner", "budget", "n_train"]
UNIT_LABEL = {"mi": "I(S;Z) [nats]", "map": "MAP adversary accuracy", "chi2": "chi-square information"}


def _t95(n: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1)) if n > 1 else float("nan")


def aggregate_points(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% t-interval over seeds of leakage, distortion and gap per learned point.

    Returns
    -------
    DataFrame with one row per (scenario, observation, privacy, family, learner,
    budget, n_train) and columns n, leakage, leakage_ci, distortion, distortion_ci,
    gap, gap_ci, gap_worst, below_bound (count), overshoot, train_time_s.
    """
    ok = df[df["status"] == "ok"].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["family"] = ok["family"].fillna("")
    ok["observation"] = ok["observation"].fillna("")  # gaussian-source has none
    rows = []
    for key, g in ok.groupby(POINT, dropna=False, sort=True):
        n = len(g)
        t = _t95(n)
        row = dict(zip(POINT, key))
        for col in ("leakage", "distortion", "gap"):
            v = g[col].astype(float)
            row[col] = float(v.mean())
            row[f"{col}_ci"] = float(t * v.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        row.update(n=n, gap_worst=float(g["gap"].max()), below_bound=int(g["below_bound"].sum()),
                   overshoot=float(g["overshoot"].max()), train_time_s=float(g["train_time_s"].mean()),
                   leakage_evaluator=", ".join(sorted(set(g["leakage_evaluator"].astype(str)))),
                   bound_kind=str(g["bound_kind"].iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def gap_table(df: pd.DataFrame) -> pd.DataFrame:
    """Median and worst gap per learner x scenario (over budgets and seeds), with flags and time.

    Scenarios with no known optimum (``bound_kind == "none"``) are left out: see :func:`no_optimum_table`.
    """
    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) != "none")]
    if ok.empty:
        return pd.DataFrame()
    g = ok.groupby(["learner", "scenario_id", "observation", "privacy"], dropna=False)
    out = g.agg(median_gap=("gap", "median"), worst_gap=("gap", "max"), cases=("gap", "size"),
                below_bound=("below_bound", "sum"), max_overshoot=("overshoot", "max"),
                mean_train_s=("train_time_s", "mean")).reset_index()
    return out.sort_values(["scenario_id", "observation", "privacy", "learner"]).reset_index(drop=True)


def no_optimum_table(df: pd.DataFrame) -> pd.DataFrame:
    """Learned points of scenarios with no known optimum: mean leakage, distortion and the
    held-out accuracy of every utility label (``utility X`` columns) per learner and budget."""
    from .evaluators import utility_accuracies

    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) == "none")].copy()
    if ok.empty:
        return pd.DataFrame()
    acc = pd.DataFrame([utility_accuracies(e) for e in ok["evaluations"]], index=ok.index)
    acc.columns = [f"utility {c}" for c in acc.columns]
    ok = pd.concat([ok, acc], axis=1)
    keys = ["scenario_id", "observation", "privacy", "learner", "budget"]
    cols = ["leakage", "distortion", "overshoot"] + list(acc.columns)
    out = ok.groupby(keys, dropna=False)[cols].mean().reset_index()
    out.insert(len(keys), "seeds", ok.groupby(keys, dropna=False).size().to_numpy())
    return out.sort_values(keys).reset_index(drop=True)


def flags_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every case that failed, timed out, went below the bound or overshot its budget."""
    bad = (df["status"] != "ok") | df["below_bound"].fillna(False).astype(bool) | (df["overshoot"].fillna(0) > 1e-3)
    cols = ["status", "learner", "scenario_id", "observation", "privacy", "budget", "rep", "gap", "overshoot",
            "below_bound", "below_bound_reason", "error"]
    out = df.loc[bad, [c for c in cols if c in df.columns]].reset_index(drop=True)
    for c in ("below_bound_reason", "error"):
        if c in out.columns:
            out[c] = out[c].fillna("")
    return out


def timing_table(df: pd.DataFrame) -> pd.DataFrame:
    """Training and wall time per learner and device."""
    g = df.groupby(["learner", "device"], dropna=False)
    return g.agg(cases=("wall_time_s", "size"), mean_train_s=("train_time_s", "mean"),
                 total_wall_s=("wall_time_s", "sum")).reset_index()


# --------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------


def _optimum_curve(first: pd.Series, d_max: float) -> tuple[np.ndarray, np.ndarray] | None:
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
        opt = _optimum_curve(first, float(np.nanmax(g["distortion"] + g["distortion_ci"].fillna(0))))
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


# --------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------


def _md_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    if df.empty:
        return "_none_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, (float, np.floating)):
                cells.append("" if np.isnan(v) else format(float(v), floatfmt))
            else:
                cells.append(str(v).replace("|", "/").replace("\n", " "))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _summary(df: pd.DataFrame) -> str:
    n = len(df)
    ok = int((df["status"] == "ok").sum())
    bb = int(df["below_bound"].fillna(False).astype(bool).sum())
    return (f"{n} records: {ok} ok, {n - ok} failed or timed out, {bb} below the bound. "
            f"Devices: {', '.join(sorted(set(df['device'].astype(str))))}. "
            "Leakage is the headline evaluator's value (exact where the release alphabet or "
            "parametric form allows it, else the largest credible estimate); gap = leakage - optimum "
            "at the distortion achieved (none where the optimum is unknown, bound_kind 'none'); "
            "overshoot = max(0, distortion - budget).")


def write_markdown(df: pd.DataFrame, path: str | Path, title: str = "privbench report") -> Path:
    path = Path(path)
    fig_dir = path.parent / (path.stem + "_figures")
    fig_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}\n", _summary(df) + "\n", "## Gaps per learner and scenario\n", _md_table(gap_table(df))]
    free = no_optimum_table(df)
    if not free.empty:
        parts += ["## Learned points without a known optimum\n", _md_table(free)]
    parts.append("## Tradeoff plots\n")
    for name, png in tradeoff_figures(df):
        (fig_dir / name).write_bytes(png)
        parts.append(f"![{name}]({fig_dir.name}/{name})\n")
    parts += ["## Flags\n", _md_table(flags_table(df)), "## Timings\n", _md_table(timing_table(df))]
    atomic_write_text(path, "\n".join(parts))
    return path


def write_html(df: pd.DataFrame, path: str | Path, title: str = "privbench report") -> Path:
    path = Path(path)
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#eee}"
             "img{max-width:48%;margin:0.5%;border:1px solid #ddd}")
    figs = "".join(f'<img alt="{html.escape(n)}" src="data:image/png;base64,{base64.b64encode(b).decode()}">'
                   for n, b in tradeoff_figures(df))

    def tbl(d: pd.DataFrame) -> str:
        return "<p><i>none</i></p>" if d.empty else d.to_html(index=False, float_format=lambda x: f"{x:.4g}")

    free = no_optimum_table(df)
    body = (f"<h1>{html.escape(title)}</h1><p>{html.escape(_summary(df))}</p>"
            f"<h2>Gaps per learner and scenario</h2>{tbl(gap_table(df))}"
            + (f"<h2>Learned points without a known optimum</h2>{tbl(free)}" if not free.empty else "")
            + f"<h2>Tradeoff plots</h2>{figs or '<p><i>no successful cases</i></p>'}"
            f"<h2>Flags</h2>{tbl(flags_table(df))}<h2>Timings</h2>{tbl(timing_table(df))}")
    atomic_write_text(path, f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                        f"<style>{style}</style></head><body>{body}</body></html>")
    return path


# --------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per case (point), which side has the smaller gap and whether the difference is beyond noise.

    Beyond noise: Welch's t-test over seeds at the 5% level when both sides have >= 2
    seeds; with one seed each, the difference must exceed both sides' statistical
    tolerance (3 x the larger leakage stderr), exact evaluators having none.
    """
    rows = []
    ka = {k: g for k, g in a[a["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    kb = {k: g for k, g in b[b["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    for key in sorted(set(ka) | set(kb), key=str):
        row: dict[str, Any] = dict(zip(POINT, key))
        ga, gb = ka.get(key), kb.get(key)
        if ga is None or gb is None:
            row.update(gap_a=float("nan") if ga is None else float(ga["gap"].mean()),
                       gap_b=float("nan") if gb is None else float(gb["gap"].mean()),
                       better="only in " + ("B" if ga is None else "A"), beyond_noise=False, p_value=float("nan"))
            rows.append(row)
            continue
        xa, xb = ga["gap"].astype(float).to_numpy(), gb["gap"].astype(float).to_numpy()
        if np.all(np.isnan(xa)) or np.all(np.isnan(xb)):  # no known optimum (bound_kind "none"): no gap
            row.update(gap_a=float("nan"), gap_b=float("nan"), diff=float("nan"), better="n/a (no optimum)",
                       beyond_noise=False, p_value=float("nan"))
            rows.append(row)
            continue
        diff = xa.mean() - xb.mean()
        if np.array_equal(np.sort(xa), np.sort(xb)):  # the same numbers (a rerun): a tie, no test needed
            p, beyond = 1.0, False
        elif len(xa) >= 2 and len(xb) >= 2 and (xa.std() > 0 or xb.std() > 0):
            import warnings

            from scipy.stats import ttest_ind

            with warnings.catch_warnings():  # nearly identical samples: scipy warns of precision loss
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(ttest_ind(xa, xb, equal_var=False).pvalue)
            beyond = bool(p < 0.05)
        else:
            tol = 3 * max(float(ga["leakage_stderr"].fillna(0).max()), float(gb["leakage_stderr"].fillna(0).max()))
            p, beyond = float("nan"), abs(diff) > max(tol, 1e-9)
        row.update(gap_a=float(xa.mean()), gap_b=float(xb.mean()), diff=float(diff),
                   better="A" if diff < 0 else ("B" if diff > 0 else "tie"), beyond_noise=bool(beyond), p_value=p)
        rows.append(row)
    return pd.DataFrame(rows)

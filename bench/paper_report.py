"""The paper report: each experiment of a suite beside what its source paper claims.

``privbench report DIR`` writes this report (instead of the generic one) when the
results in DIR come from a suite whose experiments carry ``paper:`` blocks (the
shipped ``paper`` suite).  For every experiment it shows the paper's claim
(figure/table), our optimum at each budget, our learned points with 95%
t-intervals over seeds, the gap, the wall time on this machine, and the
sentence on where and why we differ (the block's ``differs``); up front a
summary of the median and worst gap per learner x experiment.  Experiments
with a special shape get their own tables and figures:

``gap-tables``          learned (beta0, beta1, gamma0, gamma1) and exact MAP accuracy per D beside
                        GAP Tables 2-5's printed learned / theory columns (bench/paper_reference.yaml)
``ppan-fig6``           per-component distortion and leakage, learned vs Prop. 2 (PPAN appendix H)
``sample-complexity/*`` gap vs training-set size split into finite-sample (the plug-in's gap)
                        and optimisation (learner minus plug-in, paired by repetition) parts
``mismatch/*`` and any  the training adversary's estimate vs fresh attackers of other
experiment with         architectures (``evaluators: mismatch``)
``evaluators: mismatch``
labelled/image ones     attacker and utility accuracies per label, sample releases

Blocks are rendered twice from one list: Markdown with PNGs in a folder beside
it, and a self-contained HTML file (base64 PNGs).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .report import _md_table, _t95, tradeoff_figures
from .store import atomic_write_text


@dataclass
class Block:
    kind: str  # "h2", "h3", "p", "table", "fig"
    text: str = ""
    table: pd.DataFrame | None = None
    png: bytes = b""


# --------------------------------------------------------------------------
# metadata
# --------------------------------------------------------------------------


def suite_metadata(df: pd.DataFrame, source: str | None = None) -> tuple[str, dict[str, dict[str, Any]], list[str]]:
    """(suite name, experiment -> its ``paper:`` block, experiment order) of the suite the records came from.

    ``source``: a suite name or YAML path; default: the suite named in the records.
    Empty metadata when the suite file cannot be found or has no ``paper:`` blocks.
    """
    import yaml

    from .suites import suite_path

    name = source or (str(df["suite"].dropna().iloc[0]) if "suite" in df and df["suite"].notna().any() else "")
    try:
        try:
            _, path = suite_path(name)
        except Exception:  # noqa: BLE001 - a --smoke run is named SUITE-smoke
            if not name.endswith("-smoke"):
                raise
            _, path = suite_path(name[: -len("-smoke")])
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except Exception:  # noqa: BLE001 - no metadata: the generic report is written
        return name, {}, []
    meta, order = {}, []
    for exp in data.get("experiments") or []:
        if isinstance(exp, dict) and isinstance(exp.get("paper"), dict):
            meta[str(exp["name"])] = dict(exp["paper"])
            order.append(str(exp["name"]))
    return name, meta, order


def reference_values() -> dict[str, Any]:
    """The source papers' printed numbers (bench/paper_reference.yaml)."""
    import yaml

    ref = resources.files("privbench.bench") / "paper_reference.yaml"
    return yaml.safe_load(ref.read_text(encoding="utf-8")) if ref.is_file() else {}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _ci(v: pd.Series) -> float:
    v = v.astype(float).dropna()
    return float(_t95(len(v)) * v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")


def _pm(mean: float, ci: float, fmt: str = ".4f") -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    return f"{mean:{fmt}}" + ("" if ci is None or math.isnan(ci) else f" ± {ci:{fmt}}")


def _evals(row: pd.Series) -> list[dict[str, Any]]:
    try:
        return json.loads(row["evaluations"]) if isinstance(row.get("evaluations"), str) else []
    except (TypeError, ValueError):
        return []


def _info(row: pd.Series) -> dict[str, Any]:
    raw = row.get("mechanism_info")
    try:
        return json.loads(raw) if isinstance(raw, str) and raw else {}
    except (TypeError, ValueError):
        return {}


def _has_bound(g: pd.DataFrame) -> bool:
    return bool((g["bound_kind"].astype(str).isin(["exact", "family"])).any())


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _setup_plots() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    return plt


def _obs(v: Any) -> str:
    return v if isinstance(v, str) and v else "-"


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Median and worst gap per learner x experiment (scored experiments only; over budgets and seeds)."""
    ok = df[(df["status"] == "ok") & df["gap"].notna()]
    if ok.empty:
        return pd.DataFrame()
    g = ok.groupby(["experiment", "learner", "scenario_id"], sort=True)
    out = g.agg(median_gap=("gap", "median"), worst_gap=("gap", "max"),
                rows=("gap", "size"), seeds=("rep", "nunique"), bound=("bound_kind", "first"),
                below_bound=("below_bound", "sum")).reset_index()
    return out


def timing_by_experiment(df: pd.DataFrame) -> pd.DataFrame:
    """Cases, seeds and summed wall time per experiment (the time of its cases, one core each)."""
    g = df.groupby("experiment", sort=True)
    return g.agg(rows=("case_id", "size"), cases=("case_key", "nunique"), seeds=("rep", "nunique"),
                 ok=("status", lambda s: int((s == "ok").sum())),
                 core_seconds=("wall_time_s", "sum")).reset_index()


# --------------------------------------------------------------------------
# per-experiment blocks
# --------------------------------------------------------------------------


def points_table(g: pd.DataFrame) -> pd.DataFrame:
    """Learned points: mean ± 95% CI over seeds of distortion, leakage and gap; the optimum there."""
    rows = []
    ok = g[g["status"] == "ok"].copy()
    ok["observation"] = ok["observation"].fillna("")
    ok["family"] = ok["family"].fillna("")
    keys = ["scenario_id", "observation", "privacy", "learner", "n_train", "budget"]
    for key, h in ok.groupby(keys, sort=True):
        sid, obs, priv, lr, n_train, b = key
        rows.append({
            "scenario": sid, "obs": _obs(obs), "privacy": priv, "learner": lr, "n_train": int(n_train),
            "budget": b, "seeds": len(h),
            "distortion": _pm(h["distortion"].mean(), _ci(h["distortion"])),
            "leakage": _pm(h["leakage"].mean(), _ci(h["leakage"])),
            "optimum at distortion": (f"{h['optimum_at_distortion'].mean():.4f}"
                                      if h["optimum_at_distortion"].notna().any() else "n/a"),
            "gap": _pm(h["gap"].mean(), _ci(h["gap"])) if h["gap"].notna().any() else "n/a",
            "worst gap": f"{h['gap'].max():.4f}" if h["gap"].notna().any() else "n/a",
            "evaluator": ", ".join(sorted(set(h["leakage_evaluator"].astype(str)))),
            "wall s/point": f"{h['wall_time_s'].mean():.2f}",
        })
    return pd.DataFrame(rows)


def optimum_table(g: pd.DataFrame) -> pd.DataFrame:
    """Our optimum (or family bound) at each budget of the experiment."""
    ok = g[(g["status"] == "ok") & g["optimum_at_budget"].notna()].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["observation"] = ok["observation"].fillna("")
    out = (ok.groupby(["scenario_id", "observation", "privacy", "budget"], sort=True)
           .agg(optimum=("optimum_at_budget", "first"), bound=("bound_kind", "first")).reset_index())
    out["observation"] = out["observation"].map(_obs)
    return out


def experiment_blocks(name: str, g: pd.DataFrame, meta: dict[str, Any], ref: dict[str, Any]) -> list[Block]:
    """Every block of one experiment's section."""
    title = f"{name}: {meta.get('figure', '')}".rstrip(": ")
    out = [Block("h2", title)]
    if meta.get("claim"):
        out.append(Block("p", f"**Paper claim.** {meta['claim']}"))
    first = g.iloc[0]
    learners = ", ".join(sorted(g["learner"].unique()))
    n_train = ", ".join(str(int(x)) for x in sorted(g["n_train"].unique()))
    ok = g[g["status"] == "ok"]
    out.append(Block("p", f"**Set-up.** scenario {', '.join(sorted(g['scenario_id'].unique()))}; observation "
                          f"{', '.join(sorted(set(map(_obs, g['observation']))))}; privacy "
                          f"{', '.join(sorted(g['privacy'].unique()))}; learners {learners}; training samples "
                          f"{n_train}; fresh evaluation samples {int(first['n_eval'])}; seeds per point "
                          f"{int(g['rep'].nunique())}. {len(ok)} of {len(g)} rows ok; wall time of its cases "
                          f"{g['wall_time_s'].sum():.0f} core-seconds on this machine."))
    bad = g[g["status"] != "ok"]
    if not bad.empty:
        errs = "; ".join(sorted({f"{r.learner}: {str(r.error)[:160]}" for r in bad.itertuples()}))
        out.append(Block("p", f"**Failures.** {len(bad)} row(s): {errs}"))
    if _has_bound(g):
        out += [Block("h3", "Our optimum"), Block("table", table=optimum_table(g))]
    special = _special_blocks(name, g, meta, ref)
    if not name.startswith("sample-complexity/"):
        out += [Block("h3", "Learned points (mean ± 95% CI over seeds)"), Block("table", table=points_table(g))]
        if _has_bound(g):
            for fname, png in tradeoff_figures(g):
                out.append(Block("fig", f"{name.replace('/', '_')}-{fname}", png=png))
    out += special
    out.append(Block("p", f"**Where and why we differ.** {meta.get('differs') or '(not written yet)'}"))
    return out


def _special_blocks(name: str, g: pd.DataFrame, meta: dict[str, Any], ref: dict[str, Any]) -> list[Block]:
    out: list[Block] = []
    if g["protocol"].astype(str).eq("two-user").any() if "protocol" in g else False:
        return two_user_blocks(g, ref)
    if not _has_bound(g):
        out += labelled_blocks(name, g, ref)
    if name == "gap-tables":
        out += gap_table_blocks(g, ref)
    if name == "ppan-fig6":
        out += per_component_blocks(g)
    if name.startswith("sample-complexity/"):
        out += sample_complexity_blocks(name, g)
    if g["evaluators"].astype(str).eq("mismatch").any() if "evaluators" in g else False:
        out += mismatch_blocks(name, g)
    return out


# --- data without a known optimum (images, hypothesis testing) -------------------


def _utility(row: pd.Series) -> dict[str, float]:
    for e in _evals(row):
        if e.get("metric") == "utility":
            return dict((e.get("detail") or {}).get("accuracy") or {})
    return {}


def _metric(row: pd.Series, metric: str) -> float:
    for e in _evals(row):
        if e.get("metric") == metric and not (e.get("detail") or {}).get("study"):
            return float(e["value"])
    return float("nan")


def labelled_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per row: distortion, attacker accuracy for S, the MI bound, and every label's utility accuracy."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        row = {"learner": r["learner"], "budget": r["budget"], "rep": r["rep"], "distortion": r["distortion"],
               "S accuracy": _metric(r, "map"), "MI bound": _metric(r, "mi")}
        row.update({f"acc {k}": v for k, v in _utility(r).items()})
        rows.append(row)
    return pd.DataFrame(rows)


def labelled_blocks(name: str, g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    f = labelled_frame(g)
    if f.empty:
        return []
    cols = ["distortion", "S accuracy", "MI bound"] + sorted(c for c in f.columns if c.startswith("acc "))
    rows = []
    for (lr, b), h in f.groupby(["learner", "budget"], sort=True):
        rows.append({"learner": lr, "budget": b, "seeds": len(h),
                     **{c: _pm(h[c].mean(), _ci(h[c]), ".3f") for c in cols if c in h}})
    label = str(_first_detail(g, "utility", "label") or "")
    majority = {k: float(v) for k, v in (_first_detail(g, "utility", "majority") or {}).items()}
    majority_s = _first_detail(g, "map", "majority")
    out = [Block("h3", "Attacker and utility accuracy (fresh classifiers on releases; mean ± 95% CI over seeds)"),
           Block("p", "S accuracy: a classifier trained from scratch on releases of the training partition, "
                      "scored on releases of held-out data; MI bound: H(S) + mean log Q(S|Z) of that classifier "
                      "(nats, a lower bound); acc X: the same kind of classifier for label X. Majority-class "
                      "accuracies: " + ", ".join(f"{k} {v:.3f}" for k, v in majority.items()) + "."),
           Block("table", table=pd.DataFrame(rows))]
    plt = _setup_plots()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    util = f"acc {label}"
    for lr, h in f.groupby("learner", sort=True):
        m = h.groupby("budget")[[c for c in ("distortion", "S accuracy", util) if c in h]].mean()
        m = m.sort_values("distortion")
        axes[0].plot(m["distortion"], m["S accuracy"], "o-", label=lr)
        if util in m:
            axes[1].plot(m["distortion"], m[util], "o-", label=lr)
    if majority_s is not None:
        axes[0].axhline(float(majority_s), color="grey", ls="--", lw=1, label="majority class")
    axes[0].set_xlabel("distortion (held-out rows)")
    axes[0].set_ylabel("attacker accuracy for S")
    axes[1].set_xlabel("distortion (held-out rows)")
    axes[1].set_ylabel(f"utility accuracy ({label})")
    if label in majority:
        axes[1].axhline(majority[label], color="grey", ls="--", lw=1, label="majority class")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle(f"{name}: {g['scenario_id'].iloc[0]}", fontsize=10)
    out.append(Block("fig", f"{name.replace('/', '_')}-accuracy.png", png=_png(fig)))
    grid = preview_figure(g)
    if grid is not None:
        out += [Block("p", "Sample releases (seed 0): the first 8 held-out images, original on top, then each "
                           "learner at each budget."), Block("fig", f"{name.replace('/', '_')}-samples.png",
                                                                     png=grid)]
    if name == "filter-mnist/ge5-parity":
        out += filter_table1_blocks(f, ref)
    return out


def _first_detail(g: pd.DataFrame, metric: str, key: str) -> Any:
    """``detail[key]`` of the first evaluation of ``metric`` (ok rows of ``g``) that has it; None if none."""
    for _, r in g[g["status"] == "ok"].iterrows():
        for e in _evals(r):
            if e.get("metric") == metric and key in (e.get("detail") or {}):
                return e["detail"][key]
    return None


def preview_figure(g: pd.DataFrame) -> bytes | None:
    """A grid of the stored release previews (repetition 0): originals, then learner x budget rows."""
    from privbench.datasets import make_scenario

    ok = g[(g["status"] == "ok") & (g["rep"] == g["rep"].min())]
    rows: list[tuple[str, np.ndarray]] = []
    shape, first_rows = None, None
    for (lr, b), h in ok.groupby(["learner", "budget"], sort=True):
        for e in _evals(h.iloc[0]):
            pv = (e.get("detail") or {}).get("preview")
            if pv and pv.get("images"):
                shape = tuple(pv["shape"])
                first_rows = first_rows or pv.get("heldout_rows")
                imgs = np.asarray(pv["images"], dtype=float)
                same = [r for r in rows if r[0].split("\n")[0] == lr and np.array_equal(r[1], imgs)]
                if not same:  # a release that does not depend on the budget (identity) is shown once
                    rows.append((f"{lr}\nb={b:g}", imgs))
                break
    if not rows or shape is None:
        return None
    try:
        first = ok.iloc[0]
        sc = make_scenario(first["scenario"], json.loads(first["params"]))
        held = sc.partition()[1]  # type: ignore[attr-defined]
        originals = np.asarray(held.images[np.asarray(first_rows, dtype=int)], dtype=float)
        rows.insert(0, ("original", originals.reshape(len(originals), -1)))
    except Exception:  # noqa: BLE001 - the grid without originals
        pass
    plt = _setup_plots()
    n_col = max(len(r[1]) for r in rows)
    fig, axes = plt.subplots(len(rows), n_col, figsize=(1.1 * n_col + 1.4, 1.1 * len(rows) + 0.3), squeeze=False)
    for i, (lab, imgs) in enumerate(rows):
        for j in range(n_col):
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if j < len(imgs):
                ax.imshow(imgs[j].reshape(shape), cmap="gray_r", vmin=0, vmax=1)
        axes[i][0].set_ylabel(lab, rotation=0, ha="right", va="center", fontsize=8)
    return _png(fig)


def filter_table1_blocks(f: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    t1 = ((ref.get("filter_tables") or {}).get("table1") or {})
    rows = []
    for (lr, b), h in f.groupby(["learner", "budget"], sort=True):
        if lr not in ("identity", "latent-filter", "gaussian-noise"):
            continue
        rows.append({"data": f"ours: {lr}" + ("" if lr == "identity" else f" b={b:g}"),
                     "private (>= 5)": round(float(h["S accuracy"].mean()), 3),
                     "utility (odd)": round(float(h.get("acc parity", pd.Series([np.nan])).mean()), 3),
                     "non-target (circle)": round(float(h.get("acc circle", pd.Series([np.nan])).mean()), 3)})
        if lr == "identity":
            rows[-1]["data"] = "ours: raw images"
    rows = [r for i, r in enumerate(rows) if not (r["data"] == "ours: raw images" and
                                                   any(q["data"] == r["data"] for q in rows[:i]))]
    for k, v in t1.items():
        rows.append({"data": f"paper: {k}", "private (>= 5)": v.get("private"), "utility (odd)": v.get("utility"),
                     "non-target (circle)": v.get("non_target")})
    return [Block("h3", "Beside the filter paper's Table 1"), Block("table", table=pd.DataFrame(rows))]


def two_user_blocks(g: pd.DataFrame, ref: dict[str, Any]) -> list[Block]:
    t5 = ((ref.get("filter_tables") or {}).get("table5") or {})
    rows = []
    for b, h in g[g["status"] == "ok"].groupby("budget", sort=True):
        acc: dict[tuple[str, str, str], list[float]] = {}
        for _, r in h.iterrows():
            for e in _evals(r):
                d = e.get("detail") or {}
                if "user" in d and "role" in d:
                    acc.setdefault((str(e["metric"]).replace("raw-", "raw "), d["user"], d["role"]), []).append(
                        float(e["value"]))
        for user, paper_key in (("user-a", "user1"), ("user-b", "user2")):
            def m(metric: str, role: str) -> str:
                v = pd.Series(acc.get((metric, user, role), []), dtype=float)
                return _pm(v.mean(), _ci(v), ".3f") if len(v) else "n/a"
            rows.append({"budget": b, "user": user, "private acc (filtered)": m("map", "private"),
                         "utility acc (filtered)": m("utility", "utility"),
                         "private acc (raw)": m("raw map", "private"), "utility acc (raw)": m("raw utility", "utility"),
                         "paper private / utility": f"{t5.get(paper_key, {}).get('private', '')} / "
                                                    f"{t5.get(paper_key, {}).get('utility', '')}"})
    return [Block("h3", "Two users (user-a hides >= 5, keeps parity; user-b hides parity, keeps >= 5)"),
            Block("p", "Accuracies of fresh classifiers trained on the pooled released training partition "
                       "(8 public parts raw, each user's part through its own filter), scored on each user's "
                       "half of the held-out images; 'raw' is the same with no filter. Mean ± 95% CI over seeds."),
            Block("table", table=pd.DataFrame(rows))]


# --- GAP tables -------------------------------------------------------------


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
                ev = next((e for e in _evals(r) if e.get("evaluator") == "exact-mixture-params"), None)
                if ev is not None:
                    pars.append(ev["detail"].get("params", {}))
            mean_p = {k: float(np.mean([q[k] for q in pars])) for k in ("beta0", "beta1", "gamma0", "gamma1")} \
                if pars else {}
            pr = printed.get(int(b)) or printed.get(str(int(b))) or {}
            rows.append({"D": b, **{k: round(v, 4) for k, v in mean_p.items()},
                         "distortion": _pm(hb["distortion"].mean(), _ci(hb["distortion"])),
                         "P_detect (ours, exact)": _pm(hb["leakage"].mean(), _ci(hb["leakage"])),
                         "family optimum (ours)": round(float(hb["optimum_at_budget"].iloc[0]), 4),
                         "paper P_detect": pr.get("p_detect", ""), "paper theory": pr.get("theory", "")})
        out += [Block("p", f"{sid} ({key}, mu = 3, sigma1 = 1), family general; parameters are means "
                           f"over {h['rep'].nunique()} seeds."), Block("table", table=pd.DataFrame(rows))]
    return out


# --- PPAN appendix H ----------------------------------------------------------


def per_component_blocks(g: pd.DataFrame) -> list[Block]:
    """Per-component distortion and Gaussian-approximation leakage, learned vs Prop. 2's allocation."""
    from privbench.datasets import make_scenario
    from privbench.theory.optimum import optimum

    ok = g[g["status"] == "ok"]
    rows = []
    for (lr, b), h in ok.groupby(["learner", "budget"], sort=True):
        comps_d, comps_i = [], []
        for _, r in h.iterrows():
            for e in _evals(r):
                det = e.get("detail") or {}
                if "per_component_distortion" in det:
                    comps_d.append(det["per_component_distortion"])
                if "per_component_mi" in det:
                    comps_i.append(det["per_component_mi"])
        if not comps_d:
            continue
        d = np.mean(comps_d, axis=0)
        mi = np.mean(comps_i, axis=0) if comps_i else np.full_like(d, np.nan)
        rows.append({"learner": lr, "budget": b, **{f"D{i + 1}": round(float(x), 3) for i, x in enumerate(d)},
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
        rows.append({"learner": "optimum (Prop. 2)", "budget": b,
                     **{f"D{i + 1}": round(float(x), 3) for i, x in enumerate(d)},
                     **{f"I{i + 1}": round(float(x), 3) for i, x in enumerate(mi)}})
    tab = pd.DataFrame(rows).sort_values(["budget", "learner"]).reset_index(drop=True)
    return [Block("h3", "Per-component picture (PPAN appendix H)"),
            Block("p", "Di: mean squared error of component i, E(Z_i - U_i)^2; Ii: leakage of component i, "
                       "I(S_i; Z_i) (learned: Gaussian approximation from fresh samples; optimum: exact). "
                       "rho = " + ", ".join(f"{x:g}" for x in rho) + ". The optimum spends the budget on the "
                       "most correlated components first (reverse water-filling on rho^2)."),
            Block("table", table=tab)]


# --- sample complexity --------------------------------------------------------


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
                     **{c: per_rep[c].mean() for c in per_rep}, **{c + "_ci": _ci(per_rep[c]) for c in per_rep},
                     "worst total": h["total"].max()})
    t = pd.DataFrame(rows)
    shown = pd.DataFrame({
        "learner": t["learner"], "n_train": t["n_train"], "seeds": t["seeds"],
        "total gap": [_pm(a, b) for a, b in zip(t["total"], t["total_ci"])],
        "finite-sample part (plug-in)": [_pm(a, b) for a, b in zip(t["finite_sample"], t["finite_sample_ci"])],
        "optimisation part": [_pm(a, b) for a, b in zip(t["optimisation"], t["optimisation_ci"])],
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
    plt = _setup_plots()
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
    ax.set_title(f"{name}\n{g['scenario_id'].iloc[0]}, observation {_obs(g['observation'].iloc[0])}", fontsize=9)
    ax.legend(fontsize=8)
    return [Block("h3", "Gap vs training-set size (mean ± 95% CI over seeds; each seed averaged over budgets)"),
            Block("table", table=shown), Block("p", " ".join(text)),
            Block("fig", f"{name.replace('/', '_')}-gap-vs-n.png", png=_png(fig))]


# --- attacker mismatch --------------------------------------------------------


# sample evaluators that attack a release (lower bounds), beside the mismatch study's ``attacker-*``
ATTACKERS = ("posthoc-attacker", "mixture-fresh-classifier", "fresh-classifier", "gaussian-approx", "ksg")


def _attacker_columns(columns: Any) -> list[str]:
    return sorted(c for c in columns if str(c).startswith("attacker-") or c in ATTACKERS)


def _training_adversary(row: pd.Series, key: str) -> float:
    """The learner's own adversary's final estimate (``mi`` or ``accuracy``); the mean over users
    for a protocol that trains several filters; NaN when the learner has none."""
    info = _info(row)
    found = [info.get("training_adversary")] + [v.get("training_adversary") for v in info.values()
                                                 if isinstance(v, dict) and "training_adversary" in v]
    vals = [float(t[key]) for t in found if isinstance(t, dict) and isinstance(t.get(key), (int, float))]
    return float(np.mean(vals)) if vals else float("nan")


def mismatch_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per row: the training adversary's estimate, the exact value where known, each fresh attacker."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        metric = "map" if r["privacy"] == "map" else "mi"
        row: dict[str, Any] = {"learner": r["learner"], "scenario": r["scenario_id"],
                               "observation": _obs(r["observation"]), "metric": metric, "budget": r["budget"],
                               "rep": r["rep"], "headline": float(r["leakage"])}
        row["training adversary"] = _training_adversary(r, "accuracy" if metric == "map" else "mi")
        row["exact"] = float(r["leakage"]) if r["leakage_kind"] == "exact" else float("nan")
        for e in _evals(r):
            if e.get("metric") != metric or e.get("kind") == "exact":
                continue
            if _attacker_columns([str(e.get("evaluator"))]):
                row[str(e["evaluator"])] = float(e["value"])
        rows.append(row)
    return pd.DataFrame(rows)


def _independent(f: pd.DataFrame) -> pd.Series:
    """The best independent measurement per row: the exact value where known, else the largest attacker."""
    cols = _attacker_columns(f.columns)
    best = f[cols].max(axis=1) if cols else pd.Series(np.nan, index=f.index)
    return f["exact"].where(f["exact"].notna(), best)


def mismatch_blocks(name: str, g: pd.DataFrame) -> list[Block]:
    f = mismatch_frame(g)
    if f.empty:
        return []
    att = _attacker_columns(f.columns)
    f["independent"] = _independent(f)
    rows = []
    for (lr, sid, obs, metric), h in f.groupby(["learner", "scenario", "observation", "metric"], sort=True):
        diff = h["independent"] - h["training adversary"]
        row = {"learner": lr, "metric": metric,
               "training adversary": _pm(h["training adversary"].mean(), _ci(h["training adversary"]), ".3f"),
               "exact": _pm(h["exact"].mean(), _ci(h["exact"]), ".3f") if h["exact"].notna().any() else "n/a"}
        for a in att:
            row[a] = _pm(h[a].mean(), _ci(h[a]), ".3f") if a in h and h[a].notna().any() else "n/a"
        row["independent - training"] = _pm(diff.mean(), _ci(diff), ".3f")
        row["survives?"] = ("n/a (no adversary estimate)" if diff.isna().all()
                            else ("yes" if diff.mean() <= 0.01 else "no"))
        rows.append(row)
    return [Block("h3", "Attacker mismatch: training adversary vs fresh attackers"),
            Block("p", "Mean ± 95% CI over seeds and budgets. 'training adversary': the learner's own adversary "
                       "at the end of training (info['training_adversary'], on training data); 'exact': the true "
                       "leakage where the mechanism's form allows it; attacker-*: trained from scratch on held-out "
                       "releases (lower bounds). 'independent' is the exact value where known, else the best "
                       "attacker. A learner's privacy 'survives' when the independent value exceeds its own "
                       "adversary's estimate by at most 0.01 (nats, or accuracy)."),
            Block("table", table=pd.DataFrame(rows))]


def mismatch_overview(df: pd.DataFrame) -> pd.DataFrame:
    """Every experiment: the learner's own adversary's estimate vs the independent measurement."""
    f = mismatch_frame(df.assign(scenario_id=df["experiment"]))
    if f.empty or f["training adversary"].isna().all():
        return pd.DataFrame()
    f["independent"] = _independent(f)
    f = f[f["training adversary"].notna() & f["independent"].notna()]
    f["under-estimate"] = f["independent"] - f["training adversary"]
    out = (f.groupby(["learner", "scenario", "metric"], sort=True)
           .agg(points=("budget", "size"), training_adversary=("training adversary", "mean"),
                independent=("independent", "mean"), mean_under_estimate=("under-estimate", "mean"),
                worst_under_estimate=("under-estimate", "max")).reset_index()
           .rename(columns={"scenario": "experiment"}))
    return out


# --------------------------------------------------------------------------
# the whole report
# --------------------------------------------------------------------------


def variant_labels(df: pd.DataFrame) -> pd.Series:
    """``learner``, or ``learner (k=v, ...)`` where one experiment runs a learner with several settings.

    The settings shown are the hyper-parameters that differ between its variants in that
    experiment (``-`` for one that a variant leaves at its default).
    """
    out = df["learner"].astype(str).copy()
    for (_, lr), g in df.groupby(["experiment", "learner"], sort=False):
        variants = {p: json.loads(p) if isinstance(p, str) and p else {} for p in g["learner_params"].unique()}
        if len(variants) < 2:
            continue
        keys = sorted({k for v in variants.values() for k in v
                       if len({json.dumps(w.get(k), sort_keys=True) for w in variants.values()}) > 1})
        for raw, v in variants.items():
            tag = ", ".join(f"{k}={v[k] if k in v else '-'}" for k in keys)
            out[g.index[g["learner_params"] == raw]] = f"{lr} ({tag})"
    return out


def paper_blocks(df: pd.DataFrame, meta: dict[str, dict[str, Any]], order: list[str],
                 manifests: list[dict[str, Any]] | None = None, title: str = "") -> list[Block]:
    ref = reference_values()
    df = df.copy()
    df["learner"] = variant_labels(df)
    out = [Block("h2", "Summary: median and worst gap per learner and experiment")]
    out.append(Block("p", "Gap = leakage - optimum at the distortion achieved (nats for MI, probability for MAP "
                          "accuracy), over every budget and seed of the experiment; bound 'family' is the best "
                          "mechanism of GAP's stated family, not over all mechanisms. Experiments on data "
                          "without a known optimum (images, hypothesis testing) are not in this table; their "
                          "sections give attacker and utility accuracies."))
    out.append(Block("table", table=summary_table(df)))
    runs = [m for m in (manifests or []) if m.get("wall_s") is not None]
    if runs:
        tot = sum(float(m["wall_s"]) for m in runs)
        jobs = sorted({str(m.get("jobs")) for m in runs})
        devs = sorted({str(m.get("device")) for m in runs})
        out.append(Block("p", f"**Run time.** {len(runs)} run(s) of `privbench run` wrote these results in "
                              f"{tot:.0f} s wall time in total ({tot / 60:.1f} min; jobs {', '.join(jobs)}, "
                              f"device {', '.join(devs)}; host {runs[-1].get('host', '?')}, commit "
                              f"{str(runs[-1].get('git_commit', '?'))[:12]})."))
    overview = mismatch_overview(df)
    if not overview.empty:
        out += [Block("h3", "Attacker mismatch across every experiment"),
                Block("p", "Per learner and experiment: its own training adversary's final estimate (on training "
                           "data; accuracy for MAP experiments, nats for MI) against the independent measurement "
                           "of the same release (exact where the mechanism's form allows it, else the best fresh "
                           "attacker). A positive under-estimate means the learner's adversary reported more "
                           "privacy than the release has. Mean over seeds and budgets; worst over points."),
                Block("table", table=overview)]
    out += [Block("h3", "Time per experiment"), Block("table", table=timing_by_experiment(df))]
    names = [n for n in order if n in set(df["experiment"])] + sorted(set(df["experiment"]) - set(order))
    for name in names:
        out += experiment_blocks(name, df[df["experiment"] == name], meta.get(name, {}), ref)
    return out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def render_markdown(blocks: list[Block], path: Path, title: str, intro: str) -> Path:
    fig_dir = path.parent / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"# {title}\n", intro + "\n"]
    for b in blocks:
        if b.kind == "h2":
            parts.append(f"## {b.text}\n")
        elif b.kind == "h3":
            parts.append(f"### {b.text}\n")
        elif b.kind == "p":
            parts.append(b.text + "\n")
        elif b.kind == "table":
            parts.append(_md_table(b.table if b.table is not None else pd.DataFrame()))
        elif b.kind == "fig":
            name = _slug(b.text)
            (fig_dir / name).write_bytes(b.png)
            parts.append(f"![{name}](figures/{name})\n")
    atomic_write_text(path, "\n".join(parts))
    return path


def _md_inline(text: str) -> str:
    """Escape, then turn **bold** and `code` into HTML."""
    import re

    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def render_html(blocks: list[Block], path: Path, title: str, intro: str) -> Path:
    style = ("body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222;line-height:1.4}"
             "table{border-collapse:collapse;font-size:12.5px;margin:0.8em 0}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#eee}"
             "img{max-width:49%;margin:0.3%;border:1px solid #ddd;vertical-align:top}h2{margin-top:2em;"
             "border-bottom:1px solid #aaa}")
    body = [f"<h1>{html.escape(title)}</h1><p>{_md_inline(intro)}</p>"]
    for b in blocks:
        if b.kind in ("h2", "h3"):
            body.append(f"<{b.kind}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "p":
            body.append(f"<p>{_md_inline(b.text)}</p>")
        elif b.kind == "table":
            t = b.table if b.table is not None else pd.DataFrame()
            body.append("<p><i>none</i></p>" if t.empty else
                        t.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep=""))
        elif b.kind == "fig":
            body.append(f'<img alt="{html.escape(b.text)}" '
                        f'src="data:image/png;base64,{base64.b64encode(b.png).decode()}">')
    atomic_write_text(path, f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                        f"<style>{style}</style></head><body>{''.join(body)}</body></html>")
    return path


def write_paper_report(df: pd.DataFrame, meta: dict[str, dict[str, Any]], order: list[str],
                       markdown: str | Path | None, html_path: str | Path | None,
                       manifests: list[dict[str, Any]] | None = None, title: str = "privbench: the papers, "
                       "theory versus learned", command: str = "") -> list[Path]:
    """Write the paper report (Markdown with figures/ beside it, and/or self-contained HTML)."""
    blocks = paper_blocks(df, meta, order, manifests)
    intro = ("Every experiment of the four source papers (PPAN, GAP, the chi-square sanitizer, the generative "
             "latent filter) regenerated by privbench: the exact optimum from theory/, learned mechanisms trained "
             "from samples only, and independent evaluators (never the learner's own adversary). Reproduce with "
             "`privbench run --suite paper` then `privbench report results/runs/paper`"
             + (f" (this report: `{command}`)" if command else "") + ".")
    out = []
    if markdown:
        out.append(render_markdown(blocks, Path(markdown), title, intro))
    if html_path:
        out.append(render_html(blocks, Path(html_path), title, intro))
    return out

"""The blocks every report shares: its provenance stamp, the first screen (learners x experiments heatmap
of the strict gap, the best learner per experiment, the legend of marks), the ranking, and one section
per experiment panel (tradeoff beside gap-vs-budget, its ranking and learned points)."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from .figures import heatmap_png, panel_figure
from .points import point_frame, points_table
from .ranking import best_table, heatmap_frame, ranking_frame, ranking_table, scored_rows
from .render import Block
from .style import legend_rows

GLANCE = ("Colour and number: the mean **strict gap** over seeds, leakage minus the optimum at max(distortion, "
          "budget), as `privbench check` scores it (0 = optimal; a learner that leaves budget unused is charged "
          "for it; nats for mi, probability for map). Grey: not run, or **✗ over budget** (distortion beyond "
          "the budget by more than its statistical tolerance: fails the budget, never ranked). **★** best "
          "within budget among exact numbers (a lower bound can hide a larger gap). Marks: **≥** the leakage "
          "is only a lower bound (an attacker), **~** an estimate, "
          "**†** scored against a family bound only, **‡** against a certified sandwich, **!** below the "
          "bound, **?** inconsistent and **✖** failed or timed out (no number). Where a learner has several "
          "entries the cell shows its best-ranked or largest-training-size one and "
          "its evaluator; the ranking below lists them all.")


def stamp(df: pd.DataFrame, command: str = "") -> str:
    """Which code built the report and which code produced the records."""
    from importlib.metadata import PackageNotFoundError, version

    from ..records import git_commit

    try:
        pv = version("privbench")
    except PackageNotFoundError:  # pragma: no cover
        pv = "unknown"
    rec = sorted(set(df["git_commit"].dropna().astype(str))) if "git_commit" in df else []
    rec_v = sorted(set(df["privbench_version"].dropna().astype(str))) if "privbench_version" in df else []
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Report built {when} by privbench {pv} at commit `{git_commit()[:12]}`"
            + (f" with `{command}`" if command else "") + f"; records ({len(df)} rows) from commit(s) "
            + (", ".join(f"`{c[:12]}`" for c in rec) or "unknown") + f" (privbench {', '.join(rec_v) or '?'})"
            + commits_by_experiment(df) + ".")


def commits_by_experiment(df: pd.DataFrame) -> str:
    """Where the records come from more than one commit: which experiments each commit computed ('' if one)."""
    if "git_commit" not in df or "experiment" not in df or df["git_commit"].dropna().nunique() < 2:
        return ""
    rows = df.dropna(subset=["git_commit"])
    by = {c[:12]: sorted(set(g["experiment"].dropna().astype(str))) for c, g in rows.groupby("git_commit")}
    return "; experiments by commit: " + "; ".join(f"`{c}`: {', '.join(e)}" for c, e in sorted(by.items()))


def glance_blocks(df: pd.DataFrame, rank: pd.DataFrame, summary: str = "") -> list[Block]:
    """The first screen: heatmap, best learner per experiment, legend of marks; then the contents."""
    out = [Block("h2", "At a glance: strict gap per learner and experiment")]
    if rank.empty:
        return out + [Block("p", "No learned point is scored against a known optimum."), Block("toc")]
    seeds = sorted(set(rank["seeds"]))
    note = ("1 seed per point: no confidence intervals" if seeds == [1]
            else f"seeds per entry: {', '.join(map(str, seeds))}; 95% Student-t intervals over seeds")
    val, txt = heatmap_frame(rank)
    out += [Block("p", GLANCE + f" ({note}.)"),
            Block("fig", "overview-heatmap.png", png=heatmap_png(val, txt, "mean strict gap (learners x experiments)"))]
    out += [Block("h3", "Best learner within budget per experiment"), Block("table", table=best_table(rank)),
            Block("h3", "Legend of marks"), Block("table", table=legend_rows())]
    if summary:
        out.append(Block("p", f"**Records.** {summary}"))
    return out + [Block("toc")]
    return out


def ranking_blocks(rank: pd.DataFrame) -> list[Block]:
    if rank.empty:
        return []
    return [Block("h2", "Ranking per experiment (strict gap, budget respected)"),
            Block("p", "Rank by mean strict gap over seeds; '—' where the learner fails the budget (any row over "
                       "it beyond tolerance) or lands below an exact bound (an evaluator failure, never a win). "
                       "One row per leakage evaluator: seeds measured by different evaluators are never "
                       "averaged together."),
            Block("table", table=ranking_table(rank))]


def panel_blocks(df: pd.DataFrame, rank: pd.DataFrame, heading: str = "h2") -> list[Block]:
    """One section per experiment panel (its title a ``heading``): figure, ranking, learned points."""
    sub = "h3" if heading == "h2" else "h4"
    scored = scored_rows(df)
    if scored.empty:
        return []
    pts = point_frame(scored)
    out = []
    for panel in dict.fromkeys(rank["panel"]):
        g = scored[scored["panel"] == panel]
        first = g.iloc[0]
        seeds = int(g["rep"].nunique())
        out += [Block(heading, f"Experiment {panel}"),
                Block("p", f"Scenario `{first['scenario_id']}`, observation {first['observation'] or '-'}, privacy "
                           f"{first['privacy']}, bound {first['bound_kind']}"
                           + (f" ({first['family']})" if first["family"] else "") + f"; budgets "
                           f"{', '.join(f'{b:g}' for b in sorted(g['budget'].unique()))}; "
                           + ("1 seed: no CI" if seeds == 1 else f"{seeds} seeds, 95% t-intervals") + "."),
                Block("fig", f"{panel}.png", png=panel_figure(g, pts[pts["panel"] == panel], panel)),
                Block(sub, "Ranking"), Block("table", table=ranking_table(rank[rank["panel"] == panel], False)),
                Block(sub, "Learned points (mean ± 95% CI half-width over seeds)"),
                Block("table", table=points_table(pts[pts["panel"] == panel]))]
    return out


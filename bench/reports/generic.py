"""The generic report of any results directory: the first screen (heatmap of the strict gap, best
learner per experiment, legend), a table of contents, the ranking, one section per experiment panel,
points without a known optimum, flags, timings (rendered by :mod:`.render`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .figures import unscored_figure
from .overview import glance_blocks, panel_blocks, ranking_blocks, stamp
from .ranking import ranking_frame
from .render import Block, Style, render_html, render_markdown
from .tables import flags_table, no_optimum_table, summary_text, timing_table

STYLE = Style(css="", per_file_figures=True)
INTRO = ("Which learner comes closest to the exact optimum on each experiment, by how much, and whether the "
         "number is exact or only a bound: the first screen answers; each experiment has its own section below.")


def generic_blocks(df: pd.DataFrame) -> list[Block]:
    """The generic report's blocks."""
    rank = ranking_frame(df)
    out = glance_blocks(df, rank, summary_text(df)) + ranking_blocks(rank) + panel_blocks(df, rank)
    free = no_optimum_table(df)
    if not free.empty:
        out += [Block("h2", "Learned points without a known optimum")]
        png = unscored_figure(df)
        if png is not None:
            out.append(Block("fig", "no-optimum.png", png=png))
        out.append(Block("table", table=free))
    out += [Block("h2", "Flags"),
            Block("p", "Every case that failed, timed out, was inconsistent, went below the bound, overshot its "
                       "budget beyond tolerance, or whose evaluators disagree."),
            Block("table", table=flags_table(df)),
            Block("h2", "Timings"), Block("table", table=timing_table(df))]
    return out


def write_generic(df: pd.DataFrame, html: str | Path | None, markdown: str | Path | None,
                  title: str = "privbench report", command: str = "") -> list[Path]:
    """The generic report as self-contained HTML at ``html`` and/or Markdown at ``markdown`` (its PNGs and
    CSVs in ``<stem>_figures/`` beside it); the figures are drawn once for both."""
    blocks, intro, st = generic_blocks(df), INTRO, stamp(df, command)
    out = []
    if html:
        out.append(render_html(blocks, Path(html), title, intro, STYLE, st))
    if markdown:
        out.append(render_markdown(blocks, Path(markdown), title, intro, STYLE, st))
    return out


def write_markdown(df: pd.DataFrame, path: str | Path, title: str = "privbench report", command: str = "") -> Path:
    """The generic report as Markdown at ``path``, its PNGs and CSVs in ``<stem>_figures/`` beside it."""
    return write_generic(df, None, path, title, command)[0]


def write_html(df: pd.DataFrame, path: str | Path, title: str = "privbench report", command: str = "") -> Path:
    """The generic report as one self-contained HTML file at ``path``."""
    return write_generic(df, path, None, title, command)[0]

"""The generic report of any results directory: gap table, points without a known optimum,
tradeoff plots, flags, timings (rendered by :mod:`.render`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .figures import tradeoff_figures
from .render import Block, Style, render_html, render_markdown
from .tables import flags_table, gap_table, no_optimum_table, summary_text, timing_table

STYLE = Style(css="body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
                  "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
                  "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#eee}"
                  "img{max-width:48%;margin:0.5%;border:1px solid #ddd}",
              per_file_figures=True)


def generic_blocks(df: pd.DataFrame) -> list[Block]:
    """The generic report's blocks."""
    out = [Block("h2", "Gaps per learner and scenario"), Block("table", table=gap_table(df))]
    free = no_optimum_table(df)
    if not free.empty:
        out += [Block("h2", "Learned points without a known optimum"), Block("table", table=free)]
    out.append(Block("h2", "Tradeoff plots"))
    figs = [Block("fig", name, png=data) for name, data in tradeoff_figures(df)]
    out += figs or [Block("p", "(no successful cases)")]
    out += [Block("h2", "Flags"), Block("table", table=flags_table(df)),
            Block("h2", "Timings"), Block("table", table=timing_table(df))]
    return out


def write_markdown(df: pd.DataFrame, path: str | Path, title: str = "privbench report") -> Path:
    """The generic report as Markdown at ``path``, its PNGs in ``<stem>_figures/`` beside it."""
    return render_markdown(generic_blocks(df), Path(path), title, summary_text(df), STYLE)


def write_html(df: pd.DataFrame, path: str | Path, title: str = "privbench report") -> Path:
    """The generic report as one self-contained HTML file at ``path``."""
    return render_html(generic_blocks(df), Path(path), title, summary_text(df), STYLE)

"""The one renderer of every report: a list of :class:`Block` to Markdown (PNGs in a folder beside
it) or to one self-contained HTML file (base64 PNGs)."""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..store import atomic_write_text


@dataclass
class Block:
    """One piece of a report: a heading (``h2``, ``h3``), a paragraph (``p``; ``**bold**`` and
    ``code`` marks), a ``table`` (a DataFrame) or a ``fig`` (PNG bytes named by ``text``)."""

    kind: str  # "h2", "h3", "p", "table", "fig"
    text: str = ""
    table: pd.DataFrame | None = None
    png: bytes = b""


@dataclass(frozen=True)
class Style:
    """How a report looks: its CSS, the text of a missing table value in HTML, where Markdown figures go
    (a folder beside the file: ``figures`` or ``<stem>_figures`` when ``per_file_figures``)."""

    css: str
    na_rep: str = "NaN"
    per_file_figures: bool = False


def md_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """A DataFrame as a Markdown table (``_none_`` when empty; NaN as an empty cell)."""
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


def md_inline(text: str) -> str:
    """Escape, then turn **bold** and `code` into HTML."""
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def slug(text: str) -> str:
    """``text`` with every character but letters, digits and ``-_.`` replaced by ``_`` (a file name)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes (tight layout, 110 dpi); the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def setup_plots() -> Any:
    """matplotlib.pyplot with the Agg backend and seaborn's whitegrid theme."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    return plt


def render_markdown(blocks: list[Block], path: Path, title: str, intro: str, style: Style) -> Path:
    """Write ``blocks`` as Markdown to ``path`` (atomically), figures as PNG files beside it."""
    fig_dir = path.parent / ((path.stem + "_figures") if style.per_file_figures else "figures")
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
            parts.append(md_table(b.table if b.table is not None else pd.DataFrame()))
        elif b.kind == "fig":
            name = slug(b.text)
            (fig_dir / name).write_bytes(b.png)
            parts.append(f"![{name}]({fig_dir.name}/{name})\n")
    atomic_write_text(path, "\n".join(parts))
    return path


def render_html(blocks: list[Block], path: Path, title: str, intro: str, style: Style) -> Path:
    """Write ``blocks`` as one self-contained HTML file to ``path`` (atomically)."""
    body = [f"<h1>{html.escape(title)}</h1><p>{md_inline(intro)}</p>"]
    for b in blocks:
        if b.kind in ("h2", "h3"):
            body.append(f"<{b.kind}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "p":
            body.append(f"<p>{md_inline(b.text)}</p>")
        elif b.kind == "table":
            t = b.table if b.table is not None else pd.DataFrame()
            body.append("<p><i>none</i></p>" if t.empty else
                        t.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep=style.na_rep))
        elif b.kind == "fig":
            body.append(f'<img alt="{html.escape(b.text)}" '
                        f'src="data:image/png;base64,{base64.b64encode(b.png).decode()}">')
    atomic_write_text(path, f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                            f"<style>{style.css}</style></head><body>{''.join(body)}</body></html>")
    return path

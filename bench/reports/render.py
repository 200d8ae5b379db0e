"""The one renderer of every report: a list of :class:`Block` through the jinja2 templates of
``templates/`` to Markdown (tables by pandas/tabulate; PNGs and CSVs in a folder beside it) or to one
self-contained HTML file (base64 PNGs, CSV downloads as data: links, a table of contents with anchors)."""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..store import atomic_write_text


@dataclass
class Block:
    """One piece of a report: a heading (``h2``, a table-of-contents entry with an anchor; ``h3``), a
    paragraph (``p``; ``**bold**`` and ``code`` marks), a ``table`` (a DataFrame, downloadable as CSV), a
    ``fig`` (PNG bytes named by ``text``) or ``toc`` (the table of contents of every ``h2``, and of every
    ``h3`` with ``toc=True`` nested under the ``h2`` above it)."""

    kind: str  # "h2", "h3", "p", "table", "fig", "toc" (where the table of contents goes)
    text: str = ""
    table: pd.DataFrame | None = None
    png: bytes = b""
    toc: bool = False  # an h3 listed in the table of contents (under its h2)


@dataclass(frozen=True)
class Style:
    """How a report looks: its CSS, the text of a missing table value in HTML, where Markdown figures go
    (a folder beside the file: ``figures`` or ``<stem>_figures`` when ``per_file_figures``)."""

    css: str
    na_rep: str = "NaN"
    per_file_figures: bool = False


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
    fig.savefig(buf, format="png", dpi=160)
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


def env(trim: bool = True) -> Any:
    """The jinja2 environment of the report templates (package data under ``templates/``)."""
    import jinja2

    e = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                           autoescape=jinja2.select_autoescape(["html.j2"]), trim_blocks=trim,
                           lstrip_blocks=True, keep_trailing_newline=True)
    e.filters["inline"] = lambda text: markupsafe_inline(text)
    return e


def markupsafe_inline(text: str) -> Any:
    from markupsafe import Markup

    return Markup(md_inline(text))


def contents(blocks: list[Block]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Blocks as template dicts (unique anchors on headings) and the table of contents (the h2 headings, each
    with ``children``: the h3 headings below it marked ``toc``)."""
    seen: dict[str, int] = {}
    out, toc = [], []
    for b in blocks:
        d: dict[str, Any] = {"kind": b.kind, "text": b.text}
        if b.kind in ("h2", "h3"):  # h4: no anchor
            base = re.sub(r"[^a-z0-9]+", "-", b.text.lower()).strip("-") or "section"
            seen[base] = seen.get(base, 0) + 1
            d["anchor"] = base if seen[base] == 1 else f"{base}-{seen[base]}"
            if b.kind == "h2":
                toc.append({**d, "children": []})
            elif b.toc:
                d["toc"] = True
                if toc:
                    toc[-1]["children"].append(d)
                else:
                    toc.append({**d, "children": []})
        out.append(d)
    return out, toc


def table_name(i: int, heading: str) -> str:
    return f"table{i:02d}-{re.sub(r'[^a-z0-9]+', '-', heading.lower()).strip('-')[:60] or 'table'}.csv"


def render_markdown(blocks: list[Block], path: Path, title: str, intro: str, style: Style,
                    stamp: str = "") -> Path:
    """Write ``blocks`` as Markdown to ``path`` (atomically): tables from pandas (tabulate), each with
    its CSV, and figures as PNG files in a folder beside it."""
    fig_dir = path.parent / ((path.stem + "_figures") if style.per_file_figures else "figures")
    fig_dir.mkdir(parents=True, exist_ok=True)
    items, toc = contents(blocks)
    heading = title
    for i, (b, d) in enumerate(zip(blocks, items)):
        heading = b.text if b.kind in ("h2", "h3") else heading
        if b.kind == "table" and b.table is not None and not b.table.empty:
            name = table_name(i, heading)
            atomic_write_text(fig_dir / name, b.table.to_csv(index=False))
            d.update(md=b.table.to_markdown(index=False, floatfmt=".4g", missingval=""), rows=len(b.table),
                     csv_path=f"{fig_dir.name}/{name}")
        elif b.kind == "fig":
            name = slug(b.text)
            (fig_dir / name).write_bytes(b.png)
            d.update(path=f"{fig_dir.name}/{name}", caption=name)
    text = env(trim=False).get_template("report.md.j2").render(title=title, intro=intro, stamp=stamp, blocks=items,
                                                               toc=toc)
    atomic_write_text(path, re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text)))
    return path


def render_html(blocks: list[Block], path: Path, title: str, intro: str, style: Style, stamp: str = "") -> Path:
    """Write ``blocks`` as one self-contained HTML file to ``path`` (atomically): base64 PNGs, and every
    table's CSV as a download link (a data: URI; the file opens offline)."""
    items, toc = contents(blocks)
    heading = title
    for i, (b, d) in enumerate(zip(blocks, items)):
        heading = b.text if b.kind in ("h2", "h3") else heading
        if b.kind == "table" and b.table is not None and not b.table.empty:
            t = b.table
            d.update(html=t.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep=style.na_rep,
                                    border=0),
                     rows=len(t), csv_name=table_name(i, heading),
                     csv_b64=base64.b64encode(t.to_csv(index=False).encode()).decode())
        elif b.kind == "fig":
            d.update(b64=base64.b64encode(b.png).decode(), caption=b.text)
    text = env().get_template("report.html.j2").render(title=title, intro=intro, stamp=stamp, blocks=items,
                                                       toc=toc, css=style.css)
    atomic_write_text(path, text)
    return path

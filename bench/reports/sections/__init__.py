"""Special sections of the paper report, by the kind an experiment's ``paper:`` block names.

An experiment of a suite YAML lists extra sections in its ``paper:`` block, e.g.
``paper: {figure: ..., sections: [gap-table]}``; :data:`SECTIONS` maps each kind
to its renderer ``(experiment name, its rows, the papers' printed values) -> blocks``.
Three sections follow from the rows themselves, not from a name: the two-user
protocol's (``protocol: two-user``), the labelled-data section (no known
optimum), and the attacker-mismatch section (``evaluators: mismatch``).
Adding a section: one module here and one entry in :data:`SECTIONS`; each of its tables carries the
``evaluator`` and ``leakage is`` columns of :mod:`.trust`, one row per evaluator (seeds measured by
different evaluators never averaged), and marks a negative gap of a lower bound with :func:`.trust.gap_text`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from ..render import Block
from .chi2_vae import chi2_vae_section
from .filter_uci import table2_section, table3_section
from .gap_tables import gap_table_blocks
from .labelled import filter_table1_section, labelled_blocks, two_user_blocks
from .mismatch import mismatch_blocks, mismatch_overview
from .per_component import per_component_blocks
from .privacy_utility import privacy_utility_blocks
from .sample_complexity import sample_complexity_blocks


@dataclass(frozen=True)
class Section:
    """A section kind: its renderer, and whether it replaces the standard learned-points table and figures."""

    render: Callable[[str, pd.DataFrame, dict[str, Any]], list[Block]]
    replaces_points: bool = False


#: Section kind (named in a suite's ``paper: {sections: [...]}``) -> its renderer.
SECTIONS: dict[str, Section] = {
    "gap-table": Section(lambda name, g, ref: gap_table_blocks(g, ref)),
    "per-component": Section(lambda name, g, ref: per_component_blocks(g)),
    "sample-complexity": Section(lambda name, g, ref: sample_complexity_blocks(name, g), replaces_points=True),
    "filter-table1": Section(filter_table1_section),
    "filter-table2": Section(table2_section),
    "filter-table3": Section(table3_section),
    "privacy-utility": Section(privacy_utility_blocks),
    "chi2-vae-tables": Section(chi2_vae_section),
}

__all__ = ["SECTIONS", "Section", "labelled_blocks", "mismatch_blocks", "mismatch_overview", "two_user_blocks"]

"""Reports: gap tables, tradeoff figures, comparisons and the paper report."""

from privbench.bench.paper_report import suite_metadata, write_paper_report
from privbench.bench.report import compare, gap_table, no_optimum_table, write_html, write_markdown

__all__ = ["compare", "gap_table", "no_optimum_table", "suite_metadata", "write_html", "write_markdown",
           "write_paper_report"]

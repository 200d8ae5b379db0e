"""Reports from stored records (see each module): the ranking by the budget-respecting strict gap
(ranking.py, points.py), the shared first screen and experiment sections (overview.py, figures.py,
style.py: trust markers, palette, legend), the generic report (generic.py, tables.py), the paper report
(paper.py, paper_tables.py, sections/), A/B comparison (compare.py), all rendered by one renderer
(render.py, jinja2 templates in templates/: Markdown with PNGs and CSVs beside it, or self-contained
HTML with a table of contents and CSV downloads).

Rows with ``bound_kind == "none"`` (scenarios with no known optimum) have NaN gaps: the gap table
leaves them out, their plots have no optimum curve, and "Learned points without a known optimum"
lists their leakage, distortion and utility accuracies.
"""

from .compare import compare
from .figures import optimum_curve, tradeoff_figures
from .generic import write_generic, write_html, write_markdown
from .paper import reference_values, suite_metadata, write_paper_report
from .sections.sample_complexity import sample_complexity_frame
from .ranking import heatmap_frame, ranking_frame, ranking_table, scored_rows
from .tables import flags_table, no_optimum_table, timing_table

__all__ = ["compare", "flags_table", "heatmap_frame", "no_optimum_table", "optimum_curve", "ranking_frame",
           "ranking_table", "scored_rows",
           "reference_values", "sample_complexity_frame", "suite_metadata", "timing_table", "tradeoff_figures",
           "write_generic", "write_html", "write_markdown", "write_paper_report"]
